func.func @f(%q: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %o = attn.flash %q : tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}
