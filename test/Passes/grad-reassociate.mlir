// The gradient of linear attention is linear in n after --attn-reassociate
// (issue 21, design §7): --attn-grad writes the gradient of an attention op
// with a `none`, `count over keys` or `sum over keys` step as attention ops
// again, and --attn-reassociate turns each into dk x dv context products,
// as it does the forward. No n x m (256 x 256) tensor is left.
//
// RUN: attn-opt %s --attn-grad | FileCheck %s --check-prefix=GRAD
// RUN: attn-opt %s --attn-grad --attn-reassociate --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --attn-grad --attn-cost -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-BEFORE
// RUN: attn-opt %s --attn-grad --attn-reassociate --canonicalize --cse --attn-cost -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-AFTER
// RUN: attn-opt %s --attn-grad --attn-default-pipeline --attn-cost -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-DEFAULT

// Before: dQ, dK and dV are attention ops over the transposed roles.
// GRAD-LABEL: func.func @linear_attention_grad
// GRAD-COUNT-3: attn.dot_product %{{.+}}, %{{.+}}, %{{.+}} norm [none over keys] : tensor<4x256x32xf32>, tensor<4x256x32xf32>, tensor<4x256x32xf32> -> tensor<4x256x32xf32>
// GRAD: attn.feature_map_grad elu_plus_one %arg0
// GRAD: attn.feature_map_grad elu_plus_one %arg1

// After: contexts phi(K)^T V and dN^T phi(Q) (32 x 32), never 256 x 256.
// CHECK-LABEL: func.func @linear_attention_grad
// CHECK-NOT: 256x256
// CHECK-NOT: attn.dot_product
// CHECK: attn.matmul %{{.+}}, %arg2 transpose_lhs : tensor<4x256x32xf32>, tensor<4x256x32xf32> -> tensor<4x32x32xf32>
// CHECK-NOT: 256x256
// CHECK: return

// Before: the quadratic attention ops of dQ, dK and dV (the forward output
// is not recomputed: rowsum(dO O) reads dQ's main term).
// COST-BEFORE: remark: total of @linear_attention_grad: macs = 50397184,
// After: 5 context products and products with a context (4 x 256 x 32 x 32
// MACs each; phi(K)^T V is computed with its key sums, the canonicalizer
// turns V^T phi(K) around and has dK's and dV's products share
// dN^T phi(Q)), plus the n x 1 row sums: the same after the default
// pipeline.
// COST-AFTER: remark: total of @linear_attention_grad: macs = 5308416,
// COST-DEFAULT: remark: total of @linear_attention_grad: macs = 5308416,

func.func @linear_attention(%q: tensor<4x256x32xf32>, %k: tensor<4x256x32xf32>,
                            %v: tensor<4x256x32xf32>) -> tensor<4x256x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<4x256x32xf32>, tensor<4x256x32xf32>, tensor<4x256x32xf32> -> tensor<4x256x32xf32>
  return %o : tensor<4x256x32xf32>
}
