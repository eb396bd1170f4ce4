// Benchmark kernel efficient_n4096 (bench/kernels.py renders this file).
// Efficient attention, softmax variant (Shen et al.), n = 4096, dk = 32, dv = 64:
//   E = softmax_features(Q) (softmax_positions(K)^T V)
func.func @efficient_n4096(%q: tensor<4096x32xf32>, %k: tensor<4096x32xf32>, %v: tensor<4096x64xf32>) -> tensor<4096x64xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<4096x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %o : tensor<4096x64xf32>
}
