// Benchmark kernel h8_n4096_d256 (bench/kernels.py renders this file).
// Softmax attention, 8 heads, n = m = 4096, dk = dv = 256:
//   O = softmax_keys(0.0625 * Q K^T) V
func.func @h8_n4096_d256(%q: tensor<8x4096x256xf32>, %k: tensor<8x4096x256xf32>, %v: tensor<8x4096x256xf32>) -> tensor<8x4096x256xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.0625
      : tensor<8x4096x256xf32>, tensor<8x4096x256xf32>, tensor<8x4096x256xf32> -> tensor<8x4096x256xf32>
  return %o : tensor<8x4096x256xf32>
}
