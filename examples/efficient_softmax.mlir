// Efficient attention module, softmax variant (Shen et al., "Efficient
// Attention: Attention with Linear Complexities", WACV 2021, Eq. 4 and
// Table 1).
//
// Same projections and residual as the non-local block, but the product is
// associated the other way, so nothing n x n is ever formed:
//   Q = X Wq, K = X Wk, V = X Wv
//   E = rho_q(Q) (rho_k(K)^T V)            (dk x dv context, linear in n)
//   rho_q: softmax of each query over its dk = 32 features
//   rho_k: softmax of each key feature over the n positions
//   out = E + X
// This is an approximation of softmax attention (a different function),
// which the paper trains directly. n = 256 positions (16x16 map), d = 64.
func.func @efficient_softmax(%x: tensor<256x64xf32>,
                             %wq: tensor<64x32xf32> {attn.weight},
                             %wk: tensor<64x32xf32> {attn.weight},
                             %wv: tensor<64x64xf32> {attn.weight}) -> tensor<256x64xf32> {
  %q = attn.matmul %x, %wq : tensor<256x64xf32>, tensor<64x32xf32> -> tensor<256x32xf32>
  %k = attn.matmul %x, %wk : tensor<256x64xf32>, tensor<64x32xf32> -> tensor<256x32xf32>
  %v = attn.matmul %x, %wv : tensor<256x64xf32>, tensor<64x64xf32> -> tensor<256x64xf32>
  %e = attn.efficient %q, %k, %v variant softmax
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  %out = attn.add %e, %x : tensor<256x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %out : tensor<256x64xf32>
}
