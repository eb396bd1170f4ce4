func.func @f(%q: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %o = attn.dot_product %q, %q, %q norm [softmax over rows]
      : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}
