// Non-local block, scaling form (Wang et al., "Non-local Neural Networks",
// CVPR 2018), as written in Shen et al., "Efficient Attention: Attention with
// Linear Complexities" (WACV 2021), Section 3 and Table 1.
//
// Every position of a feature map attends to every other position:
//   Q = X Wq, K = X Wk, V = X Wv         (1x1 convolutions = matmuls)
//   Y = (Q K^T / n) V                     (n x n scores, quadratic in n)
//   out = Y + X                           (residual connection)
// X is a 16x16 feature map flattened to n = 256 positions with d = 64
// channels; queries and keys use d/2 = 32 channels, values d = 64. The
// projections are parameters ({attn.weight}: the cost model reports them
// apart from activations). The scaling normalization rho(Y) = Y / n is
// `count over keys`: each query row is divided by the number of keys.
func.func @nonlocal_scaling(%x: tensor<256x64xf32>,
                            %wq: tensor<64x32xf32> {attn.weight},
                            %wk: tensor<64x32xf32> {attn.weight},
                            %wv: tensor<64x64xf32> {attn.weight}) -> tensor<256x64xf32> {
  %q = attn.matmul %x, %wq : tensor<256x64xf32>, tensor<64x32xf32> -> tensor<256x32xf32>
  %k = attn.matmul %x, %wk : tensor<256x64xf32>, tensor<64x32xf32> -> tensor<256x32xf32>
  %v = attn.matmul %x, %wv : tensor<256x64xf32>, tensor<64x64xf32> -> tensor<256x64xf32>
  %y = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  %out = attn.add %y, %x : tensor<256x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %out : tensor<256x64xf32>
}
