// Two specs, split as with -split-input-file (attn-lsp-server.test): the
// first is valid, the second has a shape error (V has 48 keys, K 64).
func.func @good(%q: tensor<64x32xf32>, %k: tensor<64x32xf32>, %v: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.17677669529
      : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  return %o : tensor<64x16xf32>
}

// -----

func.func @bad(%q: tensor<64x32xf32>, %k: tensor<64x32xf32>, %v: tensor<48x16xf32>) -> tensor<64x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<64x32xf32>, tensor<64x32xf32>, tensor<48x16xf32> -> tensor<64x16xf32>
  return %o : tensor<64x16xf32>
}
