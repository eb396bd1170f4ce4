// A forward with an additive mask that hides every key but one from row 3
// (row 3) and every key (row 1): row 1 has nothing visible, so its lse is
// +inf and its output 0. (--attn-grad saves nothing for masked attention,
// whose gradient is the primitive form; this checks the forward's lse.)
func.func @masked_rows(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>) {
  %mask = arith.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0xFF800000, 0.0, 0xFF800000, 0.0, 0.0, 0xFF800000], [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0.0]]> : tensor<4x6xf32>
  %o, %lse = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 5.000000e-01 with_lse
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x4xf32>, tensor<4x6xf32> -> tensor<4x4xf32>, tensor<4xf32>
  return %o, %lse : tensor<4x4xf32>, tensor<4xf32>
}
