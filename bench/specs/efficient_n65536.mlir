// Benchmark kernel efficient_n65536 (bench/kernels.py renders this file).
// Efficient attention, softmax variant (Shen et al.), n = 65536, dk = 32, dv = 64:
//   E = softmax_features(Q) (softmax_positions(K)^T V)
func.func @efficient_n65536(%q: tensor<65536x32xf32>, %k: tensor<65536x32xf32>, %v: tensor<65536x64xf32>) -> tensor<65536x64xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<65536x32xf32>, tensor<65536x32xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  return %o : tensor<65536x64xf32>
}
