// RUN: attn-opt %s -split-input-file --attn-grad=save-statistics=1 | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-grad | FileCheck %s --check-prefix=RECOMPUTE
//
// --attn-grad=save-statistics=1 and attn.efficient (docs/training.md,
// "Saved statistics"): a softmax attn.efficient on f32 or f64 operands with
// the same leading dims gets `with_context`, @f returns the normalized
// context C = softmax_positions(K)^T V and the key softmax's log-sum-exp
// after its own results ({attn.saved_statistics = "context"} and
// "key_lse", in the order of the ops with the lse and outputs of softmax
// attention), and @f_grad takes them after the cotangents. Its gradient
// then has four products, none of which computes C: dC = RQ^T dE,
// dRQ = dE C^T, dV = RK dC, dRK = V dC^T, with RK = exp(K - lse)
// (attn.softmax_from_lse: no max or sum over the positions); the column
// softmax's backward takes s = rowsum(dC o C) (dk x dv values) when the
// shapes are static. Without the option C is recomputed (RK^T V).

// Batched; the saved context is (2, 8, 12).
// CHECK-LABEL: func.func @layer(
// CHECK-SAME: -> (tensor<2x40x12xf32>, tensor<2x8x12xf32> {attn.saved_statistics = "context"}, tensor<2x1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK: %[[E:[a-z0-9_]+]], %[[S:[a-z0-9_]+]]:2 = attn.efficient %arg0, %arg1, %arg2 variant softmax with_context {{.*}} -> tensor<2x40x12xf32>, tensor<2x8x12xf32>, tensor<2x1x8xf32>
// CHECK: return %[[E]], %[[S]]#0, %[[S]]#1
// CHECK-LABEL: func.func @layer_grad(
// CHECK-SAME: %arg3: tensor<2x40x12xf32>, %arg4: tensor<2x8x12xf32> {attn.saved_statistics = "context"}, %arg5: tensor<2x1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK: %[[RQ:.+]] = attn.normalize softmax %arg0 dim 2
// CHECK: %[[DC:.+]] = attn.matmul %[[RQ]], %arg3 transpose_lhs {{.*}} -> tensor<2x8x12xf32>
// CHECK: %[[DRQ:.+]] = attn.matmul %arg3, %arg4 transpose_rhs {{.*}} -> tensor<2x40x8xf32>
// CHECK: %[[RK:.+]] = attn.softmax_from_lse %arg1, %arg5 dim 1 : tensor<2x56x8xf32>, tensor<2x1x8xf32>
// CHECK: %[[DV:.+]] = attn.matmul %[[RK]], %[[DC]] :
// CHECK: %[[DRK:.+]] = attn.matmul %arg2, %[[DC]] transpose_rhs
// CHECK: %[[W:.+]] = attn.mul %[[DC]], %arg4 : tensor<2x8x12xf32>
// CHECK: attn.reduce_sum %[[W]] dim 2 : tensor<2x8x12xf32> -> tensor<2x8x1xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<2x1x8xf32>
// CHECK-NOT: attn.matmul
// CHECK: return
// RECOMPUTE-LABEL: func.func @layer(
// RECOMPUTE-SAME: -> tensor<2x40x12xf32> {
// RECOMPUTE-NOT: with_context
// RECOMPUTE-LABEL: func.func @layer_grad(
// RECOMPUTE: %[[RK:.+]] = attn.normalize softmax %arg1 dim 1
// RECOMPUTE: attn.matmul %[[RK]], %arg2 transpose_lhs {{.*}} -> tensor<2x8x12xf32>
func.func @layer(%q: tensor<2x40x8xf32>, %k: tensor<2x56x8xf32>, %v: tensor<2x56x12xf32>) -> tensor<2x40x12xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<2x40x8xf32>, tensor<2x56x8xf32>, tensor<2x56x12xf32> -> tensor<2x40x12xf32>
  return %o : tensor<2x40x12xf32>
}

// -----

// A softmax attention and an efficient attention: the saved values in the
// order of their ops (lse, output, then context).
// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME: -> (tensor<16x8xf32>, tensor<16xf32> {attn.saved_statistics = "lse"}, tensor<16x8xf32> {attn.saved_statistics = "output"}, tensor<8x8xf32> {attn.saved_statistics = "context"}, tensor<1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK-LABEL: func.func @two_layers_grad(
// CHECK-SAME: %arg3: tensor<16x8xf32>, %arg4: tensor<16xf32> {attn.saved_statistics = "lse"}, %arg5: tensor<16x8xf32> {attn.saved_statistics = "output"}, %arg6: tensor<8x8xf32> {attn.saved_statistics = "context"}, %arg7: tensor<1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK: attn.matmul %{{.+}}, %arg6 transpose_rhs
// CHECK: attn.attention_grad {{.*}} lse %arg4 output %arg5
func.func @two_layers(%x: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %a = attn.dot_product %x, %k, %v norm [softmax over keys] : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %e = attn.efficient %a, %k, %v variant softmax : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return %e : tensor<16x8xf32>
}

// -----

// Dynamic positions: the column softmax's backward keeps its sum over the
// positions (reduce_sum dim 0 of an n x dk value).
// CHECK-LABEL: func.func @dynamic_grad(
// CHECK-SAME: %arg4: tensor<8x12xf32> {attn.saved_statistics = "context"}, %arg5: tensor<1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK: %[[RK:.+]] = attn.softmax_from_lse %arg1, %arg5 dim 0 : tensor<?x8xf32>, tensor<1x8xf32>
// CHECK: attn.reduce_sum %{{.+}} dim 0 : tensor<?x8xf32> -> tensor<1x8xf32>
func.func @dynamic(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x12xf32>) -> tensor<?x12xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x12xf32> -> tensor<?x12xf32>
  return %o : tensor<?x12xf32>
}

// -----

// A context that f returns itself: its cotangent (%arg4) adds to dC, and
// the same value is saved after it.
// CHECK-LABEL: func.func @returns_context(
// CHECK-SAME: -> (tensor<24x12xf32>, tensor<8x12xf32>, tensor<8x12xf32> {attn.saved_statistics = "context"}, tensor<1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK: return %[[E:[a-z0-9_]+]], %[[S:[a-z0-9_]+]]#0, %[[S]]#0, %[[S]]#1
// CHECK-LABEL: func.func @returns_context_grad(
// CHECK-SAME: %arg3: tensor<24x12xf32>, %arg4: tensor<8x12xf32>, %arg5: tensor<8x12xf32> {attn.saved_statistics = "context"}, %arg6: tensor<1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK: %[[DC:.+]] = attn.matmul %{{.+}}, %arg3 transpose_lhs
// CHECK: attn.add %[[DC]], %arg4 : tensor<8x12xf32>, tensor<8x12xf32>
func.func @returns_context(%q: tensor<24x8xf32>, %k: tensor<30x8xf32>, %v: tensor<30x12xf32>) -> (tensor<24x12xf32>, tensor<8x12xf32>) {
  %o, %c, %lse = attn.efficient %q, %k, %v variant softmax with_context : tensor<24x8xf32>, tensor<30x8xf32>, tensor<30x12xf32> -> tensor<24x12xf32>, tensor<8x12xf32>, tensor<1x8xf32>
  return %o, %c : tensor<24x12xf32>, tensor<8x12xf32>
}

// -----

// Not saved (recomputed as without the option): the scaling variant,
// broadcast K and V.
// CHECK-LABEL: func.func @not_saved(
// CHECK-SAME: -> (tensor<16x8xf32>, tensor<2x16x8xf32>) {
// CHECK-NOT: with_context
// CHECK-LABEL: func.func @not_saved_grad(
// CHECK-NOT: attn.saved_statistics
// CHECK: return
func.func @not_saved(%x: tensor<16x8xf32>, %xb: tensor<2x16x8xf32>) -> (tensor<16x8xf32>, tensor<2x16x8xf32>) {
  %s = attn.efficient %x, %x, %x variant scaling : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %b = attn.efficient %xb, %x, %x variant softmax : tensor<2x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<2x16x8xf32>
  return %s, %b : tensor<16x8xf32>, tensor<2x16x8xf32>
}

// -----

// bf16 throughout: @f computes the op in f32 and rounds its result once;
// the context and key lse are saved in f32 (per problem: dk x dv and dk
// values), so the gradient makes no pass over K and V for them.
// CHECK-LABEL: func.func @bf16(
// CHECK-SAME: -> (tensor<16x8xbf16>, tensor<8x8xf32> {attn.saved_statistics = "context"}, tensor<1x8xf32> {attn.saved_statistics = "key_lse"}) {
// CHECK: %[[E:.*]], %{{.*}}:2 = attn.efficient {{.*}} with_context : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>, tensor<8x8xf32>, tensor<1x8xf32>
// CHECK: arith.truncf %[[E]] : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK-LABEL: func.func @bf16_grad(
// CHECK-SAME: tensor<8x8xf32> {attn.saved_statistics = "context"}, %{{.*}}: tensor<1x8xf32> {attn.saved_statistics = "key_lse"}) -> (tensor<16x8xbf16>, tensor<16x8xbf16>, tensor<16x8xbf16>)
// CHECK: attn.softmax_from_lse
func.func @bf16(%q: tensor<16x8xbf16>, %k: tensor<16x8xbf16>, %v: tensor<16x8xbf16>) -> tensor<16x8xbf16> {
  %r = attn.efficient %q, %k, %v variant softmax : tensor<16x8xbf16>, tensor<16x8xbf16>, tensor<16x8xbf16> -> tensor<16x8xbf16>
  return %r : tensor<16x8xbf16>
}

// -----

// Mixed precision (bf16 operands, an f32 result): @f computes the op in
// f32 (as --attn-widen-to-f32 would) and saves an f32 context and key lse;
// the bf16 gradients are rounded once, at the end.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: -> (tensor<24x12xf32>, tensor<8x12xf32> {attn.saved_statistics = "context"}, tensor<1x8xf32> {attn.saved_statistics = "key_lse"}) {
// CHECK-DAG: %[[Q:.*]] = arith.extf %arg0 : tensor<24x8xbf16> to tensor<24x8xf32>
// CHECK-DAG: %[[K:.*]] = arith.extf %arg1 : tensor<30x8xbf16> to tensor<30x8xf32>
// CHECK-DAG: %[[V:.*]] = arith.extf %arg2 : tensor<30x12xbf16> to tensor<30x12xf32>
// CHECK: attn.efficient %[[Q]], %[[K]], %[[V]] variant softmax with_context : tensor<24x8xf32>, tensor<30x8xf32>, tensor<30x12xf32> -> tensor<24x12xf32>, tensor<8x12xf32>, tensor<1x8xf32>
// CHECK-LABEL: func.func @mixed_grad(
// CHECK-SAME: %{{.*}}: tensor<8x12xf32> {attn.saved_statistics = "context"}, %{{.*}}: tensor<1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK-SAME: -> (tensor<24x8xbf16>, tensor<30x8xbf16>, tensor<30x12xbf16>)
// CHECK: attn.softmax_from_lse
// CHECK-COUNT-3: arith.truncf
// CHECK: return
func.func @mixed(%q: tensor<24x8xbf16>, %k: tensor<30x8xbf16>, %v: tensor<30x12xbf16>) -> tensor<24x12xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<24x8xbf16>, tensor<30x8xbf16>, tensor<30x12xbf16> -> tensor<24x12xf32>
  return %o : tensor<24x12xf32>
}

// -----

// A result declared less static than the op infers: rebuilt with
// `with_context`, the op infers (24, 12), and a cast keeps the declared
// (?, 12) for @f's return (it went to the return uncast: a type mismatch).
// CHECK-LABEL: func.func @declared_dynamic(
// CHECK-SAME: -> (tensor<?x12xf32>, tensor<8x12xf32> {attn.saved_statistics = "context"}, tensor<1x8xf32> {attn.saved_statistics = "key_lse"})
// CHECK: %[[O:[a-z0-9_]+]], %{{.+}}:2 = attn.efficient {{.*}} with_context : {{.*}} -> tensor<24x12xf32>, tensor<8x12xf32>, tensor<1x8xf32>
// CHECK: tensor.cast %[[O]] : tensor<24x12xf32> to tensor<?x12xf32>
// CHECK-LABEL: func.func @declared_dynamic_grad(
// CHECK: attn.softmax_from_lse
func.func @declared_dynamic(%q: tensor<24x8xf32>, %k: tensor<30x8xf32>, %v: tensor<30x12xf32>) -> tensor<?x12xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<24x8xf32>, tensor<30x8xf32>, tensor<30x12xf32> -> tensor<?x12xf32>
  return %o : tensor<?x12xf32>
}

// -----

// The same with a batch of 1: the cotangent is (?, 9, 4), and dC = R_Qᵀ dE
// inferred (?, 8, 4) (a static 1 against `?`), so the reshape of dC ∘ C's
// row sums to K's row (1, 1, 8) failed to verify ("expected dimension 0 of
// collapsed type to be static value of 1"; found by the differential
// fuzzer). The adjoint is first cast to the type the op infers.
// CHECK-LABEL: func.func @declared_dynamic_batch_grad(
// CHECK: %[[G:.+]] = tensor.cast %arg3 : tensor<?x9x4xf32> to tensor<1x9x4xf32>
// CHECK: attn.matmul %{{.+}}, %[[G]] transpose_lhs : tensor<1x9x8xf32>, tensor<1x9x4xf32> -> tensor<1x8x4xf32>
// CHECK: tensor.expand_shape %{{.+}} output_shape [1, 1, 8] : tensor<1x8xf32> into tensor<1x1x8xf32>
func.func @declared_dynamic_batch(%q: tensor<1x9x8xf32>, %k: tensor<1x16x8xf32>, %v: tensor<1x16x4xf32>) -> tensor<?x9x4xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<1x9x8xf32>, tensor<1x16x8xf32>, tensor<1x16x4xf32> -> tensor<?x9x4xf32>
  return %o : tensor<?x9x4xf32>
}
