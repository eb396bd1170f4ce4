// RUN: attn-opt %s -split-input-file --attn-grad=save-statistics=1 | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-grad | FileCheck %s --check-prefix=RECOMPUTE
// RUN: attn-opt %s -split-input-file --attn-grad=save-statistics=1 | attn-opt -split-input-file --attn-reassociate="allow-softmax-approximation=1 explain=1" 2>&1 | FileCheck %s --check-prefix=KEPT
//
// --attn-grad=save-statistics=1 (docs/training.md, "Saved statistics"): @f
// returns, after its own results, the row log-sum-exp of each softmax
// attention that @f_grad differentiates with attn.attention_grad (in the
// order of the ops), each followed by the op's output when it is f32 or
// f64, and @f_grad takes them after the cotangents, as the `lse` and
// `output` operands of that attn.attention_grad. Both sides are marked
// with their kind, {attn.saved_statistics = "lse"} or "output". Without the
// option nothing is saved.

// Two softmax layers, one causal with a feature map and grouped K/V, one
// masked (primitive gradient, nothing saved): one lse, (2, 3, 16), and one
// output from the first.
// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME: -> (tensor<2x3x16x4xf32>, tensor<2x3x16x4xf32>, tensor<2x3x16xf32> {attn.saved_statistics = "lse"}, tensor<2x3x16x4xf32> {attn.saved_statistics = "output"})
// CHECK: %[[O:[a-z0-9_]+]], %[[LSE:[a-z0-9_]+]] = attn.dot_product %arg0, %arg1, %arg2 norm [softmax over keys] scale 5.000000e-01 feature_map relu causal with_lse
// CHECK-SAME: -> tensor<2x3x16x4xf32>, tensor<2x3x16xf32>
// CHECK: %[[M:[a-z0-9_]+]] = attn.dot_product %arg0, %arg1, %arg2 mask %arg3 norm [softmax over keys] :
// CHECK: return %[[O]], %[[M]], %[[LSE]], %[[O]]
// CHECK-LABEL: func.func @two_layers_grad(
// CHECK-SAME: %arg4: tensor<2x3x16x4xf32>, %arg5: tensor<2x3x16x4xf32>, %arg6: tensor<2x3x16xf32> {attn.saved_statistics = "lse"}, %arg7: tensor<2x3x16x4xf32> {attn.saved_statistics = "output"})
// CHECK-SAME: attributes {attn.gradient_of = @two_layers}
// CHECK: attn.attention_grad %{{.+}}, %{{.+}}, %arg2, %arg4 lse %arg6 output %arg7 scale 5.000000e-01 causal
// CHECK-NOT: attn.attention_grad
// CHECK: return
// RECOMPUTE-LABEL: func.func @two_layers(
// RECOMPUTE-SAME: -> (tensor<2x3x16x4xf32>, tensor<2x3x16x4xf32>) {
// RECOMPUTE-NOT: with_lse
// RECOMPUTE-LABEL: func.func @two_layers_grad(
// RECOMPUTE-SAME: %arg5: tensor<2x3x16x4xf32>) -> (
// RECOMPUTE: attn.attention_grad %{{.+}}, %{{.+}}, %arg2, %arg4 scale 5.000000e-01 causal :
// --attn-reassociate, even allowed to approximate softmax attention, keeps
// the op that returns its lse and says why.
// KEPT: remark: attn-reassociate: not rewritten: it returns its row log-sum-exp (`with_lse`), which no reassociated form computes
// KEPT-LABEL: func.func @two_layers(
// KEPT: attn.dot_product {{.*}} with_lse
func.func @two_layers(%q: tensor<2x3x16x8xf32>, %k: tensor<2x1x16x8xf32>, %v: tensor<2x1x16x4xf32>, %mask: tensor<16x16xf32>)
    -> (tensor<2x3x16x4xf32>, tensor<2x3x16x4xf32>) {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.5 feature_map relu causal
      : tensor<2x3x16x8xf32>, tensor<2x1x16x8xf32>, tensor<2x1x16x4xf32> -> tensor<2x3x16x4xf32>
  %m = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys]
      : tensor<2x3x16x8xf32>, tensor<2x1x16x8xf32>, tensor<2x1x16x4xf32>, tensor<16x16xf32> -> tensor<2x3x16x4xf32>
  return %o, %m : tensor<2x3x16x4xf32>, tensor<2x3x16x4xf32>
}

// -----

// A mask that needs no gradient (an attn.no_grad argument): the masked
// softmax's gradient is fused too, so its lse is saved, and its
// attn.attention_grad takes the mask and the lse.
// CHECK-LABEL: func.func @padded(
// CHECK-SAME: -> (tensor<2x16x4xf32>, tensor<2x16xf32> {attn.saved_statistics = "lse"}, tensor<2x16x4xf32> {attn.saved_statistics = "output"})
// CHECK: attn.dot_product %arg0, %arg1, %arg2 mask %arg3 norm [softmax over keys] with_lse
// CHECK-LABEL: func.func @padded_grad(
// CHECK-SAME: %arg4: tensor<2x16x4xf32>, %arg5: tensor<2x16xf32> {attn.saved_statistics = "lse"}, %arg6: tensor<2x16x4xf32> {attn.saved_statistics = "output"}) -> (tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x4xf32>)
// CHECK: attn.attention_grad %arg0, %arg1, %arg2, %arg4 mask %arg3 lse %arg5 output %arg6 :
// RECOMPUTE-LABEL: func.func @padded_grad(
// RECOMPUTE: attn.attention_grad %arg0, %arg1, %arg2, %arg4 mask %arg3 :
func.func @padded(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x4xf32>, %mask: tensor<16x16xf32> {attn.no_grad})
    -> tensor<2x16x4xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys]
      : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x4xf32>, tensor<16x16xf32> -> tensor<2x16x4xf32>
  return %o : tensor<2x16x4xf32>
}

// -----

// bf16 storage: @f computes the op in f32 and rounds its result once; the
// lse and the unrounded output are saved in f32 (statistics are f32, and
// D must come from the unrounded output, design §8); f64 operands give an
// f64 lse and output; dynamic rows stay dynamic. Two saved ops, in order.
// CHECK-LABEL: func.func @precisions(
// CHECK-SAME: -> (tensor<?x4xbf16>, tensor<7x4xf64>, tensor<?xf32> {attn.saved_statistics = "lse"}, tensor<?x4xf32> {attn.saved_statistics = "output"}, tensor<7xf64> {attn.saved_statistics = "lse"}, tensor<7x4xf64> {attn.saved_statistics = "output"})
// CHECK: %[[O:.*]], %{{.*}} = attn.dot_product {{.*}} with_lse : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32> -> tensor<?x4xf32>, tensor<?xf32>
// CHECK: arith.truncf %[[O]] : tensor<?x4xf32> to tensor<?x4xbf16>
// CHECK-LABEL: func.func @precisions_grad(
// CHECK-SAME: %arg6: tensor<?xf32> {attn.saved_statistics = "lse"}, %arg7: tensor<?x4xf32> {attn.saved_statistics = "output"}, %arg8: tensor<7xf64> {attn.saved_statistics = "lse"}, %arg9: tensor<7x4xf64> {attn.saved_statistics = "output"})
// The adjoints run in reverse order: the second op's gradient first.
// CHECK: attn.attention_grad {{.*}} lse %arg8 output %arg9 {{.*}}tensor<7xf64>, tensor<7x4xf64> ->
// CHECK: attn.attention_grad {{.*}} lse %arg6 output %arg7 {{.*}}tensor<?xf32>, tensor<?x4xf32> ->
func.func @precisions(%q: tensor<?x8xbf16>, %k: tensor<?x8xbf16>, %v: tensor<?x4xbf16>, %x: tensor<7x4xf64>)
    -> (tensor<?x4xbf16>, tensor<7x4xf64>) {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?x4xbf16> -> tensor<?x4xbf16>
  %p = attn.dot_product %x, %x, %x norm [none over keys, softmax over keys] scale 0.25
      : tensor<7x4xf64>, tensor<7x4xf64>, tensor<7x4xf64> -> tensor<7x4xf64>
  return %o, %p : tensor<?x4xbf16>, tensor<7x4xf64>
}

// -----

// Nothing to save (causal linear attention, whose forms have chunk states,
// not one context; grad-save-linear-context.mlir has the non-causal form):
// f and f_grad as without the option.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: -> tensor<16x4xf32> {
// CHECK-LABEL: func.func @linear_grad(
// CHECK-SAME: %arg3: tensor<16x4xf32>) -> (
// CHECK-NOT: attn.saved_statistics
func.func @linear(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
  return %o : tensor<16x4xf32>
}

// -----

// Mixed precision (bf16 operands, an f32 result): @f computes the op in
// f32 (as --attn-widen-to-f32 would), so its f32 output, unrounded, is
// saved after the f32 lse.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: -> (tensor<2x10x4xf32>, tensor<2x10xf32> {attn.saved_statistics = "lse"}, tensor<2x10x4xf32> {attn.saved_statistics = "output"})
// CHECK: attn.dot_product {{.*}} with_lse : tensor<2x10x8xf32>, tensor<2x12x8xf32>, tensor<2x12x4xf32> -> tensor<2x10x4xf32>, tensor<2x10xf32>
// CHECK-LABEL: func.func @mixed_grad(
// CHECK: attn.attention_grad {{.*}} lse %arg4 output %arg5
// CHECK-COUNT-3: arith.truncf
func.func @mixed(%q: tensor<2x10x8xbf16>, %k: tensor<2x12x8xbf16>, %v: tensor<2x12x4xbf16>) -> tensor<2x10x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25
      : tensor<2x10x8xbf16>, tensor<2x12x8xbf16>, tensor<2x12x4xbf16> -> tensor<2x10x4xf32>
  return %o : tensor<2x10x4xf32>
}

// -----

// f32 operands, a bf16 result: computed in f32 by @f, its result rounded
// once, and the unrounded output saved. (Rebuilt with `with_lse` from its
// f32 operands, the bf16 op inferred an f32 result: a return that no
// longer matched.)
// CHECK-LABEL: func.func @rounded(
// CHECK-SAME: -> (tensor<2x10x4xbf16>, tensor<2x10xf32> {attn.saved_statistics = "lse"}, tensor<2x10x4xf32> {attn.saved_statistics = "output"}) {
// CHECK: attn.dot_product {{.*}} with_lse : tensor<2x10x8xf32>, tensor<2x12x8xf32>, tensor<2x12x4xf32> -> tensor<2x10x4xf32>, tensor<2x10xf32>
func.func @rounded(%q: tensor<2x10x8xf32>, %k: tensor<2x12x8xf32>, %v: tensor<2x12x4xf32>) -> tensor<2x10x4xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25
      : tensor<2x10x8xf32>, tensor<2x12x8xf32>, tensor<2x12x4xf32> -> tensor<2x10x4xbf16>
  return %o : tensor<2x10x4xbf16>
}

// -----

// Three bf16 ops on the same arguments: one arith.extf per argument (the
// whole of @f and @f_grad is widened at once), so each gradient
// accumulates in f32 and is rounded once. Widening op by op gave two
// extf of an argument: two adjoints, each rounded to bf16, added in bf16.
// CHECK-LABEL: func.func @shared_arguments_grad(
// CHECK: arith.extf %arg2
// CHECK: arith.extf %arg1
// CHECK: arith.extf %arg0
// CHECK-NOT: arith.extf %arg{{[012]}}
// CHECK-NOT: attn.add {{.*}}bf16
// CHECK-COUNT-3: arith.truncf
// CHECK-NEXT: return
func.func @shared_arguments(%q: tensor<2x30x16xbf16>, %k: tensor<2x30x16xbf16>, %v: tensor<2x30x24xbf16>) -> (tensor<2x30x24xbf16>, tensor<2x30x24xf32>, tensor<2x30x24xbf16>) {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<2x30x16xbf16>, tensor<2x30x16xbf16>, tensor<2x30x24xbf16> -> tensor<2x30x24xbf16>
  %p = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25 : tensor<2x30x16xbf16>, tensor<2x30x16xbf16>, tensor<2x30x24xbf16> -> tensor<2x30x24xf32>
  %r = attn.external %q, %k, %v : tensor<2x30x16xbf16>, tensor<2x30x16xbf16>, tensor<2x30x24xbf16> -> tensor<2x30x24xbf16>
  return %o, %p, %r : tensor<2x30x24xbf16>, tensor<2x30x24xf32>, tensor<2x30x24xbf16>
}

// -----

// A result declared less static than the op infers (a valid spec): the op
// rebuilt with `with_lse` infers (7, 48), and a cast keeps the declared
// (?, 48) for @f's return; the saved output has the inferred type. (The
// rebuilt op's result went to the return uncast: a type mismatch. Found by
// the differential fuzzer.)
// CHECK-LABEL: func.func @declared_dynamic(
// CHECK-SAME: -> (tensor<?x48xf32>, tensor<7xf32> {attn.saved_statistics = "lse"}, tensor<7x48xf32> {attn.saved_statistics = "output"})
// CHECK: %[[O:[a-z0-9_]+]], %[[LSE:[a-z0-9_]+]] = attn.dot_product {{.*}} with_lse : {{.*}} -> tensor<7x48xf32>, tensor<7xf32>
// CHECK: %[[CAST:.+]] = tensor.cast %[[O]] : tensor<7x48xf32> to tensor<?x48xf32>
// CHECK: return %[[CAST]], %[[LSE]], %[[O]]
// CHECK-LABEL: func.func @declared_dynamic_grad(
// CHECK: attn.attention_grad {{.*}} lse %arg4 output %arg5 scale 1.250000e-01 causal
func.func @declared_dynamic(%q: tensor<7x16xf32>, %k: tensor<31x16xf32>, %v: tensor<31x48xf32>) -> tensor<?x48xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 causal
      : tensor<7x16xf32>, tensor<31x16xf32>, tensor<31x48xf32> -> tensor<?x48xf32>
  return %o : tensor<?x48xf32>
}
