// Benchmark kernel h8_n4096_d96 (bench/kernels.py renders this file).
// Softmax attention, 8 heads, n = m = 4096, dk = dv = 96:
//   O = softmax_keys(0.10206207261596577 * Q K^T) V
func.func @h8_n4096_d96(%q: tensor<8x4096x96xf32>, %k: tensor<8x4096x96xf32>, %v: tensor<8x4096x96xf32>) -> tensor<8x4096x96xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.10206207261596577
      : tensor<8x4096x96xf32>, tensor<8x4096x96xf32>, tensor<8x4096x96xf32> -> tensor<8x4096x96xf32>
  return %o : tensor<8x4096x96xf32>
}
