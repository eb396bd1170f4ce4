// Benchmark kernel h8_n4096_d128 (bench/kernels.py renders this file).
// Softmax attention, 8 heads, n = m = 4096, dk = dv = 128:
//   O = softmax_keys(0.08838834764831843 * Q K^T) V
func.func @h8_n4096_d128(%q: tensor<8x4096x128xf32>, %k: tensor<8x4096x128xf32>, %v: tensor<8x4096x128xf32>) -> tensor<8x4096x128xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.08838834764831843
      : tensor<8x4096x128xf32>, tensor<8x4096x128xf32>, tensor<8x4096x128xf32> -> tensor<8x4096x128xf32>
  return %o : tensor<8x4096x128xf32>
}
