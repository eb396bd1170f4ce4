// RUN: attn-opt %s -canonicalize -split-input-file | FileCheck %s

// Folds and canonicalization patterns of AttnFolds.cpp, each with the cases
// that must be left alone.

// `normalize none` is the identity and folds to its input.
// CHECK-LABEL: func.func @normalize_none_folds
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32>)
// CHECK-NOT: attn.normalize
// CHECK: return %[[X]]
func.func @normalize_none_folds(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.normalize none %x dim 1 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Every other kind stays, along any dim.
// CHECK-LABEL: func.func @normalize_kinds_stay
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32>)
// CHECK: %[[A:.+]] = attn.normalize softmax %[[X]] dim 1 : tensor<8x16xf32>
// CHECK: %[[B:.+]] = attn.normalize sum %[[X]] dim 0 eps 1.000000e-09 : tensor<8x16xf32>
// CHECK: %[[C:.+]] = attn.normalize count %[[X]] dim 1 : tensor<8x16xf32>
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @normalize_kinds_stay(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = attn.normalize softmax %x dim 1 : tensor<8x16xf32>
  %1 = attn.normalize sum %x dim 0 eps 1.0e-9 : tensor<8x16xf32>
  %2 = attn.normalize count %x dim 1 : tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// softmax(softmax(x)) != softmax(x): normalizations never merge.
// CHECK-LABEL: func.func @normalize_twice_stays
// CHECK: %[[A:.+]] = attn.normalize softmax %{{.+}} dim 1
// CHECK: %[[B:.+]] = attn.normalize softmax %[[A]] dim 1
// CHECK: return %[[B]]
func.func @normalize_twice_stays(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.normalize softmax %x dim 1 : tensor<8x16xf32>
  %1 = attn.normalize softmax %0 dim 1 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Scaling by exactly 1 folds.
// CHECK-LABEL: func.func @scale_one_folds
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32>)
// CHECK-NOT: attn.scale
// CHECK: return %[[X]]
func.func @scale_one_folds(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.scale %x by 1.0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Other factors stay: -1, 0 (x * 0 is NaN for x = inf, so no fold to zeros)
// and a factor that is 1 only after rounding to f32.
// CHECK-LABEL: func.func @scale_other_factors_stay
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32>)
// CHECK: %[[A:.+]] = attn.scale %[[X]] by -1.000000e+00
// CHECK: %[[B:.+]] = attn.scale %[[X]] by 0.000000e+00
// CHECK: %[[C:.+]] = attn.scale %[[X]] by 1.0000000000000002
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @scale_other_factors_stay(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = attn.scale %x by -1.0 : tensor<8x16xf32>
  %1 = attn.scale %x by 0.0 : tensor<8x16xf32>
  %2 = attn.scale %x by 1.0000000000000002 : tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Nested scales merge into one: 0.5 * 0.25 = 0.125.
// CHECK-LABEL: func.func @nested_scales_merge
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32>)
// CHECK: %[[S:.+]] = attn.scale %[[X]] by 1.250000e-01 : tensor<8x16xf32>
// CHECK-NOT: attn.scale
// CHECK: return %[[S]]
func.func @nested_scales_merge(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.scale %x by 0.5 : tensor<8x16xf32>
  %1 = attn.scale %0 by 0.25 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// A chain of three merges fully; when the product is 1 the merged scale
// folds away too.
// CHECK-LABEL: func.func @scale_chain
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32>)
// CHECK: %[[S:.+]] = attn.scale %[[X]] by -3.000000e+00 : tensor<8x16xf32>
// CHECK-NOT: attn.scale
// CHECK: return %[[S]], %[[X]]
func.func @scale_chain(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = attn.scale %x by 2.0 : tensor<8x16xf32>
  %1 = attn.scale %0 by -0.5 : tensor<8x16xf32>
  %2 = attn.scale %1 by 3.0 : tensor<8x16xf32>
  %3 = attn.scale %x by 4.0 : tensor<8x16xf32>
  %4 = attn.scale %3 by 0.25 : tensor<8x16xf32>
  return %2, %4 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Merging 1e300 * 1e300 would overflow to inf, which attn.scale rejects:
// the two scales stay apart.
// CHECK-LABEL: func.func @scale_merge_would_overflow
// CHECK: %[[A:.+]] = attn.scale %{{.+}} by 1.000000e+300
// CHECK: %[[B:.+]] = attn.scale %[[A]] by 1.000000e+300
// CHECK: return %[[B]]
func.func @scale_merge_would_overflow(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.scale %x by 1.0e300 : tensor<8x16xf32>
  %1 = attn.scale %0 by 1.0e300 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// A scale whose input comes from another op does not merge.
// CHECK-LABEL: func.func @scale_of_other_op_stays
// CHECK: %[[F:.+]] = attn.feature_map relu
// CHECK: %[[S:.+]] = attn.scale %[[F]] by 5.000000e-01
// CHECK: return %[[S]]
func.func @scale_of_other_op_stays(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.feature_map relu %x : tensor<8x16xf32>
  %1 = attn.scale %0 by 0.5 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// The identity feature map folds; elu+1 and relu stay.
// CHECK-LABEL: func.func @feature_maps
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32>)
// CHECK-NOT: attn.feature_map identity
// CHECK: %[[E:.+]] = attn.feature_map elu_plus_one %[[X]]
// CHECK: %[[R:.+]] = attn.feature_map relu %[[X]]
// CHECK: return %[[X]], %[[E]], %[[R]]
func.func @feature_maps(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = attn.feature_map identity %x : tensor<8x16xf32>
  %1 = attn.feature_map elu_plus_one %x : tensor<8x16xf32>
  %2 = attn.feature_map relu %x : tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// `none` steps are dropped from a dot_product's list, wherever they are;
// the other steps keep their order and options.
// CHECK-LABEL: func.func @drop_none_steps
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<64x16xf32>, %[[K:[a-z0-9_]+]]: tensor<32x16xf32>, %[[V:[a-z0-9_]+]]: tensor<32x8xf32>)
// CHECK: %[[A:.+]] = attn.dot_product %[[Q]], %[[K]], %[[V]] norm [softmax over queries, sum over keys eps 1.000000e-09] scale 5.000000e-01 causal : tensor<64x16xf32>, tensor<32x16xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
// CHECK: %[[B:.+]] = attn.dot_product %[[Q]], %[[K]], %[[V]] norm [count over keys] feature_map relu : tensor<64x16xf32>, tensor<32x16xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
// CHECK: return %[[A]], %[[B]]
func.func @drop_none_steps(%q: tensor<64x16xf32>, %k: tensor<32x16xf32>, %v: tensor<32x8xf32>) -> (tensor<64x8xf32>, tensor<64x8xf32>) {
  %0 = attn.dot_product %q, %k, %v norm [none over keys, softmax over queries, none over queries, sum over keys eps 1.0e-9, none over keys] scale 0.5 causal : tensor<64x16xf32>, tensor<32x16xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
  %1 = attn.dot_product %q, %k, %v norm [count over keys, none over keys] feature_map relu : tensor<64x16xf32>, tensor<32x16xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
  return %0, %1 : tensor<64x8xf32>, tensor<64x8xf32>
}

// -----

// A list of only `none` steps becomes the empty list (no normalization).
// CHECK-LABEL: func.func @drop_all_none_steps
// CHECK: attn.dot_product %{{.+}} norm [] :
func.func @drop_all_none_steps(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = attn.dot_product %x, %x, %x norm [none over keys, none over queries] : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// Lists without `none` are left alone, including the mask operand.
// CHECK-LABEL: func.func @norm_list_stays
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<16x8xf32>, %[[M:[a-z0-9_]+]]: tensor<16x16xf32>)
// CHECK: %[[A:.+]] = attn.dot_product %[[X]], %[[X]], %[[X]] mask %[[M]] norm [softmax over keys] scale 1.250000e-01 : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32> -> tensor<16x8xf32>
// CHECK: %[[B:.+]] = attn.dot_product %[[X]], %[[X]], %[[X]] norm [sum over keys, sum over queries] feature_map elu_plus_one : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
// CHECK: return %[[A]], %[[B]]
func.func @norm_list_stays(%x: tensor<16x8xf32>, %mask: tensor<16x16xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %0 = attn.dot_product %x, %x, %x mask %mask norm [softmax over keys] scale 0.125 : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32> -> tensor<16x8xf32>
  %1 = attn.dot_product %x, %x, %x norm [sum over keys, sum over queries] feature_map elu_plus_one : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return %0, %1 : tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// attn.external is dot-product attention with EANet's double normalization
// and the default eps 1e-9.
// CHECK-LABEL: func.func @external_default_eps
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<256x64xf32>, %[[MK:[a-z0-9_]+]]: tensor<16x64xf32>, %[[MV:[a-z0-9_]+]]: tensor<16x64xf32>)
// CHECK-NOT: attn.external
// CHECK: %[[O:.+]] = attn.dot_product %[[X]], %[[MK]], %[[MV]] norm [softmax over queries, sum over keys eps 1.000000e-09] : tensor<256x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<256x64xf32>
// CHECK: return %[[O]]
func.func @external_default_eps(%x: tensor<256x64xf32>, %mk: tensor<16x64xf32>, %mv: tensor<16x64xf32>) -> tensor<256x64xf32> {
  %0 = attn.external %x, %mk, %mv : tensor<256x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<256x64xf32>
  return %0 : tensor<256x64xf32>
}

// -----

// A custom eps carries over; batched input and a result type less static
// than inferred are kept as written.
// CHECK-LABEL: func.func @external_custom_eps
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x256x64xf32>, %[[MK:[a-z0-9_]+]]: tensor<16x64xf32>, %[[MV:[a-z0-9_]+]]: tensor<16x32xf32>)
// CHECK-NOT: attn.external
// CHECK: %[[O:.+]] = attn.dot_product %[[X]], %[[MK]], %[[MV]] norm [softmax over queries, sum over keys eps 2.500000e-01] : tensor<2x256x64xf32>, tensor<16x64xf32>, tensor<16x32xf32> -> tensor<2x?x32xf32>
// CHECK: return %[[O]]
func.func @external_custom_eps(%x: tensor<2x256x64xf32>, %mk: tensor<16x64xf32>, %mv: tensor<16x32xf32>) -> tensor<2x?x32xf32> {
  %0 = attn.external %x, %mk, %mv eps 0.25 : tensor<2x256x64xf32>, tensor<16x64xf32>, tensor<16x32xf32> -> tensor<2x?x32xf32>
  return %0 : tensor<2x?x32xf32>
}

// -----

// eps 0 gives a `sum` step without eps.
// CHECK-LABEL: func.func @external_zero_eps
// CHECK: attn.dot_product %{{.+}} norm [softmax over queries, sum over keys] : tensor<256x64xf32>
func.func @external_zero_eps(%x: tensor<256x64xf32>, %mk: tensor<16x64xf32>) -> tensor<256x64xf32> {
  %0 = attn.external %x, %mk, %mk eps 0.0 : tensor<256x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<256x64xf32>
  return %0 : tensor<256x64xf32>
}

// -----

// The other high-level and primitive ops have no canonicalization: they
// come out as they went in.
// CHECK-LABEL: func.func @untouched
// CHECK: attn.efficient %{{.+}} variant softmax
// CHECK: attn.efficient %{{.+}} variant scaling
// CHECK: attn.matmul %{{.+}} transpose_rhs
// CHECK: attn.prefix_sum %{{.+}} dim 0
// CHECK: attn.causal_mask
// CHECK: attn.add
// CHECK: attn.deformable %{{.+}} levels [4x4]
func.func @untouched(%x: tensor<16x8xf32>, %v: tensor<1x16x2x4xf32>, %l: tensor<1x5x2x1x3x2xf32>, %w: tensor<1x5x2x1x3xf32>)
    -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<1x5x8xf32>) {
  %0 = attn.efficient %x, %x, %x variant softmax : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %1 = attn.efficient %x, %x, %x variant scaling : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %2 = attn.matmul %x, %x transpose_rhs : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x16xf32>
  %3 = attn.prefix_sum %x dim 0 : tensor<16x8xf32>
  %4 = attn.causal_mask %2 : tensor<16x16xf32>
  %5 = attn.add %x, %x : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %6 = attn.deformable %v, %l, %w levels [4x4] : tensor<1x16x2x4xf32>, tensor<1x5x2x1x3x2xf32>, tensor<1x5x2x1x3xf32> -> tensor<1x5x8xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<1x5x8xf32>
}

// -----

// The ops are Pure: results nobody uses are erased.
// CHECK-LABEL: func.func @dead_ops_erased
// CHECK-NOT: attn.
// CHECK: return
func.func @dead_ops_erased(%x: tensor<16x8xf32>) {
  %0 = attn.dot_product %x, %x, %x norm [softmax over keys] : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %1 = attn.normalize softmax %x dim 1 : tensor<16x8xf32>
  %2 = attn.scale %x by 2.0 : tensor<16x8xf32>
  return
}

// -----

// A product whose transpose was computed earlier reads that one with its
// transpose flag flipped (phi(K)^T V and V^T phi(K) in linear attention's
// gradient); the later twin is left dead and erased. Only the later one is
// replaced, and only when the shapes are each other's transpose.
// CHECK-LABEL: func.func @transposed_twin
// CHECK-SAME: (%[[K:[a-z0-9_]+]]: tensor<64x4xf32>, %[[V:[a-z0-9_]+]]: tensor<64x3xf32>, %[[G:[a-z0-9_]+]]: tensor<64x3xf32>)
// CHECK-NEXT: %[[C:[a-z0-9_]+]] = attn.matmul %[[K]], %[[V]] transpose_lhs : tensor<64x4xf32>, tensor<64x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[A:[a-z0-9_]+]] = attn.matmul %[[G]], %[[C]] transpose_rhs : tensor<64x3xf32>, tensor<4x3xf32> -> tensor<64x4xf32>
// CHECK-NEXT: %[[B:[a-z0-9_]+]] = attn.matmul %[[C]], %[[C]] transpose_lhs : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @transposed_twin(%k: tensor<64x4xf32>, %v: tensor<64x3xf32>, %g: tensor<64x3xf32>) -> (tensor<64x4xf32>, tensor<3x3xf32>) {
  %c = attn.matmul %k, %v transpose_lhs : tensor<64x4xf32>, tensor<64x3xf32> -> tensor<4x3xf32>
  %t = attn.matmul %v, %k transpose_lhs : tensor<64x3xf32>, tensor<64x4xf32> -> tensor<3x4xf32>
  %a = attn.matmul %g, %t : tensor<64x3xf32>, tensor<3x4xf32> -> tensor<64x4xf32>
  %b = attn.matmul %t, %c : tensor<3x4xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
  return %a, %b : tensor<64x4xf32>, tensor<3x3xf32>
}

// -----

// A contraction A^T B whose rhs also has its sums over the same positions
// (reduce_sum dim 0) is computed as B^T A, read transposed by its users
// (the gradient's V^T phi(K) next to phi(K)^T 1: the codegen computes the
// product and its lhs's column sums in one pass). A batched one alike.
// CHECK-LABEL: func.func @contract_with_column_sums
// CHECK-SAME: (%[[K:[a-z0-9_]+]]: tensor<64x4xf32>, %[[V:[a-z0-9_]+]]: tensor<64x3xf32>, %[[G:[a-z0-9_]+]]: tensor<64x3xf32>, %[[BK:[a-z0-9_]+]]: tensor<2x64x4xf32>, %[[BV:[a-z0-9_]+]]: tensor<2x64x3xf32>)
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = attn.reduce_sum %[[K]] dim 0
// CHECK-NEXT: %[[C:[a-z0-9_]+]] = attn.matmul %[[K]], %[[V]] transpose_lhs : tensor<64x4xf32>, tensor<64x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[A:[a-z0-9_]+]] = attn.matmul %[[G]], %[[C]] transpose_rhs : tensor<64x3xf32>, tensor<4x3xf32> -> tensor<64x4xf32>
// CHECK-NEXT: %[[B:[a-z0-9_]+]] = attn.matmul %[[C]], %[[C]] transpose_lhs : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
// CHECK-NEXT: %[[BS:[a-z0-9_]+]] = attn.reduce_sum %[[BK]] dim 1
// CHECK-NEXT: %[[BC:[a-z0-9_]+]] = attn.matmul %[[BK]], %[[BV]] transpose_lhs : tensor<2x64x4xf32>, tensor<2x64x3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[BA:[a-z0-9_]+]] = attn.matmul %[[BV]], %[[BC]] transpose_rhs : tensor<2x64x3xf32>, tensor<2x4x3xf32> -> tensor<2x64x4xf32>
// CHECK-NEXT: return %[[S]], %[[A]], %[[B]], %[[BS]], %[[BA]]
func.func @contract_with_column_sums(%k: tensor<64x4xf32>, %v: tensor<64x3xf32>, %g: tensor<64x3xf32>, %bk: tensor<2x64x4xf32>, %bv: tensor<2x64x3xf32>) -> (tensor<1x4xf32>, tensor<64x4xf32>, tensor<3x3xf32>, tensor<2x1x4xf32>, tensor<2x64x4xf32>) {
  %s = attn.reduce_sum %k dim 0 : tensor<64x4xf32> -> tensor<1x4xf32>
  %t = attn.matmul %v, %k transpose_lhs : tensor<64x3xf32>, tensor<64x4xf32> -> tensor<3x4xf32>
  %a = attn.matmul %g, %t : tensor<64x3xf32>, tensor<3x4xf32> -> tensor<64x4xf32>
  %b = attn.matmul %t, %t transpose_rhs : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x3xf32>
  %bs = attn.reduce_sum %bk dim 1 : tensor<2x64x4xf32> -> tensor<2x1x4xf32>
  %bt = attn.matmul %bv, %bk transpose_lhs : tensor<2x64x3xf32>, tensor<2x64x4xf32> -> tensor<2x3x4xf32>
  %ba = attn.matmul %bv, %bt : tensor<2x64x3xf32>, tensor<2x3x4xf32> -> tensor<2x64x4xf32>
  return %s, %a, %b, %bs, %ba : tensor<1x4xf32>, tensor<64x4xf32>, tensor<3x3xf32>, tensor<2x1x4xf32>, tensor<2x64x4xf32>
}

// -----

// Left alone: both operands have column sums (either orientation pairs a
// product with one of them), the sums are over another dim, or a user is
// not a product (it could not read the transpose).
// CHECK-LABEL: func.func @contract_with_column_sums_left_alone
// CHECK: attn.matmul %arg1, %arg0 transpose_lhs
// CHECK: attn.matmul %arg1, %arg2 transpose_lhs
// CHECK: attn.matmul %arg3, %arg0 transpose_lhs : tensor<64x3xf32>, tensor<64x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: attn.add
func.func @contract_with_column_sums_left_alone(%k: tensor<64x4xf32>, %v: tensor<64x3xf32>, %w: tensor<64x4xf32>, %g: tensor<64x3xf32>) -> (tensor<1x4xf32>, tensor<1x3xf32>, tensor<64x4xf32>, tensor<64x1xf32>, tensor<64x4xf32>, tensor<3x4xf32>) {
  %s = attn.reduce_sum %k dim 0 : tensor<64x4xf32> -> tensor<1x4xf32>
  %sv = attn.reduce_sum %v dim 0 : tensor<64x3xf32> -> tensor<1x3xf32>
  %t = attn.matmul %v, %k transpose_lhs : tensor<64x3xf32>, tensor<64x4xf32> -> tensor<3x4xf32>
  %a = attn.matmul %v, %t : tensor<64x3xf32>, tensor<3x4xf32> -> tensor<64x4xf32>
  %rows = attn.reduce_sum %w dim 1 : tensor<64x4xf32> -> tensor<64x1xf32>
  %u = attn.matmul %v, %w transpose_lhs : tensor<64x3xf32>, tensor<64x4xf32> -> tensor<3x4xf32>
  %b = attn.matmul %v, %u : tensor<64x3xf32>, tensor<3x4xf32> -> tensor<64x4xf32>
  %x = attn.matmul %g, %k transpose_lhs : tensor<64x3xf32>, tensor<64x4xf32> -> tensor<3x4xf32>
  %y = attn.add %x, %x : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %s, %sv, %a, %rows, %b, %y : tensor<1x4xf32>, tensor<1x3xf32>, tensor<64x4xf32>, tensor<64x1xf32>, tensor<64x4xf32>, tensor<3x4xf32>
}

// -----

// Not a twin: the same operands with the same flags (a duplicate, CSE's
// job), and products of other shapes, are left alone.
// CHECK-LABEL: func.func @not_a_twin
// CHECK: attn.matmul %arg0, %arg1 transpose_lhs
// CHECK: attn.matmul %arg1, %arg0 transpose_rhs
// CHECK: attn.matmul %arg2
func.func @not_a_twin(%k: tensor<4x4xf32>, %v: tensor<4x4xf32>, %g: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c = attn.matmul %k, %v transpose_lhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %t = attn.matmul %v, %k transpose_rhs : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %a = attn.matmul %g, %t : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %s = attn.add %a, %c : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// A sum over positions of (X W^T) o Y, with Y^T X computed earlier, is the
// sum over W o (Y^T X) along its rows (efficient attention's gradient: the
// column softmax's sum_n dK'[n,j] softmax(K)[n,j]), reshaped to a row; the
// product P = X W^T keeps only its other use.
// CHECK-LABEL: func.func @sum_of_product_rhs_transposed
// CHECK-SAME: (%[[Y:[a-z0-9_]+]]: tensor<64x4xf32>, %[[X:[a-z0-9_]+]]: tensor<64x3xf32>, %[[W:[a-z0-9_]+]]: tensor<4x3xf32>)
// CHECK-NEXT: %[[C:[a-z0-9_]+]] = attn.matmul %[[Y]], %[[X]] transpose_lhs : tensor<64x4xf32>, tensor<64x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[P:[a-z0-9_]+]] = attn.matmul %[[X]], %[[W]] transpose_rhs
// CHECK-NEXT: %[[WC:[a-z0-9_]+]] = attn.mul %[[W]], %[[C]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[COL:[a-z0-9_]+]] = attn.reduce_sum %[[WC]] dim 1 : tensor<4x3xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[FLAT:[a-z0-9_]+]] = tensor.collapse_shape %[[COL]] {{\[\[}}0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
// CHECK-NEXT: return %[[C]], %[[P]], %[[ROW]]
func.func @sum_of_product_rhs_transposed(%y: tensor<64x4xf32>, %x: tensor<64x3xf32>, %w: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<64x4xf32>, tensor<1x4xf32>) {
  %c = attn.matmul %y, %x transpose_lhs : tensor<64x4xf32>, tensor<64x3xf32> -> tensor<4x3xf32>
  %p = attn.matmul %x, %w transpose_rhs : tensor<64x3xf32>, tensor<4x3xf32> -> tensor<64x4xf32>
  %m = attn.mul %p, %y : tensor<64x4xf32>, tensor<64x4xf32> -> tensor<64x4xf32>
  %s = attn.reduce_sum %m dim 0 : tensor<64x4xf32> -> tensor<1x4xf32>
  return %c, %p, %s : tensor<4x3xf32>, tensor<64x4xf32>, tensor<1x4xf32>
}

// -----

// P = X W (W not transposed): the sum over dim 0 of W o (X^T Y) is already
// a row. The product operand may be either side of the mul.
// CHECK-LABEL: func.func @sum_of_product_plain
// CHECK-SAME: (%[[Y:[a-z0-9_]+]]: tensor<64x4xf32>, %[[X:[a-z0-9_]+]]: tensor<64x3xf32>, %[[W:[a-z0-9_]+]]: tensor<3x4xf32>)
// CHECK-NEXT: %[[C:[a-z0-9_]+]] = attn.matmul %[[X]], %[[Y]] transpose_lhs : tensor<64x3xf32>, tensor<64x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[WC:[a-z0-9_]+]] = attn.mul %[[W]], %[[C]] : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = attn.reduce_sum %[[WC]] dim 0 : tensor<3x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: return %[[C]], %[[ROW]]
func.func @sum_of_product_plain(%y: tensor<64x4xf32>, %x: tensor<64x3xf32>, %w: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<1x4xf32>) {
  %c = attn.matmul %x, %y transpose_lhs : tensor<64x3xf32>, tensor<64x4xf32> -> tensor<3x4xf32>
  %p = attn.matmul %x, %w : tensor<64x3xf32>, tensor<3x4xf32> -> tensor<64x4xf32>
  %m = attn.mul %y, %p : tensor<64x4xf32>, tensor<64x4xf32> -> tensor<64x4xf32>
  %s = attn.reduce_sum %m dim 0 : tensor<64x4xf32> -> tensor<1x4xf32>
  return %c, %s : tensor<3x4xf32>, tensor<1x4xf32>
}

// -----

// Left alone: no earlier contraction (it comes after the sum), a sum along
// rows, and a broadcasting mul.
// CHECK-LABEL: func.func @sum_of_product_left_alone
// CHECK-COUNT-3: attn.reduce_sum %{{.*}} dim {{[01]}} : tensor<64x4xf32>
// CHECK-NOT: tensor.expand_shape
func.func @sum_of_product_left_alone(%y: tensor<64x4xf32>, %x: tensor<64x3xf32>, %w: tensor<4x3xf32>, %r: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<4x3xf32>, tensor<64x1xf32>, tensor<1x4xf32>) {
  %p = attn.matmul %x, %w transpose_rhs : tensor<64x3xf32>, tensor<4x3xf32> -> tensor<64x4xf32>
  %m = attn.mul %p, %y : tensor<64x4xf32>, tensor<64x4xf32> -> tensor<64x4xf32>
  %s = attn.reduce_sum %m dim 0 : tensor<64x4xf32> -> tensor<1x4xf32>
  %c = attn.matmul %y, %x transpose_lhs : tensor<64x4xf32>, tensor<64x3xf32> -> tensor<4x3xf32>
  %rows = attn.reduce_sum %m dim 1 : tensor<64x4xf32> -> tensor<64x1xf32>
  %b = attn.mul %p, %r : tensor<64x4xf32>, tensor<1x4xf32> -> tensor<64x4xf32>
  %s2 = attn.reduce_sum %b dim 0 : tensor<64x4xf32> -> tensor<1x4xf32>
  return %s, %c, %rows, %s2 : tensor<1x4xf32>, tensor<4x3xf32>, tensor<64x1xf32>, tensor<1x4xf32>
}
