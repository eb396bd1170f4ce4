// RUN: attn-opt --attn-grad --attn-reassociate=force=true %s
func.func @matmul_rhs_rank(%a: tensor<4x64xf32>, %b: tensor<f32>) {
  return
}