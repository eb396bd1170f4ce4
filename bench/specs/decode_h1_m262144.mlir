// Benchmark kernel decode_h1_m262144 (bench/kernels.py renders this file).
// Softmax attention, LLM decode, long context, 1 head, n = 1, m = 262144, dk = dv = 64:
//   O = softmax_keys(0.125 * Q K^T) V
func.func @decode_h1_m262144(%q: tensor<1x1x64xf32>, %k: tensor<1x262144x64xf32>, %v: tensor<1x262144x64xf32>) -> tensor<1x1x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125
      : tensor<1x1x64xf32>, tensor<1x262144x64xf32>, tensor<1x262144x64xf32> -> tensor<1x1x64xf32>
  return %o : tensor<1x1x64xf32>
}
