// RUN: attn-opt %s --attn-grad | FileCheck %s
//
// --attn-grad: the gradient @f_grad(args, dResults) -> dArgs of each
// function, built from the adjoint rules of its ops (design §7,
// docs/training.md). Every CHECK block below is one @f_grad, in full.

// Softmax attention, causal, with an additive mask broadcast over the
// heads that needs a gradient (an argument without attn.no_grad), in
// primitive form: P recomputed, dV = P^T dO, dP = dO V^T,
// dS = P (dP - rowsum(dP P)), hidden entries masked, then dQ = scale dS K and
// dK = scale dS^T Q; the mask's gradient is dS summed over the heads.
// CHECK-LABEL: func.func @causal_masked_grad(
// CHECK-SAME: %arg0: tensor<2x8x4xf32>, %arg1: tensor<2x8x4xf32>, %arg2: tensor<2x8x3xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<2x8x3xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<8x8xf32>) attributes {{[{]}}attn.gradient_of = @causal_masked}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg0, %arg1 transpose_rhs : tensor<2x8x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.scale %[[V0]] by 5.000000e-01 : tensor<2x8x8xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.add %[[V1]], %arg3 : tensor<2x8x8xf32>, tensor<8x8xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.causal_mask %[[V2]] : tensor<2x8x8xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.normalize softmax %[[V3]] dim 2 : tensor<2x8x8xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.matmul %arg4, %arg2 transpose_rhs : tensor<2x8x3xf32>, tensor<2x8x3xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT: %[[V6:[a-z0-9_]+]] = attn.matmul %[[V4]], %arg4 transpose_lhs : tensor<2x8x8xf32>, tensor<2x8x3xf32> -> tensor<2x8x3xf32>
// CHECK-NEXT: %[[V7:[a-z0-9_]+]] = attn.mul %[[V5]], %[[V4]] : tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT: %[[V8:[a-z0-9_]+]] = attn.reduce_sum %[[V7]] dim 2 : tensor<2x8x8xf32> -> tensor<2x8x1xf32>
// CHECK-NEXT: %[[V9:[a-z0-9_]+]] = attn.scale %[[V8]] by -1.000000e+00 : tensor<2x8x1xf32>
// CHECK-NEXT: %[[V10:[a-z0-9_]+]] = attn.add %[[V5]], %[[V9]] : tensor<2x8x8xf32>, tensor<2x8x1xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT: %[[V11:[a-z0-9_]+]] = attn.mul %[[V4]], %[[V10]] : tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT: %[[V12:[a-z0-9_]+]] = attn.causal_mask %[[V11]] fill 0.000000e+00 : tensor<2x8x8xf32>
// CHECK-NEXT: %[[V13:[a-z0-9_]+]] = attn.unbroadcast %[[V12]] like %arg3 : tensor<2x8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[V14:[a-z0-9_]+]] = attn.scale %[[V12]] by 5.000000e-01 : tensor<2x8x8xf32>
// CHECK-NEXT: %[[V15:[a-z0-9_]+]] = attn.matmul %[[V14]], %arg1 : tensor<2x8x8xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
// CHECK-NEXT: %[[V16:[a-z0-9_]+]] = attn.matmul %[[V14]], %arg0 transpose_lhs : tensor<2x8x8xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
// CHECK-NEXT: return %[[V15]], %[[V16]], %[[V6]], %[[V13]] : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<8x8xf32>
func.func @causal_masked(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x3xf32>, %mask: tensor<8x8xf32>) -> tensor<2x8x3xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 5.000000e-01 causal
      : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<8x8xf32> -> tensor<2x8x3xf32>
  return %o : tensor<2x8x3xf32>
}

// -----

// The same softmax attention with a mask that needs no gradient (an
// attn.no_grad argument): one fused attn.attention_grad that takes the
// mask (no n x m matrix); the mask gets no gradient.
// CHECK-LABEL: func.func @padded_softmax_grad(
// CHECK-SAME: %arg0: tensor<2x8x4xf32>, %arg1: tensor<2x8x4xf32>, %arg2: tensor<2x8x3xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<2x8x3xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>) attributes {{[{]}}attn.gradient_of = @padded_softmax}
// CHECK-NEXT: %[[DQ:[a-z0-9_]+]], %[[DK:[a-z0-9_]+]], %[[DV:[a-z0-9_]+]] = attn.attention_grad %arg0, %arg1, %arg2, %arg4 mask %arg3 scale 5.000000e-01 causal : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3xf32>, tensor<8x8xf32> -> tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>
// CHECK-NEXT: return %[[DQ]], %[[DK]], %[[DV]] : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>
func.func @padded_softmax(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x3xf32>, %mask: tensor<8x8xf32> {attn.no_grad}) -> tensor<2x8x3xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 5.000000e-01 causal
      : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<8x8xf32> -> tensor<2x8x3xf32>
  return %o : tensor<2x8x3xf32>
}

// -----

// Linear attention with elu+1 (sum over keys): the quotient rule of `sum`
// (row sums z = phi(Q) (phi(K)^T 1)), then dQ, dK, dV as attention ops over
// the transposed roles (grad-reassociate.mlir makes them linear), then
// attn.feature_map_grad on Q and K. rowsum(dO O) is rowsum(phi(Q) dN'),
// with dN' the numerator's adjoint in phi(Q) (V15, dQ's main term): the
// forward output is not recomputed.
// CHECK-LABEL: func.func @linear_grad(
// CHECK-SAME: %arg0: tensor<16x4xf32>, %arg1: tensor<16x4xf32>, %arg2: tensor<16x3xf32>, %arg3: tensor<16x3xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>) attributes {{[{]}}attn.gradient_of = @linear}
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.feature_map elu_plus_one %arg0 : tensor<16x4xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.feature_map elu_plus_one %arg1 : tensor<16x4xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.reduce_sum %[[V2]] dim 0 : tensor<16x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.matmul %[[V1]], %[[V3]] transpose_rhs : tensor<16x4xf32>, tensor<1x4xf32> -> tensor<16x1xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.scale %[[V4]] by 1.000000e+00 : tensor<16x1xf32>
// CHECK-NEXT: %[[V6:[a-z0-9_]+]] = attn.div %arg3, %[[V5]] : tensor<16x3xf32>, tensor<16x1xf32> -> tensor<16x3xf32>
// CHECK-NEXT: %[[V15:[a-z0-9_]+]] = attn.dot_product %[[V6]], %arg2, %[[V2]] norm [none over keys] : tensor<16x3xf32>, tensor<16x3xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V7:[a-z0-9_]+]] = attn.mul %[[V1]], %[[V15]] : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V8:[a-z0-9_]+]] = attn.reduce_sum %[[V7]] dim 1 : tensor<16x4xf32> -> tensor<16x1xf32>
// CHECK-NEXT: %[[V9:[a-z0-9_]+]] = attn.div %[[V8]], %[[V5]] : tensor<16x1xf32>, tensor<16x1xf32> -> tensor<16x1xf32>
// CHECK-NEXT: %[[V10:[a-z0-9_]+]] = attn.scale %[[V9]] by -1.000000e+00 : tensor<16x1xf32>
// CHECK-NEXT: %[[V11:[a-z0-9_]+]] = attn.mul %[[V10]], %[[V3]] : tensor<16x1xf32>, tensor<1x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V12:[a-z0-9_]+]] = attn.scale %[[V11]] by 1.000000e+00 : tensor<16x4xf32>
// CHECK-NEXT: %[[V13:[a-z0-9_]+]] = attn.matmul %[[V10]], %[[V1]] transpose_lhs : tensor<16x1xf32>, tensor<16x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[V14:[a-z0-9_]+]] = attn.scale %[[V13]] by 1.000000e+00 : tensor<1x4xf32>
// CHECK-NEXT: %[[V16:[a-z0-9_]+]] = attn.add %[[V15]], %[[V12]] : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V17:[a-z0-9_]+]] = attn.dot_product %arg2, %[[V6]], %[[V1]] norm [none over keys] : tensor<16x3xf32>, tensor<16x3xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V18:[a-z0-9_]+]] = attn.add %[[V17]], %[[V14]] : tensor<16x4xf32>, tensor<1x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V19:[a-z0-9_]+]] = attn.dot_product %[[V2]], %[[V1]], %[[V6]] norm [none over keys] : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
// CHECK-NEXT: %[[V20:[a-z0-9_]+]] = attn.feature_map_grad elu_plus_one %arg0, %[[V16]] : tensor<16x4xf32>
// CHECK-NEXT: %[[V21:[a-z0-9_]+]] = attn.feature_map_grad elu_plus_one %arg1, %[[V18]] : tensor<16x4xf32>
// CHECK-NEXT: return %[[V20]], %[[V21]], %[[V19]] : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>
func.func @linear(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>, %v: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}

// -----

// EANet: the two normalization rules in reverse order (sum over keys, then
// softmax over queries).
// CHECK-LABEL: func.func @external_grad(
// CHECK-SAME: %arg0: tensor<16x4xf32>, %arg1: tensor<6x4xf32>, %arg2: tensor<6x4xf32>, %arg3: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>) attributes {{[{]}}attn.gradient_of = @external}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg0, %arg1 transpose_rhs : tensor<16x4xf32>, tensor<6x4xf32> -> tensor<16x6xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.normalize softmax %[[V0]] dim 0 : tensor<16x6xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.normalize sum %[[V1]] dim 1 eps 1.000000e-09 : tensor<16x6xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.matmul %arg3, %arg2 transpose_rhs : tensor<16x4xf32>, tensor<6x4xf32> -> tensor<16x6xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.matmul %[[V2]], %arg3 transpose_lhs : tensor<16x6xf32>, tensor<16x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.reduce_sum %[[V1]] dim 1 : tensor<16x6xf32> -> tensor<16x1xf32>
// CHECK-NEXT: %[[V6:[a-z0-9_]+]] = attn.mul %[[V3]], %[[V2]] : tensor<16x6xf32>, tensor<16x6xf32> -> tensor<16x6xf32>
// CHECK-NEXT: %[[V7:[a-z0-9_]+]] = attn.reduce_sum %[[V6]] dim 1 : tensor<16x6xf32> -> tensor<16x1xf32>
// CHECK-NEXT: %[[V8:[a-z0-9_]+]] = attn.scale %[[V7]] by -1.000000e+00 : tensor<16x1xf32>
// CHECK-NEXT: %[[V9:[a-z0-9_]+]] = attn.add %[[V3]], %[[V8]] : tensor<16x6xf32>, tensor<16x1xf32> -> tensor<16x6xf32>
// CHECK-NEXT: %[[V10:[a-z0-9_]+]] = attn.div %[[V9]], %[[V5]] eps 1.000000e-09 : tensor<16x6xf32>, tensor<16x1xf32> -> tensor<16x6xf32>
// CHECK-NEXT: %[[V11:[a-z0-9_]+]] = attn.mul %[[V10]], %[[V1]] : tensor<16x6xf32>, tensor<16x6xf32> -> tensor<16x6xf32>
// CHECK-NEXT: %[[V12:[a-z0-9_]+]] = attn.reduce_sum %[[V11]] dim 0 : tensor<16x6xf32> -> tensor<1x6xf32>
// CHECK-NEXT: %[[V13:[a-z0-9_]+]] = attn.scale %[[V12]] by -1.000000e+00 : tensor<1x6xf32>
// CHECK-NEXT: %[[V14:[a-z0-9_]+]] = attn.add %[[V10]], %[[V13]] : tensor<16x6xf32>, tensor<1x6xf32> -> tensor<16x6xf32>
// CHECK-NEXT: %[[V15:[a-z0-9_]+]] = attn.mul %[[V1]], %[[V14]] : tensor<16x6xf32>, tensor<16x6xf32> -> tensor<16x6xf32>
// CHECK-NEXT: %[[V16:[a-z0-9_]+]] = attn.matmul %[[V15]], %arg1 : tensor<16x6xf32>, tensor<6x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V17:[a-z0-9_]+]] = attn.matmul %[[V15]], %arg0 transpose_lhs : tensor<16x6xf32>, tensor<16x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: return %[[V16]], %[[V17]], %[[V4]] : tensor<16x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>
func.func @external(%x: tensor<16x4xf32>, %mk: tensor<6x4xf32>, %mv: tensor<6x4xf32>) -> tensor<16x4xf32> {
  %o = attn.external %x, %mk, %mv : tensor<16x4xf32>, tensor<6x4xf32>, tensor<6x4xf32> -> tensor<16x4xf32>
  return %o : tensor<16x4xf32>
}

// -----

// Efficient attention, softmax variant: the context K^T V first, so every
// product of the gradient is n x d by d x d (linear in n).
// CHECK-LABEL: func.func @efficient_softmax_grad(
// CHECK-SAME: %arg0: tensor<16x4xf32>, %arg1: tensor<16x4xf32>, %arg2: tensor<16x3xf32>, %arg3: tensor<16x3xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>) attributes {{[{]}}attn.gradient_of = @efficient_softmax}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.normalize softmax %arg0 dim 1 : tensor<16x4xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.normalize softmax %arg1 dim 0 : tensor<16x4xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.matmul %[[V1]], %arg2 transpose_lhs : tensor<16x4xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.matmul %arg3, %[[V2]] transpose_rhs : tensor<16x3xf32>, tensor<4x3xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.matmul %[[V0]], %arg3 transpose_lhs : tensor<16x4xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.matmul %arg2, %[[V4]] transpose_rhs : tensor<16x3xf32>, tensor<4x3xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V6:[a-z0-9_]+]] = attn.matmul %[[V1]], %[[V4]] : tensor<16x4xf32>, tensor<4x3xf32> -> tensor<16x3xf32>
// CHECK-NEXT: %[[V7:[a-z0-9_]+]] = attn.mul %[[V5]], %[[V1]] : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V8:[a-z0-9_]+]] = attn.reduce_sum %[[V7]] dim 0 : tensor<16x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[V9:[a-z0-9_]+]] = attn.scale %[[V8]] by -1.000000e+00 : tensor<1x4xf32>
// CHECK-NEXT: %[[V10:[a-z0-9_]+]] = attn.add %[[V5]], %[[V9]] : tensor<16x4xf32>, tensor<1x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V11:[a-z0-9_]+]] = attn.mul %[[V1]], %[[V10]] : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V12:[a-z0-9_]+]] = attn.mul %[[V3]], %[[V0]] : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V13:[a-z0-9_]+]] = attn.reduce_sum %[[V12]] dim 1 : tensor<16x4xf32> -> tensor<16x1xf32>
// CHECK-NEXT: %[[V14:[a-z0-9_]+]] = attn.scale %[[V13]] by -1.000000e+00 : tensor<16x1xf32>
// CHECK-NEXT: %[[V15:[a-z0-9_]+]] = attn.add %[[V3]], %[[V14]] : tensor<16x4xf32>, tensor<16x1xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V16:[a-z0-9_]+]] = attn.mul %[[V0]], %[[V15]] : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: return %[[V16]], %[[V11]], %[[V6]] : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>
func.func @efficient_softmax(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>, %v: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}

// -----

// Scaling variant: Q (K^T V) / n as a count over the rows.
// CHECK-LABEL: func.func @efficient_scaling_grad(
// CHECK-SAME: %arg0: tensor<16x4xf32>, %arg1: tensor<16x4xf32>, %arg2: tensor<16x3xf32>, %arg3: tensor<16x3xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>) attributes {{[{]}}attn.gradient_of = @efficient_scaling}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg1, %arg2 transpose_lhs : tensor<16x4xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.normalize count %arg3 dim 0 : tensor<16x3xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.matmul %[[V1]], %[[V0]] transpose_rhs : tensor<16x3xf32>, tensor<4x3xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.matmul %arg0, %[[V1]] transpose_lhs : tensor<16x4xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.matmul %arg2, %[[V3]] transpose_rhs : tensor<16x3xf32>, tensor<4x3xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.matmul %arg1, %[[V3]] : tensor<16x4xf32>, tensor<4x3xf32> -> tensor<16x3xf32>
// CHECK-NEXT: return %[[V2]], %[[V4]], %[[V5]] : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>
func.func @efficient_scaling(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>, %v: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %o = attn.efficient %q, %k, %v variant scaling
      : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}

// -----

// Softmax attention without a mask: one fused attn.attention_grad (the
// FlashAttention-2 recomputation; no n x m matrix in the gradient), on
// phi(Q) and phi(K); K and V are shared by the 3 query heads, so their
// gradients (over the broadcast batch) are summed down by attn.unbroadcast
// before the feature map's derivative.
// CHECK-LABEL: func.func @grouped_softmax_grad(
// CHECK-SAME: %arg0: tensor<2x3x8x4xf32>, %arg1: tensor<2x1x6x4xf32>, %arg2: tensor<2x1x6x5xf32>, %arg3: tensor<2x3x8x5xf32>) -> (tensor<2x3x8x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x5xf32>) attributes {{[{]}}attn.gradient_of = @grouped_softmax}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.feature_map relu %arg0 : tensor<2x3x8x4xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.feature_map relu %arg1 : tensor<2x1x6x4xf32>
// CHECK-NEXT: %[[DQ:[a-z0-9_]+]], %[[DK:[a-z0-9_]+]], %[[DV:[a-z0-9_]+]] = attn.attention_grad %[[V0]], %[[V1]], %arg2, %arg3 scale 2.500000e-01 causal : tensor<2x3x8x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x5xf32>, tensor<2x3x8x5xf32> -> tensor<2x3x8x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x5xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.feature_map_grad relu %arg0, %[[DQ]] : tensor<2x3x8x4xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.unbroadcast %[[DK]] like %arg1 : tensor<2x3x6x4xf32>, tensor<2x1x6x4xf32> -> tensor<2x1x6x4xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.feature_map_grad relu %arg1, %[[V3]] : tensor<2x1x6x4xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.unbroadcast %[[DV]] like %arg2 : tensor<2x3x6x5xf32>, tensor<2x1x6x5xf32> -> tensor<2x1x6x5xf32>
// CHECK-NEXT: return %[[V2]], %[[V4]], %[[V5]] : tensor<2x3x8x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x5xf32>
func.func @grouped_softmax(%q: tensor<2x3x8x4xf32>, %k: tensor<2x1x6x4xf32>, %v: tensor<2x1x6x5xf32>) -> tensor<2x3x8x5xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01 feature_map relu causal
      : tensor<2x3x8x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x5xf32> -> tensor<2x3x8x5xf32>
  return %o : tensor<2x3x8x5xf32>
}
