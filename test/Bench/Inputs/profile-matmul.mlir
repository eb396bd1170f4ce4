// A product that spends its time in one register-tile loop (loop-profile.test).
func.func @product(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %c = attn.matmul %a, %b : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
  return %c : tensor<512x512xf32>
}
