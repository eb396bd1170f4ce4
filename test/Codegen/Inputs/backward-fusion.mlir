// Backward passes of the linear forms at sizes where their products take
// the chunked and register-tiled schedules (test/Codegen/backward-fusion.test).

// Efficient attention, softmax variant: its gradient has both softmaxes as
// primitive ops, products over positions and row-local products.
func.func @efficient(%q: tensor<2048x16xf32>, %k: tensor<2048x16xf32>, %v: tensor<2048x32xf32>) -> tensor<2048x32xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2048x16xf32>, tensor<2048x16xf32>, tensor<2048x32xf32> -> tensor<2048x32xf32>
  return %o : tensor<2048x32xf32>
}

// Linear attention with elu + 1: the feature maps are inlined elementwise
// ops that the chunked products read as lhs and rhs.
func.func @linear(%q: tensor<2048x16xf32>, %k: tensor<2048x16xf32>, %v: tensor<2048x32xf32>) -> tensor<2048x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<2048x16xf32>, tensor<2048x16xf32>, tensor<2048x32xf32> -> tensor<2048x32xf32>
  return %o : tensor<2048x32xf32>
}

// Heads and a dynamic number of positions: softmax along rows and over
// positions in row blocks with guarded tails.
func.func @efficient_heads_dynamic(%q: tensor<3x?x16xf32>, %k: tensor<3x?x16xf32>, %v: tensor<3x?x24xf32>) -> tensor<3x?x24xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<3x?x16xf32>, tensor<3x?x16xf32>, tensor<3x?x24xf32> -> tensor<3x?x24xf32>
  return %o : tensor<3x?x24xf32>
}

// bf16 and f16 gradients round their outputs: no shared row tasks there
// (markRowCompanions), and they compile and agree with the reference.
func.func @efficient_bf16(%q: tensor<2049x16xbf16>, %k: tensor<3000x16xbf16>, %v: tensor<3000x40xbf16>) -> tensor<2049x40xbf16> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2049x16xbf16>, tensor<3000x16xbf16>, tensor<3000x40xbf16> -> tensor<2049x40xbf16>
  return %o : tensor<2049x40xbf16>
}

func.func @efficient_f16_out_f32(%q: tensor<2049x16xf16>, %k: tensor<3000x16xf16>, %v: tensor<3000x40xf16>) -> tensor<2049x40xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2049x16xf16>, tensor<3000x16xf16>, tensor<3000x40xf16> -> tensor<2049x40xf32>
  return %o : tensor<2049x40xf32>
}
