// RUN: attn-opt --attn-grad %s
func.func @unused(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %a : tensor<4x3xf32>
}