// Benchmark kernel efficient_n16384 (bench/kernels.py renders this file).
// Efficient attention, softmax variant (Shen et al.), n = 16384, dk = 32, dv = 64:
//   E = softmax_features(Q) (softmax_positions(K)^T V)
func.func @efficient_n16384(%q: tensor<16384x32xf32>, %k: tensor<16384x32xf32>, %v: tensor<16384x64xf32>) -> tensor<16384x64xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<16384x32xf32>, tensor<16384x32xf32>, tensor<16384x64xf32> -> tensor<16384x64xf32>
  return %o : tensor<16384x64xf32>
}
