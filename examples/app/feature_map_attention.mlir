// The two kernels examples/app links, for a 128x128 feature map flattened to
// n = 16384 positions, with dk = 32 query/key channels and dv = 64 value
// channels.
//
// @efficient_map: efficient attention, softmax variant (Shen et al., WACV
//   2021): rho_q(Q) (rho_k(K)^T V), linear in n (a 32x64 context).
// @softmax_map: exact softmax attention softmax(Q K^T / sqrt(dk)) V,
//   quadratic in n (16384 x 16384 scores, computed a query block at a time).
func.func @efficient_map(%q: tensor<16384x32xf32>, %k: tensor<16384x32xf32>,
                         %v: tensor<16384x64xf32>) -> tensor<16384x64xf32> {
  %e = attn.efficient %q, %k, %v variant softmax
      : tensor<16384x32xf32>, tensor<16384x32xf32>, tensor<16384x64xf32>
      -> tensor<16384x64xf32>
  return %e : tensor<16384x64xf32>
}

func.func @softmax_map(%q: tensor<16384x32xf32>, %k: tensor<16384x32xf32>,
                       %v: tensor<16384x64xf32>) -> tensor<16384x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      scale 0.17677669529663687
      : tensor<16384x32xf32>, tensor<16384x32xf32>, tensor<16384x64xf32>
      -> tensor<16384x64xf32>
  return %o : tensor<16384x64xf32>
}
