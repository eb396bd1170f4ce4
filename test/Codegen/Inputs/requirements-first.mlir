// Dynamic leading dims that must agree at run time (the broadcast rule:
// 1 or equal; a dynamic 1 does not stretch), for
// test/Codegen/requirements-first.test.
func.func @batched(%q: tensor<1x7x16xf32>, %k: tensor<?x9x16xf32>,
                   %v: tensor<?x9x16xf32>) -> tensor<?x7x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25
      : tensor<1x7x16xf32>, tensor<?x9x16xf32>, tensor<?x9x16xf32>
      -> tensor<?x7x16xf32>
  return %o : tensor<?x7x16xf32>
}
