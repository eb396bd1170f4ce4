// RUN: attn-opt %s --attn-grad | FileCheck %s
//
// --attn-grad: the gradient @f_grad(args, dResults) -> dArgs of each
// function, built from the adjoint rules of its ops (design §7,
// docs/training.md). Every CHECK block below is one @f_grad, in full.

// add: each operand's gradient is dy summed over the dims it was
// broadcast in (none for %a).
// CHECK-LABEL: func.func @add_broadcast_grad(
// CHECK-SAME: %arg0: tensor<2x4x3xf32>, %arg1: tensor<1x3xf32>, %arg2: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<1x3xf32>) attributes {{[{]}}attn.gradient_of = @add_broadcast}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.unbroadcast %arg2 like %arg1 : tensor<2x4x3xf32>, tensor<1x3xf32> -> tensor<1x3xf32>
// CHECK-NEXT: return %arg2, %[[V0]] : tensor<2x4x3xf32>, tensor<1x3xf32>
func.func @add_broadcast(%a: tensor<2x4x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x4x3xf32> {
  %c = attn.add %a, %b : tensor<2x4x3xf32>, tensor<1x3xf32> -> tensor<2x4x3xf32>
  return %c : tensor<2x4x3xf32>
}

// -----

// mul: dA = dy B, dB = unbroadcast(dy A); div y = l / (r + eps):
// dl = dy / (r + eps), dr = -(dy y) / (r + eps). %b is used twice: its two
// gradients are added.
// CHECK-LABEL: func.func @mul_div_grad(
// CHECK-SAME: %arg0: tensor<4x3xf32>, %arg1: tensor<4x1xf32>, %arg2: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x1xf32>) attributes {{[{]}}attn.gradient_of = @mul_div}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.mul %arg0, %arg1 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.div %[[V0]], %arg1 eps 5.000000e-01 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.div %arg2, %arg1 eps 5.000000e-01 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.mul %arg2, %[[V1]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.div %[[V3]], %arg1 eps 5.000000e-01 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.scale %[[V4]] by -1.000000e+00 : tensor<4x3xf32>
// CHECK-NEXT: %[[V6:[a-z0-9_]+]] = attn.unbroadcast %[[V5]] like %arg1 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[V7:[a-z0-9_]+]] = attn.mul %[[V2]], %arg1 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V8:[a-z0-9_]+]] = attn.mul %[[V2]], %arg0 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V9:[a-z0-9_]+]] = attn.unbroadcast %[[V8]] like %arg1 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[V10:[a-z0-9_]+]] = attn.add %[[V6]], %[[V9]] : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: return %[[V7]], %[[V10]] : tensor<4x3xf32>, tensor<4x1xf32>
func.func @mul_div(%a: tensor<4x3xf32>, %b: tensor<4x1xf32>) -> tensor<4x3xf32> {
  %c = attn.mul %a, %b : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  %d = attn.div %c, %b eps 5.000000e-01 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  return %d : tensor<4x3xf32>
}

// -----

// Feature maps: attn.feature_map_grad (identity passes dy through); scale:
// the same factor.
// CHECK-LABEL: func.func @maps_grad(
// CHECK-SAME: %arg0: tensor<4x3xf32>, %arg1: tensor<4x3xf32>) -> tensor<4x3xf32> attributes {{[{]}}attn.gradient_of = @maps}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.feature_map elu_plus_one %arg0 : tensor<4x3xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.scale %arg1 by 2.500000e-01 : tensor<4x3xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.feature_map_grad relu %[[V0]], %[[V1]] : tensor<4x3xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.feature_map_grad elu_plus_one %arg0, %[[V2]] : tensor<4x3xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4x3xf32>
func.func @maps(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = attn.feature_map elu_plus_one %x : tensor<4x3xf32>
  %r = attn.feature_map relu %e : tensor<4x3xf32>
  %i = attn.feature_map identity %r : tensor<4x3xf32>
  %s = attn.scale %i by 2.500000e-01 : tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

// Prefix sums: the reverse (suffix) sum, exclusive where the forward was.
// CHECK-LABEL: func.func @scans_grad(
// CHECK-SAME: %arg0: tensor<8x3xf32>, %arg1: tensor<8x3xf32>) -> tensor<8x3xf32> attributes {{[{]}}attn.gradient_of = @scans}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.prefix_sum %arg1 dim 0 exclusive reverse : tensor<8x3xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.prefix_sum %[[V0]] dim 0 reverse : tensor<8x3xf32>
// CHECK-NEXT: return %[[V1]] : tensor<8x3xf32>
func.func @scans(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %p = attn.prefix_sum %x dim 0 : tensor<8x3xf32>
  %e = attn.prefix_sum %p dim 0 exclusive : tensor<8x3xf32>
  return %e : tensor<8x3xf32>
}

// -----

// reduce_sum: dy broadcast back; causal_mask: a causal mask of 0 on dy
// (hidden entries get no gradient); floor: no gradient.
// CHECK-LABEL: func.func @mask_reduce_floor_grad(
// CHECK-SAME: %arg0: tensor<4x4xf32>, %arg1: tensor<4x1xf32>, %arg2: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {{[{]}}attn.gradient_of = @mask_reduce_floor}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.causal_mask %arg0 fill 0.000000e+00 : tensor<4x4xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.broadcast %arg1 like %[[V0]] : tensor<4x1xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.causal_mask %[[V1]] fill 0.000000e+00 : tensor<4x4xf32>
// CHECK-NEXT: return %[[V2]] : tensor<4x4xf32>
func.func @mask_reduce_floor(%s: tensor<4x4xf32>) -> (tensor<4x1xf32>, tensor<4x4xf32>) {
  %m = attn.causal_mask %s fill 0.000000e+00 : tensor<4x4xf32>
  %r = attn.reduce_sum %m dim 1 : tensor<4x4xf32> -> tensor<4x1xf32>
  %f = attn.floor %s : tensor<4x4xf32>
  return %r, %f : tensor<4x1xf32>, tensor<4x4xf32>
}

// -----

// Reshapes and casts: the inverse reshape, the cast back.
// CHECK-LABEL: func.func @reshapes_grad(
// CHECK-SAME: %arg0: tensor<2x6xf32>, %arg1: tensor<?x3xf32>) -> tensor<2x6xf32> attributes {{[{]}}attn.gradient_of = @reshapes}
// CHECK-NEXT: %[[Vcast:[a-z0-9_]+]] = tensor.cast %arg1 : tensor<?x3xf32> to tensor<4x3xf32>
// CHECK-NEXT: %[[Vexpanded:[a-z0-9_]+]] = tensor.expand_shape %[[Vcast]] {{\[\[}}0, 1], [2]] output_shape [2, 2, 3] : tensor<4x3xf32> into tensor<2x2x3xf32>
// CHECK-NEXT: %[[Vcollapsed:[a-z0-9_]+]] = tensor.collapse_shape %[[Vexpanded]] {{\[\[}}0], [1, 2]] : tensor<2x2x3xf32> into tensor<2x6xf32>
// CHECK-NEXT: return %[[Vcollapsed]] : tensor<2x6xf32>
func.func @reshapes(%x: tensor<2x6xf32>) -> tensor<?x3xf32> {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 3] : tensor<2x6xf32> into tensor<2x2x3xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2]] : tensor<2x2x3xf32> into tensor<4x3xf32>
  %d = tensor.cast %c : tensor<4x3xf32> to tensor<?x3xf32>
  return %d : tensor<?x3xf32>
}
