// Causal linear attention at a dynamic n (test/Codegen/causal-dynamic.test):
// --attn-reassociate pads phi(Q), phi(K) and V with zero rows to a run-time
// multiple of the chunk, and --attn-grad differentiates that form. Each of
// none / sum over keys, with a feature map, eps = 0, n != m both ways and K
// and V shared by the heads.

// n = m dynamic, elu+1, eps = 0: the padded rows are dropped before the
// division, so no row divides 0 by 0.
func.func @sum_elu(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] scale 0.5 feature_map elu_plus_one causal
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// 100 queries and m keys: m < 100 leaves the last queries seeing all keys
// (and padded zero keys), m > 100 keys no query sees.
func.func @none_static_queries(%q: tensor<100x4xf32>, %k: tensor<?x4xf32>, %v: tensor<?x3xf32>) -> tensor<100x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 0.25 causal
      : tensor<100x4xf32>, tensor<?x4xf32>, tensor<?x3xf32> -> tensor<100x3xf32>
  return %o : tensor<100x3xf32>
}

// n queries of two heads and 70 keys shared by them, relu with eps.
func.func @sum_relu_static_keys(%q: tensor<2x?x4xf32>, %k: tensor<70x4xf32>, %v: tensor<70x3xf32>) -> tensor<2x?x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-01] feature_map relu causal
      : tensor<2x?x4xf32>, tensor<70x4xf32>, tensor<70x3xf32> -> tensor<2x?x3xf32>
  return %o : tensor<2x?x3xf32>
}
