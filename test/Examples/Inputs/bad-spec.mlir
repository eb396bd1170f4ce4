// A spec with a shape error, for the compiler-as-a-library app.
func.func @bad(%x: tensor<4x8xf32>, %y: tensor<4x9xf32>) -> tensor<4x8xf32> {
  %z = attn.add %x, %y : tensor<4x8xf32>, tensor<4x9xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
