// Benchmark kernel linear_n65536 (bench/kernels.py renders this file).
// Linear attention (Katharopoulos et al.), n = m = 65536, dk = 32, dv = 64, phi = elu + 1:
//   O = phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1)
func.func @linear_n65536(%q: tensor<65536x32xf32>, %k: tensor<65536x32xf32>, %v: tensor<65536x64xf32>) -> tensor<65536x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<65536x32xf32>, tensor<65536x32xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  return %o : tensor<65536x64xf32>
}
