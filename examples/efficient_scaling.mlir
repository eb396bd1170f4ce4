// Efficient attention module, scaling variant (Shen et al., "Efficient
// Attention: Attention with Linear Complexities", WACV 2021, Eq. 5-6 and
// Table 1).
//
//   Q = X Wq, K = X Wk, V = X Wv
//   E = (Q / sqrt(n)) ((K / sqrt(n))^T V)  (dk x dv context, linear in n)
//   out = E + X
// With rho_q = rho_k = x / sqrt(n) this is exactly the non-local block in
// scaling form (nonlocal_scaling.mlir), Q (K^T V) / n = (Q K^T / n) V, at a
// cost linear in n. n = 256 positions (16x16 map), d = 64.
func.func @efficient_scaling(%x: tensor<256x64xf32>,
                             %wq: tensor<64x32xf32> {attn.weight},
                             %wk: tensor<64x32xf32> {attn.weight},
                             %wv: tensor<64x64xf32> {attn.weight}) -> tensor<256x64xf32> {
  %q = attn.matmul %x, %wq : tensor<256x64xf32>, tensor<64x32xf32> -> tensor<256x32xf32>
  %k = attn.matmul %x, %wk : tensor<256x64xf32>, tensor<64x32xf32> -> tensor<256x32xf32>
  %v = attn.matmul %x, %wv : tensor<256x64xf32>, tensor<64x64xf32> -> tensor<256x64xf32>
  %e = attn.efficient %q, %k, %v variant scaling
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  %out = attn.add %e, %x : tensor<256x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %out : tensor<256x64xf32>
}
