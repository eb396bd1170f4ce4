// Benchmark kernel softmax_h8_n1024 (bench/kernels.py renders this file).
// Softmax attention, 8 heads, n = m = 1024, dk = dv = 64:
//   O = softmax_keys(0.125 * Q K^T) V
func.func @softmax_h8_n1024(%q: tensor<8x1024x64xf32>, %k: tensor<8x1024x64xf32>, %v: tensor<8x1024x64xf32>) -> tensor<8x1024x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125
      : tensor<8x1024x64xf32>, tensor<8x1024x64xf32>, tensor<8x1024x64xf32> -> tensor<8x1024x64xf32>
  return %o : tensor<8x1024x64xf32>
}
