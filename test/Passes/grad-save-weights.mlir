// RUN: attn-opt %s -split-input-file --attn-grad=save-statistics=1 | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-grad | FileCheck %s --check-prefix=RECOMPUTE
//
// --attn-grad=save-statistics=1 and double normalization (docs/training.md,
// "Saved statistics"): attn.external (and attn.dot_product with steps over
// queries, or more than one step, whose first step is a softmax), on f32
// or f64, is computed by @f in primitive form, which returns the first
// step's result P ({attn.saved_statistics = "weights"}); @f_grad takes it
// in place of that step: the later steps are recomputed from P, and
// neither the scores X Mk^T nor the softmax are. Four products (dA, dMv,
// dX, dMk) where the recomputing gradient has five.

// CHECK-LABEL: func.func @eanet(
// CHECK-SAME: -> (tensor<16x8xf32>, tensor<16x4xf32> {attn.saved_statistics = "weights"})
// CHECK: %[[S:.+]] = attn.matmul %arg0, %arg1 transpose_rhs
// CHECK: %[[P:.+]] = attn.normalize softmax %[[S]] dim 0 : tensor<16x4xf32>
// CHECK: %[[A:.+]] = attn.normalize sum %[[P]] dim 1 eps 1.000000e-09
// CHECK: %[[O:.+]] = attn.matmul %[[A]], %arg2 :
// CHECK: return %[[O]], %[[P]]
// CHECK-LABEL: func.func @eanet_grad(
// CHECK-SAME: %arg3: tensor<16x8xf32>, %arg4: tensor<16x4xf32> {attn.saved_statistics = "weights"})
// CHECK-NOT: transpose_rhs : tensor<16x8xf32>, tensor<4x8xf32>
// CHECK-NOT: attn.normalize softmax
// CHECK: %[[A2:.+]] = attn.normalize sum %arg4 dim 1 eps 1.000000e-09
// CHECK: %[[DA:.+]] = attn.matmul %arg3, %arg2 transpose_rhs
// CHECK: %[[DMV:.+]] = attn.matmul %[[A2]], %arg3 transpose_lhs
// CHECK: %[[DS:.+]] = attn.mul %arg4, %{{.+}} : tensor<16x4xf32>
// CHECK: %[[DX:.+]] = attn.matmul %[[DS]], %arg1 :
// CHECK: %[[DMK:.+]] = attn.matmul %[[DS]], %arg0 transpose_lhs
// CHECK: return %[[DX]], %[[DMK]], %[[DMV]]
// RECOMPUTE-LABEL: func.func @eanet(
// RECOMPUTE-SAME: -> tensor<16x8xf32> {
// RECOMPUTE: attn.external
// RECOMPUTE-LABEL: func.func @eanet_grad(
// RECOMPUTE: %[[S:.+]] = attn.matmul %arg0, %arg1 transpose_rhs
// RECOMPUTE: attn.normalize softmax %[[S]] dim 0
func.func @eanet(%x: tensor<16x8xf32>, %mk: tensor<4x8xf32>, %mv: tensor<4x8xf32>) -> tensor<16x8xf32> {
  %o = attn.external %x, %mk, %mv : tensor<16x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// attn.dot_product with EANet's steps on heads, with a scale: the weights
// have the scores' shape.
// CHECK-LABEL: func.func @heads(
// CHECK-SAME: -> (tensor<2x12x5xf32>, tensor<2x12x10xf32> {attn.saved_statistics = "weights"})
// CHECK: attn.scale
// CHECK: attn.normalize softmax %{{.+}} dim 1 : tensor<2x12x10xf32>
// CHECK-LABEL: func.func @heads_grad(
// CHECK-SAME: %arg4: tensor<2x12x10xf32> {attn.saved_statistics = "weights"})
// CHECK-NOT: attn.normalize softmax
// CHECK: attn.normalize sum %arg4 dim 2
func.func @heads(%q: tensor<2x12x8xf32>, %k: tensor<2x10x8xf32>, %v: tensor<2x10x5xf32>) -> tensor<2x12x5xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.0e-9] scale 0.5
      : tensor<2x12x8xf32>, tensor<2x10x8xf32>, tensor<2x10x5xf32> -> tensor<2x12x5xf32>
  return %o : tensor<2x12x5xf32>
}

// -----

// Not saved (recomputed as without the option): a first step that is not
// a softmax (its backward needs its input, the scores).
// CHECK-LABEL: func.func @not_saved(
// CHECK-SAME: -> tensor<16x8xf32> {
// CHECK: attn.dot_product
// CHECK-LABEL: func.func @not_saved_grad(
// CHECK-NOT: attn.saved_statistics
// CHECK: return
func.func @not_saved(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %s = attn.dot_product %x, %x, %x norm [sum over queries, softmax over keys] : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return %s : tensor<16x8xf32>
}

// -----

// bf16 throughout: computed in f32 by @f (its result rounded once), which
// saves f32 weights.
// CHECK-LABEL: func.func @bf16(
// CHECK-SAME: -> (tensor<16x8xbf16>, tensor<16x4xf32> {attn.saved_statistics = "weights"}) {
// CHECK-LABEL: func.func @bf16_grad(
// CHECK-SAME: %{{.*}}: tensor<16x4xf32> {attn.saved_statistics = "weights"}) -> (tensor<16x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>)
func.func @bf16(%h: tensor<16x8xbf16>, %hk: tensor<4x8xbf16>, %hv: tensor<4x8xbf16>) -> tensor<16x8xbf16> {
  %b = attn.external %h, %hk, %hv : tensor<16x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<16x8xbf16>
  return %b : tensor<16x8xbf16>
}

// -----

// Mixed precision (bf16 operands, an f32 result): computed in f32 by @f,
// which saves f32 weights.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: -> (tensor<16x8xf32>, tensor<16x4xf32> {attn.saved_statistics = "weights"}) {
// CHECK-LABEL: func.func @mixed_grad(
// CHECK-SAME: %{{.*}}: tensor<16x4xf32> {attn.saved_statistics = "weights"}) -> (tensor<16x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>)
func.func @mixed(%x: tensor<16x8xbf16>, %mk: tensor<4x8xbf16>, %mv: tensor<4x8xbf16>) -> tensor<16x8xf32> {
  %o = attn.external %x, %mk, %mv : tensor<16x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}
