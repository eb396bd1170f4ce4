// RUN: attn-opt --canonicalize --cse --attn-cost %s
func.func @matmul_rhs_rank(%a: tensor<65536x64xf32>, %s: tensor<complex<f32>>) {
  return
}