// Kernels the AOT GoogleTest (CodegenAotTest.cpp) links through
// attn_add_kernel.
func.func @aot_attention(%q: tensor<5x4xf32>, %k: tensor<7x4xf32>,
                         %v: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.5 causal
      : tensor<5x4xf32>, tensor<7x4xf32>, tensor<7x3xf32> -> tensor<5x3xf32>
  return %o : tensor<5x3xf32>
}

func.func @aot_dynamic_add(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>)
    -> tensor<?x3xf32> {
  %s = attn.add %a, %b : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
  return %s : tensor<?x3xf32>
}
