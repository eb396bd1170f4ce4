// RUN: attn-opt %s --attn-reassociate | FileCheck %s

// The opt-in to bf16 products (attn.allow_bf16_products, docs/precision.md)
// permits rounding what the op computes before its products; the linear
// forms' products are attn.matmul, so the rewrite puts the attribute on
// each of them (code generation then decides where pairs pay). Other ops of
// the rewrite (the key sums, the division) do not take it.

// CHECK-LABEL: func.func @linear
// CHECK: %[[PQ:.+]] = attn.feature_map elu_plus_one
// CHECK: %[[PK:.+]] = attn.feature_map elu_plus_one
// CHECK: attn.matmul %[[PK]], %{{.+}} transpose_lhs {attn.allow_bf16_products}
// CHECK: %[[SUMS:.+]] = attn.reduce_sum %[[PK]] dim 0 :
// CHECK: attn.matmul %[[PQ]], %{{.+}} {attn.allow_bf16_products}
// CHECK: attn.matmul %[[PQ]], %[[SUMS]] transpose_rhs {attn.allow_bf16_products}
// CHECK: attn.div %{{.+}}, %{{.+}} :
func.func @linear(%q: tensor<4096x32xf32>, %k: tensor<4096x32xf32>, %v: tensor<4096x64xf32>) -> tensor<4096x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one {attn.allow_bf16_products}
      : tensor<4096x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %o : tensor<4096x64xf32>
}

// Without the attribute the products have none.
// CHECK-LABEL: func.func @linear_default
// CHECK-NOT: allow_bf16_products
// CHECK: return
func.func @linear_default(%q: tensor<4096x32xf32>, %k: tensor<4096x32xf32>, %v: tensor<4096x64xf32>) -> tensor<4096x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<4096x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %o : tensor<4096x64xf32>
}

// Causal: the chunk states phi(K)^T V and the products of phi(Q) with
// their prefix sums; the blocks within a chunk stay an attn.dot_product
// (without the attribute: its weights are not rounded).
// CHECK-LABEL: func.func @causal
// CHECK: attn.dot_product {{.+}} norm [] causal :
// CHECK: attn.matmul {{.+}} transpose_lhs {attn.allow_bf16_products}
// CHECK: attn.prefix_sum
// CHECK: attn.matmul {{.+}} {attn.allow_bf16_products}
func.func @causal(%q: tensor<1024x32xf32>, %k: tensor<1024x32xf32>, %v: tensor<1024x64xf32>) -> tensor<1024x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal {attn.allow_bf16_products}
      : tensor<1024x32xf32>, tensor<1024x32xf32>, tensor<1024x64xf32> -> tensor<1024x64xf32>
  return %o : tensor<1024x64xf32>
}

// Dynamic sizes: the linear branch's products take it, and the quadratic
// branch keeps it on its attn.dot_product.
// CHECK-LABEL: func.func @dynamic
// CHECK: scf.if
// CHECK: attn.matmul {{.+}} transpose_lhs {attn.allow_bf16_products}
// CHECK: } else {
// CHECK: attn.dot_product {{.+}} {attn.allow_bf16_products}
func.func @dynamic(%q: tensor<?x32xf32>, %k: tensor<?x32xf32>, %v: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one {attn.allow_bf16_products}
      : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}
