// Benchmark kernel queries16_h8_m32768 (bench/kernels.py renders this file).
// Softmax attention, 16 queries on a long context, 8 heads, n = 16, m = 32768, dk = dv = 64:
//   O = softmax_keys(0.125 * Q K^T) V
func.func @queries16_h8_m32768(%q: tensor<8x16x64xf32>, %k: tensor<8x32768x64xf32>, %v: tensor<8x32768x64xf32>) -> tensor<8x16x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125
      : tensor<8x16x64xf32>, tensor<8x32768x64xf32>, tensor<8x32768x64xf32> -> tensor<8x16x64xf32>
  return %o : tensor<8x16x64xf32>
}
