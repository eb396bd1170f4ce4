// Leading dims that are dynamic and 1 at run time stretch, as numpy's (and
// the reference runtime's) broadcasting does: test/Codegen/dynamic-broadcast.test.

// Values of batch 1 against keys of batch 3 (queries: a static 1).
func.func @attention(%q: tensor<1x7x16xf32>, %k: tensor<?x9x16xf32>,
                     %v: tensor<?x9x16xf32>) -> tensor<?x7x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25
      : tensor<1x7x16xf32>, tensor<?x9x16xf32>, tensor<?x9x16xf32>
      -> tensor<?x7x16xf32>
  return %o : tensor<?x7x16xf32>
}

// A mask of batch 1 for queries of batch 2, every dim dynamic.
func.func @masked(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>,
                  %v: tensor<?x?x8xf32>, %mask: tensor<?x?x?xf32> {attn.no_grad})
    -> tensor<?x?x8xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys]
      : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x?xf32>
      -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}

// Elementwise and a batched product, either side of batch 1.
func.func @add(%a: tensor<?x5x4xf32>, %b: tensor<?x5x4xf32>) -> tensor<?x5x4xf32> {
  %c = attn.add %a, %b : tensor<?x5x4xf32>, tensor<?x5x4xf32> -> tensor<?x5x4xf32>
  return %c : tensor<?x5x4xf32>
}

func.func @matmul(%a: tensor<?x5x6xf32>, %b: tensor<?x6x7xf32>) -> tensor<?x5x7xf32> {
  %c = attn.matmul %a, %b : tensor<?x5x6xf32>, tensor<?x6x7xf32> -> tensor<?x5x7xf32>
  return %c : tensor<?x5x7xf32>
}

// The gradient op itself: Q, K, V broadcast; the cotangent has the
// forward result's shape and does not broadcast.
func.func @grad_op(%q: tensor<?x7x16xf32>, %k: tensor<?x9x16xf32>,
                          %v: tensor<?x9x16xf32>, %dO: tensor<?x7x16xf32>)
    -> (tensor<?x7x16xf32>, tensor<?x9x16xf32>, tensor<?x9x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %dO scale 0.25
      : tensor<?x7x16xf32>, tensor<?x9x16xf32>, tensor<?x9x16xf32>, tensor<?x7x16xf32>
      -> tensor<?x7x16xf32>, tensor<?x9x16xf32>, tensor<?x9x16xf32>
  return %dq, %dk, %dv : tensor<?x7x16xf32>, tensor<?x9x16xf32>, tensor<?x9x16xf32>
}
