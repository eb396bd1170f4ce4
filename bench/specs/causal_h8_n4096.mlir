// Benchmark kernel causal_h8_n4096 (bench/kernels.py renders this file).
// Softmax attention, causal prefill, 8 heads, n = m = 4096, dk = dv = 64:
//   O = softmax_keys(0.125 * Q K^T) V (causal: key j visible to query i iff j <= i)
func.func @causal_h8_n4096(%q: tensor<8x4096x64xf32>, %k: tensor<8x4096x64xf32>, %v: tensor<8x4096x64xf32>) -> tensor<8x4096x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 causal
      : tensor<8x4096x64xf32>, tensor<8x4096x64xf32>, tensor<8x4096x64xf32> -> tensor<8x4096x64xf32>
  return %o : tensor<8x4096x64xf32>
}
