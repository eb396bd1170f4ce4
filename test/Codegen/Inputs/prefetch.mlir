// attn.efficient with rows of V 256 bytes long (4 cache lines) and enough
// positions for chunk tasks (prefetch.test).
func.func @efficient_prefetch(%q: tensor<64x8xf32>, %k: tensor<4096x8xf32>, %v: tensor<4096x64xf32>) -> tensor<64x64xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<64x8xf32>, tensor<4096x8xf32>, tensor<4096x64xf32> -> tensor<64x64xf32>
  return %o : tensor<64x64xf32>
}
