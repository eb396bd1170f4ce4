// Linear attention (Katharopoulos et al., "Transformers are RNNs: Fast
// Autoregressive Transformers with Linear Attention", ICML 2020).
//
// The softmax kernel exp(q . k) is replaced by phi(q) . phi(k) with the
// feature map phi(x) = elu(x) + 1 > 0, and each row is divided by its sum:
//   O_i = sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j)
// = norm [sum over keys] feature_map elu_plus_one. The rewrite
// phi(Q) (phi(K)^T V) ./ phi(Q) (phi(K)^T 1) makes it linear in n.
// 4 heads, n = m = 256 positions, dk = dv = 32.
func.func @linear_attention(%q: tensor<4x256x32xf32>, %k: tensor<4x256x32xf32>,
                            %v: tensor<4x256x32xf32>) -> tensor<4x256x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<4x256x32xf32>, tensor<4x256x32xf32>, tensor<4x256x32xf32> -> tensor<4x256x32xf32>
  return %o : tensor<4x256x32xf32>
}
