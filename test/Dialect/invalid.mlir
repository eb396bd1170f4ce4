// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier, shape rule and parser error of the attn dialect.
//
// Shape rules run inside inferReturnTypes (AttnShapes.cpp), so each shape
// error is followed by upstream's generic "'attn.<op>' op failed to infer
// returned types" (mlir::detail::verifyInferredResultTypes); those cases
// expect both. Doubles in messages print through raw_ostream, hence "INF",
// "nan" and "-1.000000e+00".

//===----------------------------------------------------------------------===//
// ODS operand and attribute constraints
//===----------------------------------------------------------------------===//

// Integer tensors are not attention operands.
func.func @integer_tensor(%x: tensor<4x4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x4xi32>'}}
  %0 = attn.scale %x by 2.0 : tensor<4x4xi32>
  return
}

// -----

// 8-bit floats are not storage types attn accepts (bf16 and f16 are).
func.func @f8_tensor(%a: tensor<4x4xf8E4M3FN>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x4xf8E4M3FN>'}}
  %0 = attn.matmul %a, %a : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN> -> tensor<4x4xf8E4M3FN>
  return
}

// -----

// Operands share one element type, also in reduced precision.
func.func @mixed_operand_types(%a: tensor<4x4xbf16>, %b: tensor<4x4xf32>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{operands must share one element type, got 'bf16' and 'f32'}}
  %0 = attn.matmul %a, %b : tensor<4x4xbf16>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// A result may round to another of bf16, f16 and f32, but f64 mixes with
// none of them.
func.func @f64_result_of_f32(%a: tensor<4x4xf32>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{'attn.matmul' op inferred type(s) 'tensor<4x4xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf64>'}}
  %0 = attn.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf64>
  return
}

// -----

func.func @f16_result_of_f64(%a: tensor<4x4xf64>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{'attn.matmul' op inferred type(s) 'tensor<4x4xf64>' are incompatible with return type(s) of operation 'tensor<4x4xf16>'}}
  %0 = attn.matmul %a, %a : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf16>
  return
}

// -----

// Pixel coordinates are integers a 16-bit float holds exactly only up to
// 256 (bf16) or 2048 (f16).
func.func @bf16_pixels(%value: tensor<1x20x2x4xbf16>, %pixels: tensor<1x3x2x1x2x2xbf16>) {
  // expected-error @+1 {{'attn.gather_pixels' op pixels must be f32 or f64 (a 'bf16' pixel coordinate is exact only up to 256), got 'tensor<1x3x2x1x2x2xbf16>'}}
  %0 = attn.gather_pixels %value, %pixels levels [4x5] : tensor<1x20x2x4xbf16>, tensor<1x3x2x1x2x2xbf16> -> tensor<1x3x2x1x2x4xbf16>
  return
}

// -----

func.func @f16_pixels(%cotangent: tensor<1x3x2x1x2x4xf16>, %pixels: tensor<1x3x2x1x2x2xf16>) {
  // expected-error @+1 {{'attn.scatter_pixels' op pixels must be f32 or f64 (a 'f16' pixel coordinate is exact only up to 2048), got 'tensor<1x3x2x1x2x2xf16>'}}
  %0 = attn.scatter_pixels %cotangent, %pixels levels [4x5] : tensor<1x3x2x1x2x4xf16>, tensor<1x3x2x1x2x2xf16> -> tensor<1x20x2x4xf16>
  return
}

// -----

// Unranked tensors are rejected (generic form: the custom syntax cannot
// infer anything from them).
func.func @unranked_tensor(%x: tensor<*xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<*xf32>'}}
  %0 = "attn.add"(%x, %x) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

// A negative `dim` fails the IntNonNegative constraint of normalize.
func.func @normalize_negative_dim(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = attn.normalize softmax %x dim -1 : tensor<4x4xf32>
  return
}

// -----

// ... and of prefix_sum.
func.func @prefix_sum_negative_dim(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = attn.prefix_sum %x dim -1 : tensor<4x4xf32>
  return
}

// -----

// Elementwise ops keep their operand type (SameOperandsAndResultType).
func.func @scale_result_type(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "attn.scale"(%x) <{factor = 2.0 : f64}> : (tensor<4x4xf32>) -> tensor<4x4xf64>
  return
}

// -----

// The norm list is required.
func.func @dot_product_no_norm(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{requires attribute 'norm'}}
  %0 = "attn.dot_product"(%x, %x, %x) : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

// Every element of the norm list must be a #attn.norm step.
func.func @dot_product_norm_not_steps(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{attribute 'norm' failed to satisfy constraint: ordered list of normalization steps}}
  %0 = "attn.dot_product"(%x, %x, %x) <{norm = [1 : i64]}> : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Enum keywords and the norm step syntax
//===----------------------------------------------------------------------===//

// -----

func.func @unknown_norm_kind(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{unknown normalization kind 'max'; expected softmax, sum, count or none}}
  %0 = attn.dot_product %x, %x, %x norm [max over keys] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @unknown_norm_axis(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{unknown normalization axis 'rows'; expected keys or queries}}
  %0 = attn.dot_product %x, %x, %x norm [softmax over rows] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// A step is `kind over axis`.
func.func @norm_missing_over(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{expected 'over'}}
  %0 = attn.dot_product %x, %x, %x norm [softmax keys] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// The list is bracketed.
func.func @norm_missing_brackets(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{expected '['}}
  %0 = attn.dot_product %x, %x, %x norm softmax over keys : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// NormStepAttr::verify: eps must be >= 0 ...
func.func @norm_negative_eps(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{eps must be finite and >= 0, got -1.0}}
  %0 = attn.dot_product %x, %x, %x norm [sum over keys eps -1.0] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// ... and finite (+inf written as its f64 bit pattern) ...
func.func @norm_infinite_eps(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{eps must be finite and >= 0, got INF}}
  %0 = attn.dot_product %x, %x, %x norm [sum over keys eps 0x7FF0000000000000] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// ... and not NaN.
func.func @norm_nan_eps(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{eps must be finite and >= 0, got nan}}
  %0 = attn.dot_product %x, %x, %x norm [sum over queries eps 0x7FF8000000000000] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// eps only means something for `sum`.
func.func @norm_eps_on_softmax(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{eps only applies to 'sum' normalization, not 'softmax'}}
  %0 = attn.dot_product %x, %x, %x norm [softmax over keys eps 1.0e-9] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @norm_eps_on_count(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{eps only applies to 'sum' normalization, not 'count'}}
  %0 = attn.dot_product %x, %x, %x norm [sum over keys, count over queries eps 0.5] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// The same rules hold for the standalone attribute.
// expected-error @+1 {{eps only applies to 'sum' normalization, not 'none'}}
func.func @norm_attr_eps_on_none() attributes {step = #attn.norm<none over keys eps 1.0>} {
  return
}

// -----

// expected-error @+1 {{unknown normalization kind 'mean'; expected softmax, sum, count or none}}
func.func @norm_attr_unknown_kind() attributes {step = #attn.norm<mean over keys>} {
  return
}

// -----

func.func @unknown_feature_map(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [identity, elu_plus_one, relu]}}
  %0 = attn.feature_map gelu %x : tensor<4x4xf32>
  return
}

// -----

func.func @unknown_normalize_kind(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [softmax, sum, count, none]}}
  %0 = attn.normalize max %x dim 0 : tensor<4x4xf32>
  return
}

// -----

func.func @unknown_efficient_variant(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'variant' [softmax, scaling]}}
  %0 = attn.efficient %x, %x, %x variant count : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Element types and result types (all inferred-shape ops)
//===----------------------------------------------------------------------===//

// -----

func.func @mixed_element_types(%a: tensor<4x8xf32>, %b: tensor<8x4xf64>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{operands must share one element type, got 'f32' and 'f64'}}
  %0 = attn.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf64> -> tensor<4x4xf32>
  return
}

// -----

// The mask is an operand like the others.
func.func @mask_element_type(%x: tensor<4x4xf32>, %m: tensor<4x4xf64>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{operands must share one element type, got 'f32' and 'f64'}}
  %0 = attn.dot_product %x, %x, %x mask %m norm [softmax over keys] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf64> -> tensor<4x4xf32>
  return
}

// -----

// A result whose static dims contradict the inferred shape.
func.func @matmul_wrong_result(%a: tensor<128x64xf32>, %b: tensor<64x32xf32>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{'attn.matmul' op inferred type(s) 'tensor<128x32xf32>' are incompatible with return type(s) of operation 'tensor<128x64xf32>'}}
  %0 = attn.matmul %a, %b : tensor<128x64xf32>, tensor<64x32xf32> -> tensor<128x64xf32>
  return
}

// -----

// The result's element type is the operands'.
func.func @result_element_type(%x: tensor<4x4xf32>) {
  // expected-error @+2 {{'attn.add' op failed to infer returned types}}
  // expected-error @+1 {{'attn.add' op inferred type(s) 'tensor<4x4xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf64>'}}
  %0 = attn.add %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf64>
  return
}

// -----

// The result's rank is the inferred one (broadcast rank).
func.func @result_rank(%x: tensor<4x4xf32>, %y: tensor<2x4x4xf32>) {
  // expected-error @+2 {{'attn.add' op failed to infer returned types}}
  // expected-error @+1 {{'attn.add' op inferred type(s) 'tensor<2x4x4xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf32>'}}
  %0 = attn.add %x, %y : tensor<4x4xf32>, tensor<2x4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// Attention results are (..., n, dv), not (..., n, dk).
func.func @dot_product_wrong_result(%q: tensor<8x128x64xf32>, %v: tensor<8x128x32xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{'attn.dot_product' op inferred type(s) 'tensor<8x128x32xf32>' are incompatible with return type(s) of operation 'tensor<8x128x64xf32>'}}
  %0 = attn.dot_product %q, %q, %v norm [softmax over keys] : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x32xf32> -> tensor<8x128x64xf32>
  return
}

// -----

// Deformable results merge heads and channels: M x D = 4 x 8 = 32.
func.func @deformable_wrong_result(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>, %w: tensor<1x10x4x1x4xf32>) {
  // expected-error @+2 {{'attn.deformable' op failed to infer returned types}}
  // expected-error @+1 {{'attn.deformable' op inferred type(s) 'tensor<1x10x32xf32>' are incompatible with return type(s) of operation 'tensor<1x10x4x8xf32>'}}
  %0 = attn.deformable %v, %l, %w levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x2xf32>, tensor<1x10x4x1x4xf32> -> tensor<1x10x4x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// attn.matmul shape rules
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_lhs_rank(%a: tensor<64xf32>, %b: tensor<64x32xf32>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{lhs must have rank >= 2 (rows, columns), got rank 1}}
  %0 = attn.matmul %a, %b : tensor<64xf32>, tensor<64x32xf32> -> tensor<32xf32>
  return
}

// -----

func.func @matmul_rhs_rank(%a: tensor<4x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{rhs must have rank >= 2 (rows, columns), got rank 1}}
  %0 = attn.matmul %a, %b : tensor<4x64xf32>, tensor<64xf32> -> tensor<4xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<128x64xf32>, %b: tensor<32x64xf32>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{contraction dims differ: lhs 128x64 has 64, rhs 32x64 has 32}}
  %0 = attn.matmul %a, %b : tensor<128x64xf32>, tensor<32x64xf32> -> tensor<128x64xf32>
  return
}

// -----

// The message says which operand is read transposed.
func.func @matmul_contraction_transposed(%a: tensor<128x64xf32>, %b: tensor<64x32xf32>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{contraction dims differ: lhs 128x64 (transposed) has 128, rhs 64x32 (transposed) has 32}}
  %0 = attn.matmul %a, %b transpose_lhs transpose_rhs : tensor<128x64xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error @+2 {{'attn.matmul' op failed to infer returned types}}
  // expected-error @+1 {{shapes of the leading dims of lhs and rhs (2 and 3) do not broadcast}}
  %0 = attn.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x4xf32> -> tensor<2x4x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Attention shape rules (dot_product, efficient, external)
//===----------------------------------------------------------------------===//

// -----

func.func @query_rank(%q: tensor<64xf32>, %k: tensor<8x64xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{query must have rank >= 2 (..., positions, features), got rank 1}}
  %0 = attn.dot_product %q, %k, %k norm [softmax over keys] : tensor<64xf32>, tensor<8x64xf32>, tensor<8x64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @key_rank(%q: tensor<8x64xf32>, %k: tensor<64xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{key must have rank >= 2 (..., positions, features), got rank 1}}
  %0 = attn.dot_product %q, %k, %q norm [softmax over keys] : tensor<8x64xf32>, tensor<64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  return
}

// -----

func.func @value_rank(%q: tensor<8x64xf32>, %v: tensor<64xf32>) {
  // expected-error @+2 {{'attn.efficient' op failed to infer returned types}}
  // expected-error @+1 {{value must have rank >= 2 (..., positions, features), got rank 1}}
  %0 = attn.efficient %q, %q, %v variant softmax : tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return
}

// -----

// Q and K must have the same dk.
func.func @features_mismatch(%q: tensor<128x64xf32>, %k: tensor<128x32xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{query has 64 features but key has 32}}
  %0 = attn.dot_product %q, %k, %k norm [softmax over keys] : tensor<128x64xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<128x32xf32>
  return
}

// -----

// K and V must have the same m.
func.func @positions_mismatch(%q: tensor<128x64xf32>, %k: tensor<100x64xf32>, %v: tensor<99x64xf32>) {
  // expected-error @+2 {{'attn.efficient' op failed to infer returned types}}
  // expected-error @+1 {{key has 100 positions but value has 99}}
  %0 = attn.efficient %q, %k, %v variant scaling : tensor<128x64xf32>, tensor<100x64xf32>, tensor<99x64xf32> -> tensor<128x64xf32>
  return
}

// -----

// Leading dims of Q and K that neither equal nor are 1.
func.func @leading_dims_query_key(%q: tensor<2x8x16x4xf32>, %k: tensor<2x4x16x4xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{shapes of the leading dims of query, key and value (2x8 and 2x4) do not broadcast}}
  %0 = attn.dot_product %q, %k, %k norm [softmax over keys] : tensor<2x8x16x4xf32>, tensor<2x4x16x4xf32>, tensor<2x4x16x4xf32> -> tensor<2x8x16x4xf32>
  return
}

// -----

// ... and of V against the broadcast of Q and K.
func.func @leading_dims_value(%q: tensor<2x8x16x4xf32>, %v: tensor<3x1x16x4xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{shapes of the leading dims of query, key and value (2x8 and 3x1) do not broadcast}}
  %0 = attn.dot_product %q, %q, %v norm [softmax over keys] : tensor<2x8x16x4xf32>, tensor<2x8x16x4xf32>, tensor<3x1x16x4xf32> -> tensor<2x8x16x4xf32>
  return
}

// -----

func.func @mask_rank(%x: tensor<16x4xf32>, %m: tensor<16xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{mask must have rank >= 2 (..., queries, keys), got rank 1}}
  %0 = attn.dot_product %x, %x, %x mask %m norm [softmax over keys] : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32> -> tensor<16x4xf32>
  return
}

// -----

// The mask is n x m (queries x keys), not m x n.
func.func @mask_shape(%q: tensor<16x4xf32>, %k: tensor<8x4xf32>, %m: tensor<8x16xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{mask must be 16x8 (queries x keys) in its last two dims, got 8x16}}
  %0 = attn.dot_product %q, %k, %k mask %m norm [softmax over keys] : tensor<16x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x16xf32> -> tensor<16x4xf32>
  return
}

// -----

// With a dynamic query count the message shows `?`.
func.func @mask_shape_dynamic(%q: tensor<?x4xf32>, %k: tensor<8x4xf32>, %m: tensor<16x9xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{mask must be ?x8 (queries x keys) in its last two dims, got 16x9}}
  %0 = attn.dot_product %q, %k, %k mask %m norm [softmax over keys] : tensor<?x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<16x9xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @mask_leading_dims(%x: tensor<2x16x4xf32>, %m: tensor<3x16x16xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{shapes of the leading dims of mask and the attention operands (2 and 3) do not broadcast}}
  %0 = attn.dot_product %x, %x, %x mask %m norm [softmax over keys] : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<3x16x16xf32> -> tensor<2x16x4xf32>
  return
}

// -----

// External attention names its operands input, memory_key, memory_value.
func.func @external_rank(%x: tensor<64xf32>, %mk: tensor<16x64xf32>) {
  // expected-error @+2 {{'attn.external' op failed to infer returned types}}
  // expected-error @+1 {{input must have rank >= 2 (..., positions, features), got rank 1}}
  %0 = attn.external %x, %mk, %mk : tensor<64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @external_features(%x: tensor<256x64xf32>, %mk: tensor<16x32xf32>, %mv: tensor<16x64xf32>) {
  // expected-error @+2 {{'attn.external' op failed to infer returned types}}
  // expected-error @+1 {{input has 64 features but memory_key has 32}}
  %0 = attn.external %x, %mk, %mv : tensor<256x64xf32>, tensor<16x32xf32>, tensor<16x64xf32> -> tensor<256x64xf32>
  return
}

// -----

func.func @external_slots(%x: tensor<256x64xf32>, %mk: tensor<16x64xf32>, %mv: tensor<8x64xf32>) {
  // expected-error @+2 {{'attn.external' op failed to infer returned types}}
  // expected-error @+1 {{memory_key has 16 positions but memory_value has 8}}
  %0 = attn.external %x, %mk, %mv : tensor<256x64xf32>, tensor<16x64xf32>, tensor<8x64xf32> -> tensor<256x64xf32>
  return
}

// -----

func.func @external_leading_dims(%x: tensor<2x256x64xf32>, %mk: tensor<3x16x64xf32>) {
  // expected-error @+2 {{'attn.external' op failed to infer returned types}}
  // expected-error @+1 {{shapes of the leading dims of input, memory_key and memory_value (2 and 3) do not broadcast}}
  %0 = attn.external %x, %mk, %mk : tensor<2x256x64xf32>, tensor<3x16x64xf32>, tensor<3x16x64xf32> -> tensor<2x256x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// Attribute verifiers of the attention ops
//===----------------------------------------------------------------------===//

// -----

// +inf written as its f64 bit pattern.
func.func @scale_infinite(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.dot_product' op scale must be finite, got INF}}
  %0 = attn.dot_product %x, %x, %x norm [softmax over keys] scale 0x7FF0000000000000 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @scale_nan(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.dot_product' op scale must be finite, got nan}}
  %0 = attn.dot_product %x, %x, %x norm [softmax over keys] scale 0x7FF8000000000000 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @external_negative_eps(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.external' op eps must be finite and >= 0, got -1.0}}
  %0 = attn.external %x, %x, %x eps -1.0 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @external_infinite_eps(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.external' op eps must be finite and >= 0, got INF}}
  %0 = attn.external %x, %x, %x eps 0x7FF0000000000000 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// attn.deformable and attn.bilinear_gather
//===----------------------------------------------------------------------===//

// -----

// A level is HxW: not one size ...
func.func @level_one_size(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+1 {{expected a level as HxW, got 1 sizes}}
  %0 = attn.bilinear_gather %v, %l levels [16] : tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

// ... nor three ...
func.func @level_three_sizes(%v: tensor<1x64x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+1 {{expected a level as HxW, got 3 sizes}}
  %0 = attn.bilinear_gather %v, %l levels [4x4x4] : tensor<1x64x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

// ... and levels are static.
func.func @level_dynamic(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+1 {{expected static shape}}
  %0 = attn.bilinear_gather %v, %l levels [?x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

func.func @levels_empty(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x0x4x2xf32>) {
  // expected-error @+2 {{'attn.bilinear_gather' op failed to infer returned types}}
  // expected-error @+1 {{levels must list at least one HxW pair, got 0 sizes}}
  %0 = attn.bilinear_gather %v, %l levels [] : tensor<1x16x4x8xf32>, tensor<1x10x4x0x4x2xf32> -> tensor<1x10x4x0x4x8xf32>
  return
}

// -----

// An odd number of sizes can only be written in generic form.
func.func @levels_odd(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>, %w: tensor<1x10x4x1x4xf32>) {
  // expected-error @+2 {{'attn.deformable' op failed to infer returned types}}
  // expected-error @+1 {{levels must list at least one HxW pair, got 3 sizes}}
  %0 = "attn.deformable"(%v, %l, %w) <{spatial_shapes = array<i64: 4, 4, 4>}> : (tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x2xf32>, tensor<1x10x4x1x4xf32>) -> tensor<1x10x32xf32>
  return
}

// -----

func.func @level_zero_size(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x2x4x2xf32>) {
  // expected-error @+2 {{'attn.bilinear_gather' op failed to infer returned types}}
  // expected-error @+1 {{level 1 has size 0x4; heights and widths must be positive}}
  %0 = attn.bilinear_gather %v, %l levels [4x4, 0x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x2x4x2xf32> -> tensor<1x10x4x2x4x8xf32>
  return
}

// -----

// Negative sizes can only be written in generic form.
func.func @level_negative_size(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.bilinear_gather' op failed to infer returned types}}
  // expected-error @+1 {{level 0 has size -4x-4; heights and widths must be positive}}
  %0 = "attn.bilinear_gather"(%v, %l) <{spatial_shapes = array<i64: -4, -4>}> : (tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x2xf32>) -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

// H x W must not overflow the pixel count.
func.func @level_too_large(%v: tensor<1x?x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.bilinear_gather' op failed to infer returned types}}
  // expected-error @+1 {{level sizes are too large}}
  %0 = attn.bilinear_gather %v, %l levels [4294967296x4294967296] : tensor<1x?x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

func.func @value_rank_sampling(%v: tensor<16x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.bilinear_gather' op failed to infer returned types}}
  // expected-error @+1 {{value must have rank 4 (N, sum of H*W, heads, channels), got rank 3 (16x4x8)}}
  %0 = attn.bilinear_gather %v, %l levels [4x4] : tensor<16x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

func.func @locations_rank(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x4x2xf32>, %w: tensor<1x10x4x1x4xf32>) {
  // expected-error @+2 {{'attn.deformable' op failed to infer returned types}}
  // expected-error @+1 {{sampling locations must have rank 6 (N, queries, heads, levels, points, 2), got rank 5 (1x10x4x4x2)}}
  %0 = attn.deformable %v, %l, %w levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x4x2xf32>, tensor<1x10x4x1x4xf32> -> tensor<1x10x32xf32>
  return
}

// -----

// The value positions must add up to the sum of H*W: 16x16 + 8x8 = 320.
func.func @levels_do_not_sum(%v: tensor<1x300x4x8xf32>, %l: tensor<1x10x4x2x4x2xf32>, %w: tensor<1x10x4x2x4xf32>) {
  // expected-error @+2 {{'attn.deformable' op failed to infer returned types}}
  // expected-error @+1 {{value has 300 positions but the levels add up to 320}}
  %0 = attn.deformable %v, %l, %w levels [16x16, 8x8] : tensor<1x300x4x8xf32>, tensor<1x10x4x2x4x2xf32>, tensor<1x10x4x2x4xf32> -> tensor<1x10x32xf32>
  return
}

// -----

func.func @level_count_mismatch(%v: tensor<1x320x4x8xf32>, %l: tensor<1x10x4x3x4x2xf32>, %w: tensor<1x10x4x3x4xf32>) {
  // expected-error @+2 {{'attn.deformable' op failed to infer returned types}}
  // expected-error @+1 {{sampling locations have 3 levels but `levels` lists 2}}
  %0 = attn.deformable %v, %l, %w levels [16x16, 8x8] : tensor<1x320x4x8xf32>, tensor<1x10x4x3x4x2xf32>, tensor<1x10x4x3x4xf32> -> tensor<1x10x32xf32>
  return
}

// -----

func.func @locations_last_dim(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x1x4x3xf32>) {
  // expected-error @+2 {{'attn.bilinear_gather' op failed to infer returned types}}
  // expected-error @+1 {{sampling locations must end in a dim of 2 (x, y), got 3}}
  %0 = attn.bilinear_gather %v, %l levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x3xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

func.func @sampling_batches(%v: tensor<1x16x4x8xf32>, %l: tensor<2x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.bilinear_gather' op failed to infer returned types}}
  // expected-error @+1 {{value has 1 batches but sampling locations has 2}}
  %0 = attn.bilinear_gather %v, %l levels [4x4] : tensor<1x16x4x8xf32>, tensor<2x10x4x1x4x2xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

func.func @sampling_heads(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x8x1x4x2xf32>) {
  // expected-error @+2 {{'attn.bilinear_gather' op failed to infer returned types}}
  // expected-error @+1 {{value has 4 heads but sampling locations has 8}}
  %0 = attn.bilinear_gather %v, %l levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x8x1x4x2xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

func.func @weights_rank(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>, %w: tensor<1x10x4x4xf32>) {
  // expected-error @+2 {{'attn.deformable' op failed to infer returned types}}
  // expected-error @+1 {{attention weights must have rank 5 (N, queries, heads, levels, points), got rank 4 (1x10x4x4)}}
  %0 = attn.deformable %v, %l, %w levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x2xf32>, tensor<1x10x4x4xf32> -> tensor<1x10x32xf32>
  return
}

// -----

// One weight per sample: the points dim must match the locations' (4, not 2).
func.func @weights_shape(%v: tensor<1x16x4x8xf32>, %l: tensor<1x10x4x1x4x2xf32>, %w: tensor<1x10x4x1x2xf32>) {
  // expected-error @+2 {{'attn.deformable' op failed to infer returned types}}
  // expected-error @+1 {{attention weights must be 1x10x4x1x4 to match the sampling locations, got 1x10x4x1x2}}
  %0 = attn.deformable %v, %l, %w levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x2xf32>, tensor<1x10x4x1x2xf32> -> tensor<1x10x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise primitive verifiers
//===----------------------------------------------------------------------===//

// -----

func.func @normalize_dim_out_of_range(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.normalize' op dim 2 is out of range for a tensor of rank 2}}
  %0 = attn.normalize softmax %x dim 2 : tensor<4x4xf32>
  return
}

// -----

func.func @normalize_negative_eps(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.normalize' op eps must be finite and >= 0, got -1.0}}
  %0 = attn.normalize sum %x dim 1 eps -1.0 : tensor<4x4xf32>
  return
}

// -----

func.func @normalize_nan_eps(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.normalize' op eps must be finite and >= 0, got nan}}
  %0 = attn.normalize sum %x dim 1 eps 0x7FF8000000000000 : tensor<4x4xf32>
  return
}

// -----

func.func @normalize_eps_on_softmax(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.normalize' op eps only applies to 'sum' normalization, not 'softmax'}}
  %0 = attn.normalize softmax %x dim 1 eps 1.0e-9 : tensor<4x4xf32>
  return
}

// -----

func.func @normalize_eps_on_count(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.normalize' op eps only applies to 'sum' normalization, not 'count'}}
  %0 = attn.normalize count %x dim 1 eps 0.5 : tensor<4x4xf32>
  return
}

// -----

func.func @prefix_sum_dim_out_of_range(%x: tensor<4x4x4xf32>) {
  // expected-error @+1 {{'attn.prefix_sum' op dim 3 is out of range for a tensor of rank 3}}
  %0 = attn.prefix_sum %x dim 3 : tensor<4x4x4xf32>
  return
}

// -----

func.func @causal_mask_rank(%x: tensor<16xf32>) {
  // expected-error @+1 {{'attn.causal_mask' op input must have rank >= 2 (..., queries, keys), got rank 1}}
  %0 = attn.causal_mask %x : tensor<16xf32>
  return
}

// -----

// A NaN fill would poison every softmax; -inf and finite values are fine.
func.func @causal_mask_nan_fill(%x: tensor<16x16xf32>) {
  // expected-error @+1 {{'attn.causal_mask' op fill must not be NaN}}
  %0 = attn.causal_mask %x fill 0x7FF8000000000000 : tensor<16x16xf32>
  return
}

// -----

// attn.scale factors must be finite (+inf as its f64 bit pattern).
func.func @scale_factor_infinite(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.scale' op factor must be finite, got INF}}
  %0 = attn.scale %x by 0x7FF0000000000000 : tensor<4x4xf32>
  return
}

// -----

func.func @mul_broadcast(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error @+2 {{'attn.mul' op failed to infer returned types}}
  // expected-error @+1 {{shapes of lhs and rhs (4x8 and 3x8) do not broadcast}}
  %0 = attn.mul %a, %b : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @div_broadcast(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+2 {{'attn.div' op failed to infer returned types}}
  // expected-error @+1 {{shapes of lhs and rhs (4x8 and 4x2) do not broadcast}}
  %0 = attn.div %a, %b : tensor<4x8xf32>, tensor<4x2xf32> -> tensor<4x8xf32>
  return
}

// -----

// attn.div's eps follows the rule of every eps: finite and >= 0.
func.func @div_negative_eps(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn.div' op eps must be finite and >= 0, got -1}}
  %0 = attn.div %a, %a eps -1.0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_sum_dim_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'attn.reduce_sum' op failed to infer returned types}}
  // expected-error @+1 {{dim 2 is out of range for a tensor of rank 2}}
  %0 = attn.reduce_sum %x dim 2 : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

// The reduced dim has size 1 in the result.
func.func @reduce_sum_result_shape(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'attn.reduce_sum' op failed to infer returned types}}
  // expected-error @+1 {{'attn.reduce_sum' op inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  %0 = attn.reduce_sum %x dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_sum_negative_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = attn.reduce_sum %x dim -1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// attn.floor and attn.gather_pixels
//===----------------------------------------------------------------------===//

// -----

// attn.floor keeps its operand type.
func.func @floor_result_type(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "attn.floor"(%x) : (tensor<4x2xf32>) -> tensor<4x2xf64>
  return
}

// -----

// gather_pixels: the pixels end in (x, y).
func.func @gather_pixels_not_pairs(%v: tensor<1x16x4x8xf32>, %p: tensor<1x10x4x1x4x3xf32>) {
  // expected-error @+2 {{'attn.gather_pixels' op failed to infer returned types}}
  // expected-error @+1 {{sampling locations must end in a dim of 2 (x, y), got 3}}
  %0 = attn.gather_pixels %v, %p levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x3xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

// gather_pixels: the value rows are the levels' pixels.
func.func @gather_pixels_rows(%v: tensor<1x17x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.gather_pixels' op failed to infer returned types}}
  // expected-error @+1 {{value has 17 positions but the levels add up to 16}}
  %0 = attn.gather_pixels %v, %p levels [4x4] : tensor<1x17x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x10x4x1x4x8xf32>
  return
}

// -----

// gather_pixels: one level dim entry per listed level.
func.func @gather_pixels_levels(%v: tensor<1x20x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.gather_pixels' op failed to infer returned types}}
  // expected-error @+1 {{sampling locations have 1 levels but `levels` lists 2}}
  %0 = attn.gather_pixels %v, %p levels [4x4, 2x2] : tensor<1x20x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x10x4x2x4x8xf32>
  return
}

// -----

// gather_pixels: heads of value and pixels agree.
func.func @gather_pixels_heads(%v: tensor<1x16x4x8xf32>, %p: tensor<1x10x3x1x4x2xf32>) {
  // expected-error @+2 {{'attn.gather_pixels' op failed to infer returned types}}
  // expected-error @+1 {{heads}}
  %0 = attn.gather_pixels %v, %p levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x3x1x4x2xf32> -> tensor<1x10x3x1x4x8xf32>
  return
}

// -----

// gather_pixels: the result carries the value's channels.
func.func @gather_pixels_result(%v: tensor<1x16x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.gather_pixels' op failed to infer returned types}}
  // expected-error @+1 {{'attn.gather_pixels' op inferred type(s) 'tensor<1x10x4x1x4x8xf32>' are incompatible with return type(s) of operation 'tensor<1x10x4x1x4x2xf32>'}}
  %0 = attn.gather_pixels %v, %p levels [4x4] : tensor<1x16x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x10x4x1x4x2xf32>
  return
}

//===----------------------------------------------------------------------===//
// Primitive ops of gradients: feature_map_grad, broadcast, unbroadcast,
// scatter_pixels
//===----------------------------------------------------------------------===//

// -----

// feature_map_grad: the cotangent has the input's type.
func.func @feature_map_grad_cotangent_type(%x: tensor<4x8xf32>, %dy: tensor<4x4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "attn.feature_map_grad"(%x, %dy) <{kind = 2 : i32}> : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  return
}

// -----

// broadcast: the dims must broadcast at all ...
func.func @broadcast_mismatch(%x: tensor<4x3xf32>, %like: tensor<4x8xf32>) {
  // expected-error @+2 {{'attn.broadcast' op failed to infer returned types}}
  // expected-error @+1 {{shapes of input and like (4x3 and 4x8) do not broadcast}}
  %0 = attn.broadcast %x like %like : tensor<4x3xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// ... and to `like` itself: not to a lower rank ...
func.func @broadcast_lower_rank(%x: tensor<2x4x8xf32>, %like: tensor<4x8xf32>) {
  // expected-error @+2 {{'attn.broadcast' op failed to infer returned types}}
  // expected-error @+1 {{shape 2x4x8 does not broadcast to 4x8 (input and like)}}
  %0 = attn.broadcast %x like %like : tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// ... nor into a size-1 dim of `like`.
func.func @broadcast_into_unit_dim(%x: tensor<4x8xf32>, %like: tensor<1x8xf32>) {
  // expected-error @+2 {{'attn.broadcast' op failed to infer returned types}}
  // expected-error @+1 {{shape 4x8 does not broadcast to 1x8 (input and like)}}
  %0 = attn.broadcast %x like %like : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<1x8xf32>
  return
}

// -----

// broadcast: the result has the shape of `like`.
func.func @broadcast_result(%x: tensor<4x1xf32>, %like: tensor<4x8xf32>) {
  // expected-error @+2 {{'attn.broadcast' op failed to infer returned types}}
  // expected-error @+1 {{'attn.broadcast' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  %0 = attn.broadcast %x like %like : tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

// unbroadcast: `like` must broadcast to the input at all ...
func.func @unbroadcast_mismatch(%x: tensor<4x8xf32>, %like: tensor<4x3xf32>) {
  // expected-error @+2 {{'attn.unbroadcast' op failed to infer returned types}}
  // expected-error @+1 {{shapes of like and input (4x3 and 4x8) do not broadcast}}
  %0 = attn.unbroadcast %x like %like : tensor<4x8xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

// ... and to the input itself: `like` has no more dims ...
func.func @unbroadcast_higher_rank(%x: tensor<4x8xf32>, %like: tensor<2x4x8xf32>) {
  // expected-error @+2 {{'attn.unbroadcast' op failed to infer returned types}}
  // expected-error @+1 {{shape 2x4x8 does not broadcast to 4x8 (like and input)}}
  %0 = attn.unbroadcast %x like %like : tensor<4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

// ... and no dim > 1 where the input has 1.
func.func @unbroadcast_from_unit_dim(%x: tensor<1x8xf32>, %like: tensor<4x8xf32>) {
  // expected-error @+2 {{'attn.unbroadcast' op failed to infer returned types}}
  // expected-error @+1 {{shape 4x8 does not broadcast to 1x8 (like and input)}}
  %0 = attn.unbroadcast %x like %like : tensor<1x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// unbroadcast: the result has the shape of `like`.
func.func @unbroadcast_result(%x: tensor<4x8xf32>, %like: tensor<1x8xf32>) {
  // expected-error @+2 {{'attn.unbroadcast' op failed to infer returned types}}
  // expected-error @+1 {{'attn.unbroadcast' op inferred type(s) 'tensor<1x8xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  %0 = attn.unbroadcast %x like %like : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// scatter_pixels: at least one level ...
func.func @scatter_pixels_no_levels(%dy: tensor<1x10x4x1x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{levels must list at least one HxW pair, got 0 sizes}}
  %0 = attn.scatter_pixels %dy, %p levels [] : tensor<1x10x4x1x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x16x4x8xf32>
  return
}

// -----

// ... of positive sizes ...
func.func @scatter_pixels_empty_level(%dy: tensor<1x10x4x1x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{level 0 has size 0x4; heights and widths must be positive}}
  %0 = attn.scatter_pixels %dy, %p levels [0x4] : tensor<1x10x4x1x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x16x4x8xf32>
  return
}

// -----

// ... that fit in an index.
func.func @scatter_pixels_huge_level(%dy: tensor<1x10x4x1x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{level sizes are too large}}
  %0 = attn.scatter_pixels %dy, %p levels [65536x65536] : tensor<1x10x4x1x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x16x4x8xf32>
  return
}

// -----

// scatter_pixels: the cotangent is (N, queries, heads, levels, points,
// channels) ...
func.func @scatter_pixels_cotangent_rank(%dy: tensor<1x10x4x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{cotangent must have rank 6 (N, queries, heads, levels, points, channels), got rank 5 (1x10x4x4x8)}}
  %0 = attn.scatter_pixels %dy, %p levels [4x4] : tensor<1x10x4x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x16x4x8xf32>
  return
}

// -----

// ... and the pixels (N, queries, heads, levels, points, 2) ...
func.func @scatter_pixels_pixels_rank(%dy: tensor<1x10x4x1x4x8xf32>, %p: tensor<1x10x4x4x2xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{pixels must have rank 6 (N, queries, heads, levels, points, 2), got rank 5 (1x10x4x4x2)}}
  %0 = attn.scatter_pixels %dy, %p levels [4x4] : tensor<1x10x4x1x4x8xf32>, tensor<1x10x4x4x2xf32> -> tensor<1x16x4x8xf32>
  return
}

// -----

// ... with one level dim entry per listed level ...
func.func @scatter_pixels_levels(%dy: tensor<1x10x4x1x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{pixels have 1 levels but `levels` lists 2}}
  %0 = attn.scatter_pixels %dy, %p levels [4x4, 2x2] : tensor<1x10x4x1x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x20x4x8xf32>
  return
}

// -----

// ... ending in (x, y) ...
func.func @scatter_pixels_not_pairs(%dy: tensor<1x10x4x1x4x8xf32>, %p: tensor<1x10x4x1x4x3xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{pixels must end in a dim of 2 (x, y), got 3}}
  %0 = attn.scatter_pixels %dy, %p levels [4x4] : tensor<1x10x4x1x4x8xf32>, tensor<1x10x4x1x4x3xf32> -> tensor<1x16x4x8xf32>
  return
}

// -----

// ... and agreeing with the cotangent on every sample dim.
func.func @scatter_pixels_samples(%dy: tensor<1x10x4x1x4x8xf32>, %p: tensor<1x10x4x1x3x2xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{cotangent 1x10x4x1x4x8 and pixels 1x10x4x1x3x2 must agree in (N, queries, heads, levels, points)}}
  %0 = attn.scatter_pixels %dy, %p levels [4x4] : tensor<1x10x4x1x4x8xf32>, tensor<1x10x4x1x3x2xf32> -> tensor<1x16x4x8xf32>
  return
}

// -----

// scatter_pixels: the result has the levels' rows and the cotangent's
// channels.
func.func @scatter_pixels_result(%dy: tensor<1x10x4x1x4x8xf32>, %p: tensor<1x10x4x1x4x2xf32>) {
  // expected-error @+2 {{'attn.scatter_pixels' op failed to infer returned types}}
  // expected-error @+1 {{'attn.scatter_pixels' op inferred type(s) 'tensor<1x16x4x8xf32>' are incompatible with return type(s) of operation 'tensor<1x17x4x8xf32>'}}
  %0 = attn.scatter_pixels %dy, %p levels [4x4] : tensor<1x10x4x1x4x8xf32>, tensor<1x10x4x1x4x2xf32> -> tensor<1x17x4x8xf32>
  return
}

// -----

// with_context: the scaling variant has no normalized context to save.
func.func @with_context_scaling(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.efficient' op failed to infer returned types}}
  // expected-error @+1 {{'with_context' needs the softmax variant}}
  %o, %c, %l = attn.efficient %q, %k, %v variant scaling with_context : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<16x4xf32>, tensor<8x4xf32>, tensor<1x8xf32>
  return
}

// -----

// with_context: one context per problem, so no broadcast batch.
func.func @with_context_broadcast(%q: tensor<2x16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.efficient' op failed to infer returned types}}
  // expected-error @+1 {{'with_context' needs query, key and value with the same leading dims}}
  %o, %c, %l = attn.efficient %q, %k, %v variant softmax with_context : tensor<2x16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<2x16x4xf32>, tensor<2x8x4xf32>, tensor<2x1x8xf32>
  return
}

// -----

// with_context: f32 or f64 (a bf16 context would be rounded).
func.func @with_context_bf16(%q: tensor<16x8xbf16>, %k: tensor<24x8xbf16>, %v: tensor<24x4xbf16>) {
  // expected-error @+2 {{'attn.efficient' op failed to infer returned types}}
  // expected-error @+1 {{'with_context' needs f32 or f64 operands, got 'bf16'}}
  %o, %c, %l = attn.efficient %q, %k, %v variant softmax with_context : tensor<16x8xbf16>, tensor<24x8xbf16>, tensor<24x4xbf16> -> tensor<16x4xbf16>, tensor<8x4xbf16>, tensor<1x8xbf16>
  return
}

// -----

// with_context: the context is (..., dk, dv), in the operands' type.
func.func @with_context_shape(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.efficient' op failed to infer returned types}}
  // expected-error @+1 {{'attn.efficient' op inferred type(s) 'tensor<16x4xf32>', 'tensor<8x4xf32>', 'tensor<1x8xf32>' are incompatible with return type(s) of operation 'tensor<16x4xf32>', 'tensor<4x8xf32>', 'tensor<1x8xf32>'}}
  %o, %c, %l = attn.efficient %q, %k, %v variant softmax with_context : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<16x4xf32>, tensor<4x8xf32>, tensor<1x8xf32>
  return
}

// -----

// with_context: the key log-sum-exp is (..., 1, dk).
func.func @with_context_key_lse_shape(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.efficient' op failed to infer returned types}}
  // expected-error @+1 {{'attn.efficient' op inferred type(s) 'tensor<16x4xf32>', 'tensor<8x4xf32>', 'tensor<1x8xf32>' are incompatible with return type(s) of operation 'tensor<16x4xf32>', 'tensor<8x4xf32>', 'tensor<8x1xf32>'}}
  %o, %c, %l = attn.efficient %q, %k, %v variant softmax with_context : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<16x4xf32>, tensor<8x4xf32>, tensor<8x1xf32>
  return
}

// -----

// with_context: both saved results or none.
func.func @with_context_one_result(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.efficient' op failed to infer returned types}}
  // expected-error @+1 {{'attn.efficient' op inferred type(s) 'tensor<16x4xf32>', 'tensor<8x4xf32>', 'tensor<1x8xf32>' are incompatible with return type(s) of operation 'tensor<16x4xf32>', 'tensor<8x4xf32>'}}
  %o, %c = attn.efficient %q, %k, %v variant softmax with_context : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<16x4xf32>, tensor<8x4xf32>
  return
}

// -----

// softmax_from_lse: lse has the input's shape with 1 at dim.
func.func @softmax_from_lse_shape(%k: tensor<24x8xf32>, %lse: tensor<8x1xf32>) {
  // expected-error @+1 {{'attn.softmax_from_lse' op lse must have the input's shape with size 1 at dim 0 (1x8), got 'tensor<8x1xf32>'}}
  %0 = attn.softmax_from_lse %k, %lse dim 0 : tensor<24x8xf32>, tensor<8x1xf32>
  return
}

// -----

// softmax_from_lse: dim in range.
func.func @softmax_from_lse_dim(%k: tensor<24x8xf32>, %lse: tensor<1x8xf32>) {
  // expected-error @+1 {{'attn.softmax_from_lse' op dim 2 is out of range}}
  %0 = attn.softmax_from_lse %k, %lse dim 2 : tensor<24x8xf32>, tensor<1x8xf32>
  return
}

// -----

// softmax_from_lse: lse in the input's element type.
func.func @softmax_from_lse_type(%k: tensor<24x8xf32>, %lse: tensor<1x8xf64>) {
  // expected-error @+1 {{'attn.softmax_from_lse' op lse must have the input's element type 'f32', got 'f64'}}
  %0 = attn.softmax_from_lse %k, %lse dim 0 : tensor<24x8xf32>, tensor<1x8xf64>
  return
}

// -----

// softmax_from_lse: f32 or f64, the types a forward saves statistics in.
func.func @softmax_from_lse_bf16(%k: tensor<24x8xbf16>, %lse: tensor<1x8xbf16>) {
  // expected-error @+1 {{'attn.softmax_from_lse' op needs f32 or f64 operands (the types a forward saves statistics in), got 'bf16'}}
  %0 = attn.softmax_from_lse %k, %lse dim 0 : tensor<24x8xbf16>, tensor<1x8xbf16>
  return
}

// -----

// with_lse: the log-sum-exp is the statistic of one softmax over keys.
func.func @with_lse_not_softmax_keys(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{'with_lse' needs a norm list of one softmax over keys}}
  %o, %lse = attn.dot_product %q, %k, %v norm [sum over keys] with_lse : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<16x4xf32>, tensor<16xf32>
  return
}

// -----

// with_lse: a softmax over queries has column statistics, not row ones.
func.func @with_lse_softmax_queries(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{'with_lse' needs a norm list of one softmax over keys}}
  %o, %lse = attn.dot_product %q, %k, %v norm [softmax over queries, softmax over keys] with_lse : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<16x4xf32>, tensor<16xf32>
  return
}

// -----

// with_lse: one value per row, (..., n).
func.func @with_lse_shape(%q: tensor<2x16x8xf32>, %k: tensor<2x24x8xf32>, %v: tensor<2x24x4xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{'attn.dot_product' op inferred type(s) 'tensor<2x16x4xf32>', 'tensor<2x16xf32>' are incompatible with return type(s) of operation 'tensor<2x16x4xf32>', 'tensor<2x4xf32>'}}
  %o, %lse = attn.dot_product %q, %k, %v norm [softmax over keys] with_lse : tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32> -> tensor<2x16x4xf32>, tensor<2x4xf32>
  return
}

// -----

// with_lse: the log-sum-exp is f32 for 16-bit operands, never rounded.
func.func @with_lse_type(%q: tensor<16x8xbf16>, %k: tensor<24x8xbf16>, %v: tensor<24x4xbf16>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{'attn.dot_product' op inferred type(s) 'tensor<16x4xbf16>', 'tensor<16xf32>' are incompatible with return type(s) of operation 'tensor<16x4xbf16>', 'tensor<16xbf16>'}}
  %o, %lse = attn.dot_product %q, %k, %v norm [softmax over keys] with_lse : tensor<16x8xbf16>, tensor<24x8xbf16>, tensor<24x4xbf16> -> tensor<16x4xbf16>, tensor<16xbf16>
  return
}

// -----

// with_lse and the second result go together.
func.func @with_lse_missing_result(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{'attn.dot_product' op inferred type(s) 'tensor<16x4xf32>', 'tensor<16xf32>' are incompatible with return type(s) of operation 'tensor<16x4xf32>'}}
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] with_lse : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<16x4xf32>
  return
}

// -----

// A second result without with_lse.
func.func @lse_without_with_lse(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) {
  // expected-error @+2 {{'attn.dot_product' op failed to infer returned types}}
  // expected-error @+1 {{'attn.dot_product' op inferred type(s) 'tensor<16x4xf32>' are incompatible with return type(s) of operation 'tensor<16x4xf32>', 'tensor<16xf32>'}}
  %o, %lse = attn.dot_product %q, %k, %v norm [softmax over keys] : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32> -> tensor<16x4xf32>, tensor<16xf32>
  return
}

// -----

// attention_grad: the saved log-sum-exp has one value per row of the
// broadcast batch.
func.func @attention_grad_lse_shape(%q: tensor<2x16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>, %g: tensor<2x16x4xf32>, %lse: tensor<16xf32>) {
  // expected-error @+2 {{'attn.attention_grad' op failed to infer returned types}}
  // expected-error @+1 {{lse must have one value per row of the attention's result, shape 2x16, got 16}}
  %0:3 = attn.attention_grad %q, %k, %v, %g lse %lse : tensor<2x16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>, tensor<2x16x4xf32>, tensor<16xf32> -> tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>
  return
}

// -----

// attention_grad: the saved log-sum-exp is in the accumulator's type.
func.func @attention_grad_lse_type(%q: tensor<16x8xf64>, %k: tensor<24x8xf64>, %v: tensor<24x4xf64>, %g: tensor<16x4xf64>, %lse: tensor<16xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op lse must have the accumulator's element type 'f64' (f64 for f64 operands, else f32), got 'f32'}}
  %0:3 = attn.attention_grad %q, %k, %v, %g lse %lse : tensor<16x8xf64>, tensor<24x8xf64>, tensor<24x4xf64>, tensor<16x4xf64>, tensor<16xf32> -> tensor<16x8xf64>, tensor<24x8xf64>, tensor<24x4xf64>
  return
}

// -----

// attention_grad: the saved output has the attention's result shape.
func.func @attention_grad_output_shape(%q: tensor<2x16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>, %g: tensor<2x16x4xf32>, %lse: tensor<2x16xf32>, %o: tensor<16x4xf32>) {
  // expected-error @+2 {{'attn.attention_grad' op failed to infer returned types}}
  // expected-error @+1 {{output must have the attention's result shape 2x16x4, got 16x4}}
  %0:3 = attn.attention_grad %q, %k, %v, %g lse %lse output %o : tensor<2x16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>, tensor<2x16x4xf32>, tensor<2x16xf32>, tensor<16x4xf32> -> tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>
  return
}

// -----

// attention_grad: the saved output comes with the saved lse.
func.func @attention_grad_output_needs_lse(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>, %g: tensor<16x4xf32>, %o: tensor<16x4xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op output (the forward's result, for D = rowsum(dO * O)) needs lse: both are what the forward saved}}
  %0:3 = attn.attention_grad %q, %k, %v, %g output %o : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>, tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>
  return
}

// -----

// attention_grad: the saved output has the operands' element type.
func.func @attention_grad_output_type(%q: tensor<16x8xf64>, %k: tensor<24x8xf64>, %v: tensor<24x4xf64>, %g: tensor<16x4xf64>, %lse: tensor<16xf64>, %o: tensor<16x4xf32>) {
  // expected-error @+2 {{'attn.attention_grad' op failed to infer returned types}}
  // expected-error @+1 {{operands must share one element type, got 'f64' and 'f32'}}
  %0:3 = attn.attention_grad %q, %k, %v, %g lse %lse output %o : tensor<16x8xf64>, tensor<24x8xf64>, tensor<24x4xf64>, tensor<16x4xf64>, tensor<16xf64>, tensor<16x4xf32> -> tensor<16x8xf64>, tensor<24x8xf64>, tensor<24x4xf64>
  return
}

// -----

// attention_grad: the mask follows attn.dot_product's rule, queries x keys.
func.func @attention_grad_mask_shape(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>, %g: tensor<16x4xf32>, %mask: tensor<24x16xf32>) {
  // expected-error @+2 {{'attn.attention_grad' op failed to infer returned types}}
  // expected-error @+1 {{mask must be 16x24 (queries x keys) in its last two dims, got 24x16}}
  %0:3 = attn.attention_grad %q, %k, %v, %g mask %mask : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>, tensor<16x4xf32>, tensor<24x16xf32> -> tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>
  return
}

// -----

// attention_grad: the mask has the attention operands' element type.
func.func @attention_grad_mask_type(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>, %g: tensor<16x4xf32>, %mask: tensor<16x24xf64>) {
  // expected-error @+2 {{'attn.attention_grad' op failed to infer returned types}}
  // expected-error @+1 {{operands must share one element type, got}}
  %0:3 = attn.attention_grad %q, %k, %v, %g mask %mask : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>, tensor<16x4xf32>, tensor<16x24xf64> -> tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>
  return
}

// -----

// attention_grad: the cotangent has the attention's result shape.
func.func @attention_grad_cotangent(%q: tensor<2x16x8xf32>, %k: tensor<2x24x8xf32>, %v: tensor<2x24x4xf32>, %g: tensor<2x16x8xf32>) {
  // expected-error @+2 {{'attn.attention_grad' op failed to infer returned types}}
  // expected-error @+1 {{cotangent must have the attention's result shape 2x16x4, got 2x16x8}}
  %0:3 = attn.attention_grad %q, %k, %v, %g : tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>
  return
}

// -----

// attention_grad: the attention operands follow attn.dot_product's rules.
func.func @attention_grad_features(%q: tensor<16x8xf32>, %k: tensor<24x6xf32>, %v: tensor<24x4xf32>, %g: tensor<16x4xf32>) {
  // expected-error @+2 {{'attn.attention_grad' op failed to infer returned types}}
  // expected-error @+1 {{query has 8 features but key has 6}}
  %0:3 = attn.attention_grad %q, %k, %v, %g : tensor<16x8xf32>, tensor<24x6xf32>, tensor<24x4xf32>, tensor<16x4xf32> -> tensor<16x8xf32>, tensor<24x6xf32>, tensor<24x4xf32>
  return
}

// -----

// attention_grad: each gradient has its operand's rows and columns over the
// broadcast batch.
func.func @attention_grad_result(%q: tensor<2x16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>, %g: tensor<2x16x4xf32>) {
  // expected-error @+2 {{'attn.attention_grad' op failed to infer returned types}}
  // expected-error @+1 {{'attn.attention_grad' op inferred type(s) 'tensor<2x16x8xf32>', 'tensor<2x24x8xf32>', 'tensor<2x24x4xf32>' are incompatible with return type(s) of operation 'tensor<2x16x8xf32>', 'tensor<24x8xf32>', 'tensor<24x4xf32>'}}
  %0:3 = attn.attention_grad %q, %k, %v, %g : tensor<2x16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>, tensor<2x16x4xf32> -> tensor<2x16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>
  return
}

// -----

func.func @attention_grad_scale(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>, %g: tensor<16x4xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op scale must be finite, got INF}}
  %0:3 = attn.attention_grad %q, %k, %v, %g scale 0x7FF0000000000000 : tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>, tensor<16x4xf32> -> tensor<16x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>
  return
}

// -----

// deformable_grad: the cotangent has the deformable attention's result
// shape (N, Lq, M*D).
func.func @deformable_grad_cotangent(%v: tensor<1x20x2x4xf32>, %l: tensor<1x5x2x2x3x2xf32>, %w: tensor<1x5x2x2x3xf32>, %g: tensor<1x5x4xf32>) {
  // expected-error @+2 {{'attn.deformable_grad' op failed to infer returned types}}
  // expected-error @+1 {{cotangent must have the deformable attention's result shape 1x5x8, got 1x5x4}}
  %0:3 = attn.deformable_grad %v, %l, %w, %g levels [4x4, 2x2] : tensor<1x20x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x3xf32>, tensor<1x5x4xf32> -> tensor<1x20x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x3xf32>
  return
}

// -----

// deformable_grad: the operands follow attn.deformable's rules (weights per
// sample, value rows adding up to the levels).
func.func @deformable_grad_weights(%v: tensor<1x20x2x4xf32>, %l: tensor<1x5x2x2x3x2xf32>, %w: tensor<1x5x2x2x4xf32>, %g: tensor<1x5x8xf32>) {
  // expected-error @+2 {{'attn.deformable_grad' op failed to infer returned types}}
  // expected-error @+1 {{attention weights must be 1x5x2x2x3 to match the sampling locations, got 1x5x2x2x4}}
  %0:3 = attn.deformable_grad %v, %l, %w, %g levels [4x4, 2x2] : tensor<1x20x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x4xf32>, tensor<1x5x8xf32> -> tensor<1x20x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x4xf32>
  return
}

// -----

func.func @deformable_grad_levels(%v: tensor<1x21x2x4xf32>, %l: tensor<1x5x2x2x3x2xf32>, %w: tensor<1x5x2x2x3xf32>, %g: tensor<1x5x8xf32>) {
  // expected-error @+2 {{'attn.deformable_grad' op failed to infer returned types}}
  // expected-error @+1 {{value has 21 positions but the levels add up to 20}}
  %0:3 = attn.deformable_grad %v, %l, %w, %g levels [4x4, 2x2] : tensor<1x21x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x3xf32>, tensor<1x5x8xf32> -> tensor<1x21x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x3xf32>
  return
}

// -----

// deformable_grad: one element type for every operand.
func.func @deformable_grad_types(%v: tensor<1x20x2x4xf32>, %l: tensor<1x5x2x2x3x2xf32>, %w: tensor<1x5x2x2x3xf32>, %g: tensor<1x5x8xf64>) {
  // expected-error @+2 {{'attn.deformable_grad' op failed to infer returned types}}
  // expected-error @+1 {{operands must share one element type, got 'f32' and 'f64'}}
  %0:3 = attn.deformable_grad %v, %l, %w, %g levels [4x4, 2x2] : tensor<1x20x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x3xf32>, tensor<1x5x8xf64> -> tensor<1x20x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x3xf32>
  return
}

// -----

// deformable_grad: each gradient has its operand's shape.
func.func @deformable_grad_result(%v: tensor<1x20x2x4xf32>, %l: tensor<1x5x2x2x3x2xf32>, %w: tensor<1x5x2x2x3xf32>, %g: tensor<1x5x8xf32>) {
  // expected-error @+2 {{'attn.deformable_grad' op failed to infer returned types}}
  // expected-error @+1 {{'attn.deformable_grad' op inferred type(s) 'tensor<1x20x2x4xf32>', 'tensor<1x5x2x2x3x2xf32>', 'tensor<1x5x2x2x3xf32>' are incompatible with return type(s) of operation 'tensor<1x20x2x4xf32>', 'tensor<1x5x2x2x3xf32>', 'tensor<1x5x2x2x3xf32>'}}
  %0:3 = attn.deformable_grad %v, %l, %w, %g levels [4x4, 2x2] : tensor<1x20x2x4xf32>, tensor<1x5x2x2x3x2xf32>, tensor<1x5x2x2x3xf32>, tensor<1x5x8xf32> -> tensor<1x20x2x4xf32>, tensor<1x5x2x2x3xf32>, tensor<1x5x2x2x3xf32>
  return
}
