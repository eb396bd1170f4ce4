// One-element intermediates (single key, single feature): a buffer of one
// f32 (or f16 widened to f32) that a vectorized stage stores into
// (test/Codegen/single-word-allocation.test).
func.func @queries_softmax(%x: tensor<3x1xf32>, %mk: tensor<1x1xf32>, %mv: tensor<1x16xf32>) -> tensor<3x16xf32> {
  %o = attn.dot_product %x, %mk, %mv norm [softmax over queries] : tensor<3x1xf32>, tensor<1x1xf32>, tensor<1x16xf32> -> tensor<3x16xf32>
  return %o : tensor<3x16xf32>
}
func.func @external(%x: tensor<3x1xf32>, %mk: tensor<1x1xf32>, %mv: tensor<1x16xf32>) -> tensor<3x16xf32> {
  %o = attn.external %x, %mk, %mv : tensor<3x1xf32>, tensor<1x1xf32>, tensor<1x16xf32> -> tensor<3x16xf32>
  return %o : tensor<3x16xf32>
}
func.func @keys_softmax(%q: tensor<1x1xf32>, %k: tensor<1x1xf32>, %v: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] : tensor<1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32> -> tensor<1x1xf32>
  return %o : tensor<1x1xf32>
}
func.func @queries_softmax_f16(%x: tensor<3x1xf16>, %mk: tensor<1x1xf16>, %mv: tensor<1x16xf16>) -> tensor<3x16xf16> {
  %o = attn.dot_product %x, %mk, %mv norm [softmax over queries] : tensor<3x1xf16>, tensor<1x1xf16>, tensor<1x16xf16> -> tensor<3x16xf16>
  return %o : tensor<3x16xf16>
}
