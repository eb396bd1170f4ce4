// RUN: attn-opt %s --attn-reassociate | FileCheck %s
// RUN: attn-opt %s --attn-reassociate=force | FileCheck %s --check-prefix=FORCE
// RUN: attn-run %s --verify-rewrites attn-reassociate --dynamic-size 4 --random 2 | FileCheck %s --check-prefix=SMALL
// RUN: attn-run %s --verify-rewrites attn-reassociate --dynamic-size 300 --random 2 | FileCheck %s --check-prefix=LARGE

// With dynamic sizes the pass emits both forms under an scf.if whose
// condition evaluates the MAC formulas of passes/CostModel.h on tensor.dim
// values: linear < quadratic. attn-run evaluates both sizes: at n = m = 4
// the quadratic branch runs (bit-identical), at 300 the linear one (exact
// within 1e-5). `force` rewrites without the choice.

// CHECK-LABEL: func.func @dynamic_linear
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<?x16xf32>, %[[K:[a-z0-9_]+]]: tensor<?x16xf32>, %[[V:[a-z0-9_]+]]: tensor<?x32xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[Q]], %{{.+}} : tensor<?x16xf32>
// CHECK: %[[M:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x16xf32>
// quadratic = n * m * (dk + dv), with dk + dv = 48 folded:
// CHECK-NEXT: %[[NM:.+]] = arith.muli %[[N]], %[[M]] : index
// CHECK-NEXT: %[[C48:.+]] = arith.constant 48 : index
// CHECK-NEXT: %[[QUAD:.+]] = arith.muli %[[NM]], %[[C48]] : index
// linear = m * dk * dv + n * dk * dv + n * dk (row sums):
// CHECK: %[[LIN:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: %[[CHEAPER:.+]] = arith.cmpi ult, %{{.+}}, %[[QUAD]] : index
// CHECK-NEXT: %[[R:.+]] = scf.if %[[CHEAPER]] -> (tensor<?x32xf32>) {
// CHECK-NEXT: %[[PQ:.+]] = attn.feature_map relu %[[Q]]
// CHECK-NEXT: %[[PK:.+]] = attn.feature_map relu %[[K]]
// CHECK-NEXT: %[[CTX:.+]] = attn.matmul %[[PK]], %[[V]] transpose_lhs : tensor<?x16xf32>, tensor<?x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[KSUM:.+]] = attn.reduce_sum %[[PK]] dim 0 : tensor<?x16xf32> -> tensor<1x16xf32>
// CHECK-NEXT: %[[NUM:.+]] = attn.matmul %[[PQ]], %[[CTX]]
// CHECK-NEXT: %[[DEN:.+]] = attn.matmul %[[PQ]], %[[KSUM]] transpose_rhs
// CHECK-NEXT: %[[LINEAR:.+]] = attn.div %[[NUM]], %[[DEN]]
// CHECK-NEXT: scf.yield %[[LINEAR]] : tensor<?x32xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[QUADRATIC:.+]] = attn.dot_product %[[Q]], %[[K]], %[[V]] norm [sum over keys] feature_map relu
// CHECK-NEXT: scf.yield %[[QUADRATIC]] : tensor<?x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
// FORCE-LABEL: func.func @dynamic_linear
// FORCE-NOT: scf.if
// FORCE: attn.div
// FORCE-NEXT: return
// SMALL: verify-rewrites: @dynamic_linear max abs err = 0, max rel err = 0 (exact)
// LARGE: verify-rewrites: @dynamic_linear max abs err = {{[0-9.]+e-1[0-9]}}, max rel err = {{.*}} (exact)
func.func @dynamic_linear(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map relu
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x32xf32> -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}
