// Benchmark kernel h8_n4096_dk128_dv64 (bench/kernels.py renders this file).
// Softmax attention, 8 heads, n = m = 4096, dk = 128, dv = 64:
//   O = softmax_keys(0.08838834764831843 * Q K^T) V
func.func @h8_n4096_dk128_dv64(%q: tensor<8x4096x128xf32>, %k: tensor<8x4096x128xf32>, %v: tensor<8x4096x64xf32>) -> tensor<8x4096x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.08838834764831843
      : tensor<8x4096x128xf32>, tensor<8x4096x128xf32>, tensor<8x4096x64xf32> -> tensor<8x4096x64xf32>
  return %o : tensor<8x4096x64xf32>
}
