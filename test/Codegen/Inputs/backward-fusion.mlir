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
