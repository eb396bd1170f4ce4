// External attention (Guo et al., "Beyond Self-attention: External Attention
// using Two Linear Layers for Visual Tasks", EANet, TPAMI 2022).
//
// Instead of attending to each other, positions attend to S learned memory
// slots shared by the whole data set:
//   A = X Mk^T                              (n x S, linear in n)
//   A <- softmax over the n positions (per slot)
//   A <- A / (1e-9 + sum over the S slots)  (per position: double norm)
//   out = A Mv
// X: 16x16 map, n = 256 positions, d = 64; S = 16 slots. The memories are
// parameters ({attn.weight}). `-canonicalize` rewrites attn.external to
// attn.dot_product norm [softmax over queries, sum over keys eps 1e-9].
func.func @external_attention(%x: tensor<256x64xf32>,
                              %mk: tensor<16x64xf32> {attn.weight},
                              %mv: tensor<16x64xf32> {attn.weight}) -> tensor<256x64xf32> {
  %out = attn.external %x, %mk, %mv
      : tensor<256x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<256x64xf32>
  return %out : tensor<256x64xf32>
}
