// Benchmark kernel external_n4096 (bench/kernels.py renders this file).
// External attention (EANet), n = 4096, d = 512, S = 64 slots:
//   A = X Mk^T; softmax over positions; A / (1e-9 + sum over slots); O = A Mv
func.func @external_n4096(%x: tensor<4096x512xf32>, %mk: tensor<64x512xf32>, %mv: tensor<64x512xf32>) -> tensor<4096x512xf32> {
  %o = attn.external %x, %mk, %mv
      : tensor<4096x512xf32>, tensor<64x512xf32>, tensor<64x512xf32> -> tensor<4096x512xf32>
  return %o : tensor<4096x512xf32>
}
