// Benchmark kernel linear_n4096 (bench/kernels.py renders this file).
// Linear attention (Katharopoulos et al.), n = m = 4096, dk = 32, dv = 64, phi = elu + 1:
//   O = phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1)
func.func @linear_n4096(%q: tensor<4096x32xf32>, %k: tensor<4096x32xf32>, %v: tensor<4096x64xf32>) -> tensor<4096x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<4096x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %o : tensor<4096x64xf32>
}
