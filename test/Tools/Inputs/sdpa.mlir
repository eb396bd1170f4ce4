// A small causal attention spec the attn-run tests evaluate.
func.func @sdpa(%q: tensor<2x4x3xf32>, %k: tensor<2x4x3xf32>,
                %v: tensor<2x4x5xf32>) -> tensor<2x4x5xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.5 causal
      : tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4x5xf32>
      -> tensor<2x4x5xf32>
  return %o : tensor<2x4x5xf32>
}

func.func @dynamic(%q: tensor<?x3xf32>, %k: tensor<?x3xf32>,
                   %v: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x5xf32> -> tensor<?x5xf32>
  return %o : tensor<?x5xf32>
}

func.func @unsupported(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

func.func @huge(%x: tensor<100000x100000x100000xf32>) -> tensor<100000x100000x100000xf32> {
  return %x : tensor<100000x100000x100000xf32>
}
