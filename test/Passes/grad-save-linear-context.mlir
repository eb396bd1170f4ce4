// RUN: attn-opt %s -split-input-file --attn-grad=save-statistics=1 | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-grad | FileCheck %s --check-prefix=RECOMPUTE
//
// --attn-grad=save-statistics=1 and linear attention (docs/training.md,
// "Saved statistics"): a non-causal attn.dot_product without a mask or a
// count step, on f32 or f64 operands with static sizes and the same leading
// dims, where --attn-reassociate rewrites it to phi(Q) (phi(K)^T V), is
// computed by @f in that form. @f returns its context phi(K)^T V
// ({attn.saved_statistics = "context"}) and, with a `sum` step, its key
// sums phi(K)^T 1 as a row ("key_sums"), unscaled; @f_grad takes them after
// the cotangents. The numerator's adjoint is then scale dN C^T, and no
// product over the keys computes C again. Without the option (RECOMPUTE),
// f keeps the op and its gradient recomputes C (after --attn-reassociate).

// A scale, eps and a feature map; batched.
// CHECK-LABEL: func.func @layer(
// CHECK-SAME: -> (tensor<2x64x12xf32>, tensor<2x8x12xf32> {attn.saved_statistics = "context"}, tensor<2x1x8xf32> {attn.saved_statistics = "key_sums"})
// CHECK: %[[PHIQ:.+]] = attn.feature_map elu_plus_one %arg0
// CHECK: %[[PHIK:.+]] = attn.feature_map elu_plus_one %arg1
// CHECK: %[[C:.+]] = attn.matmul %[[PHIK]], %arg2 transpose_lhs {{.*}} -> tensor<2x8x12xf32>
// CHECK: %[[Z:.+]] = attn.reduce_sum %[[PHIK]] dim 1 {{.*}} -> tensor<2x1x8xf32>
// CHECK: attn.scale %[[C]] by 5.000000e-01
// CHECK: attn.div {{.*}} eps 9.9999999999999995E-7
// CHECK: return %{{.+}}, %[[C]], %[[Z]]
// CHECK-LABEL: func.func @layer_grad(
// CHECK-SAME: %arg3: tensor<2x64x12xf32>, %arg4: tensor<2x8x12xf32> {attn.saved_statistics = "context"}, %arg5: tensor<2x1x8xf32> {attn.saved_statistics = "key_sums"})
// CHECK-NOT: attn.reduce_sum %{{.+}} dim 1 : tensor<2x48x8xf32>
// CHECK: %[[ROWS:.+]] = attn.matmul %{{.+}}, %arg5 transpose_rhs {{.*}} -> tensor<2x64x1xf32>
// CHECK: %[[DN:.+]] = attn.div %arg3, %{{.+}} eps
// CHECK: %[[DNUM:.+]] = attn.matmul %[[DN]], %arg4 transpose_rhs {{.*}} -> tensor<2x64x8xf32>
// CHECK: attn.scale %[[DNUM]] by 5.000000e-01
// CHECK-NOT: transpose_lhs : tensor<2x48x8xf32>, tensor<2x48x12xf32>
// CHECK: return
// RECOMPUTE-LABEL: func.func @layer(
// RECOMPUTE-SAME: -> tensor<2x64x12xf32> {
// RECOMPUTE-NEXT: attn.dot_product
// RECOMPUTE-LABEL: func.func @layer_grad(
// RECOMPUTE: attn.reduce_sum %{{.+}} dim 1 : tensor<2x48x8xf32> -> tensor<2x1x8xf32>
func.func @layer(%q: tensor<2x64x8xf32>, %k: tensor<2x48x8xf32>, %v: tensor<2x48x12xf32>) -> tensor<2x64x12xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-06] scale 5.000000e-01 feature_map elu_plus_one : tensor<2x64x8xf32>, tensor<2x48x8xf32>, tensor<2x48x12xf32> -> tensor<2x64x12xf32>
  return %o : tensor<2x64x12xf32>
}

// -----

// No `sum` step: the context alone.
// CHECK-LABEL: func.func @unnormalized(
// CHECK-SAME: -> (tensor<64x12xf64>, tensor<8x12xf64> {attn.saved_statistics = "context"})
// CHECK-LABEL: func.func @unnormalized_grad(
// CHECK-SAME: %arg3: tensor<64x12xf64>, %arg4: tensor<8x12xf64> {attn.saved_statistics = "context"})
// CHECK-NEXT: attn.matmul %arg3, %arg4 transpose_rhs
func.func @unnormalized(%q: tensor<64x8xf64>, %k: tensor<64x8xf64>, %v: tensor<64x12xf64>) -> tensor<64x12xf64> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] : tensor<64x8xf64>, tensor<64x8xf64>, tensor<64x12xf64> -> tensor<64x12xf64>
  return %o : tensor<64x12xf64>
}

// -----

// Softmax attention then linear attention: the saved values in the order
// of their ops (lse, output, then context and key sums).
// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME: -> (tensor<64x8xf32>, tensor<64xf32> {attn.saved_statistics = "lse"}, tensor<64x8xf32> {attn.saved_statistics = "output"}, tensor<8x8xf32> {attn.saved_statistics = "context"}, tensor<1x8xf32> {attn.saved_statistics = "key_sums"})
func.func @two_layers(%x: tensor<64x8xf32>, %k: tensor<64x8xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %a = attn.dot_product %x, %k, %v norm [softmax over keys] : tensor<64x8xf32>, tensor<64x8xf32>, tensor<64x8xf32> -> tensor<64x8xf32>
  %l = attn.dot_product %a, %k, %v norm [sum over keys] feature_map relu : tensor<64x8xf32>, tensor<64x8xf32>, tensor<64x8xf32> -> tensor<64x8xf32>
  return %l : tensor<64x8xf32>
}

// -----

// Nothing is saved where f would not compute the linear form: too few
// positions for it to pay, causal (chunked prefix sums, no one context),
// a count step, dynamic sizes, K and V broadcast over Q's heads.
// CHECK-LABEL: func.func @few_positions(
// CHECK-SAME: -> tensor<4x8xf32> {
// CHECK-NEXT: attn.dot_product
// CHECK-LABEL: func.func @few_positions_grad(
// CHECK-SAME: %arg3: tensor<4x8xf32>) ->
func.func @few_positions(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map relu : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @causal(
// CHECK-SAME: -> tensor<128x8xf32> {
func.func @causal(%q: tensor<128x8xf32>, %k: tensor<128x8xf32>, %v: tensor<128x8xf32>) -> tensor<128x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal : tensor<128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32> -> tensor<128x8xf32>
  return %o : tensor<128x8xf32>
}

// -----

// CHECK-LABEL: func.func @count(
// CHECK-SAME: -> tensor<128x8xf32> {
func.func @count(%q: tensor<128x8xf32>, %k: tensor<128x8xf32>, %v: tensor<128x8xf32>) -> tensor<128x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] : tensor<128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32> -> tensor<128x8xf32>
  return %o : tensor<128x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: -> tensor<?x8xf32> {
func.func @dynamic(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map relu : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME: -> tensor<4x128x8xf32> {
func.func @broadcast(%q: tensor<4x128x8xf32>, %k: tensor<128x8xf32>, %v: tensor<128x8xf32>) -> tensor<4x128x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map relu : tensor<4x128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32> -> tensor<4x128x8xf32>
  return %o : tensor<4x128x8xf32>
}

// -----

// Mixed precision (bf16 operands, an f32 result): @f computes the linear
// form in f32 and saves an f32 context and key sums.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: -> (tensor<2x64x12xf32>, tensor<2x8x12xf32> {attn.saved_statistics = "context"}, tensor<2x1x8xf32> {attn.saved_statistics = "key_sums"})
// CHECK-LABEL: func.func @mixed_grad(
// CHECK-SAME: -> (tensor<2x64x8xbf16>, tensor<2x48x8xbf16>, tensor<2x48x12xbf16>)
func.func @mixed(%q: tensor<2x64x8xbf16>, %k: tensor<2x48x8xbf16>, %v: tensor<2x48x12xbf16>) -> tensor<2x64x12xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<2x64x8xbf16>, tensor<2x48x8xbf16>, tensor<2x48x12xbf16> -> tensor<2x64x12xf32>
  return %o : tensor<2x64x12xf32>
}

// -----

// A bf16 result (f32 operands here): @f computes the op in f32 and rounds
// its result once; the context and key sums are saved in f32 (per
// problem), as for f32 results.
// CHECK-LABEL: func.func @rounded(
// CHECK-SAME: -> (tensor<2x64x12xbf16>, tensor<2x8x12xf32> {attn.saved_statistics = "context"}, tensor<2x1x8xf32> {attn.saved_statistics = "key_sums"}) {
// CHECK: arith.truncf {{.*}} : tensor<2x64x12xf32> to tensor<2x64x12xbf16>
// CHECK-LABEL: func.func @rounded_grad(
// CHECK-SAME: {attn.saved_statistics = "key_sums"}) -> (tensor<2x64x8xf32>, tensor<2x48x8xf32>, tensor<2x48x12xf32>)
func.func @rounded(%q: tensor<2x64x8xf32>, %k: tensor<2x48x8xf32>, %v: tensor<2x48x12xf32>) -> tensor<2x64x12xbf16> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<2x64x8xf32>, tensor<2x48x8xf32>, tensor<2x48x12xf32> -> tensor<2x64x12xbf16>
  return %o : tensor<2x64x12xbf16>
}
