// Benchmark kernel h32_n512_d64 (bench/kernels.py renders this file).
// Softmax attention, 32 heads, n = m = 512, dk = dv = 64:
//   O = softmax_keys(0.125 * Q K^T) V
func.func @h32_n512_d64(%q: tensor<32x512x64xf32>, %k: tensor<32x512x64xf32>, %v: tensor<32x512x64xf32>) -> tensor<32x512x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125
      : tensor<32x512x64xf32>, tensor<32x512x64xf32>, tensor<32x512x64xf32> -> tensor<32x512x64xf32>
  return %o : tensor<32x512x64xf32>
}
