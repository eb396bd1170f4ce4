// Small kernels for the tune-*.test files: cheap to compile, so a few
// candidates fit a budget of seconds.
func.func @tune_attention(%q: tensor<2x64x16xf32>, %k: tensor<2x64x16xf32>,
                          %v: tensor<2x64x16xf32>) -> tensor<2x64x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25
      : tensor<2x64x16xf32>, tensor<2x64x16xf32>, tensor<2x64x16xf32> -> tensor<2x64x16xf32>
  return %o : tensor<2x64x16xf32>
}

// Dynamic positions: tuning needs the size to tune for.
func.func @tune_dynamic(%a: tensor<?x16xf32>, %b: tensor<16x16xf32>) -> tensor<?x16xf32> {
  %c = attn.matmul %a, %b : tensor<?x16xf32>, tensor<16x16xf32> -> tensor<?x16xf32>
  return %c : tensor<?x16xf32>
}

// The same attention on bf16 tensors: a tuning-cache key of its own.
func.func @tune_attention_bf16(%q: tensor<2x64x16xbf16>, %k: tensor<2x64x16xbf16>,
                               %v: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25
      : tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16> -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}
