// RUN: attn-opt %s -split-input-file | attn-opt -split-input-file | FileCheck %s
// RUN: attn-opt %s -split-input-file -mlir-print-op-generic | attn-opt -split-input-file | FileCheck %s

// Round trip of every attn op and every variant of its custom syntax. The
// second RUN line goes through the generic form, so it also proves that the
// properties (norm lists, enums, levels) survive `<{...}>` printing.

//===----------------------------------------------------------------------===//
// attn.dot_product
//===----------------------------------------------------------------------===//

// Standard attention: [softmax over keys], scale and feature_map elided.
// CHECK-LABEL: func.func @dot_product_softmax_keys
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<128x64xf32>, %[[K:[a-z0-9_]+]]: tensor<128x64xf32>, %[[V:[a-z0-9_]+]]: tensor<128x32xf32>)
// CHECK: %[[O:.+]] = attn.dot_product %[[Q]], %[[K]], %[[V]] norm [softmax over keys] : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x32xf32> -> tensor<128x32xf32>
// CHECK: return %[[O]]
func.func @dot_product_softmax_keys(%q: tensor<128x64xf32>, %k: tensor<128x64xf32>, %v: tensor<128x32xf32>) -> tensor<128x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x32xf32> -> tensor<128x32xf32>
  return %o : tensor<128x32xf32>
}

// -----

// Every kind over both axes, one step per op; n = 128 queries, m = 96 keys.
// CHECK-LABEL: func.func @dot_product_norm_kinds
// CHECK: attn.dot_product %{{.+}} norm [softmax over queries] :
// CHECK: attn.dot_product %{{.+}} norm [sum over keys] :
// CHECK: attn.dot_product %{{.+}} norm [sum over queries] :
// CHECK: attn.dot_product %{{.+}} norm [count over keys] :
// CHECK: attn.dot_product %{{.+}} norm [count over queries] :
// CHECK: attn.dot_product %{{.+}} norm [none over keys] :
// CHECK: attn.dot_product %{{.+}} norm [none over queries] :
func.func @dot_product_norm_kinds(%q: tensor<128x64xf32>, %k: tensor<96x64xf32>, %v: tensor<96x32xf32>) {
  %0 = attn.dot_product %q, %k, %v norm [softmax over queries] : tensor<128x64xf32>, tensor<96x64xf32>, tensor<96x32xf32> -> tensor<128x32xf32>
  %1 = attn.dot_product %q, %k, %v norm [sum over keys] : tensor<128x64xf32>, tensor<96x64xf32>, tensor<96x32xf32> -> tensor<128x32xf32>
  %2 = attn.dot_product %q, %k, %v norm [sum over queries] : tensor<128x64xf32>, tensor<96x64xf32>, tensor<96x32xf32> -> tensor<128x32xf32>
  %3 = attn.dot_product %q, %k, %v norm [count over keys] : tensor<128x64xf32>, tensor<96x64xf32>, tensor<96x32xf32> -> tensor<128x32xf32>
  %4 = attn.dot_product %q, %k, %v norm [count over queries] : tensor<128x64xf32>, tensor<96x64xf32>, tensor<96x32xf32> -> tensor<128x32xf32>
  %5 = attn.dot_product %q, %k, %v norm [none over keys] : tensor<128x64xf32>, tensor<96x64xf32>, tensor<96x32xf32> -> tensor<128x32xf32>
  %6 = attn.dot_product %q, %k, %v norm [none over queries] : tensor<128x64xf32>, tensor<96x64xf32>, tensor<96x32xf32> -> tensor<128x32xf32>
  return
}

// -----

// A multi-step list keeps its order; eps prints only on `sum`, and an
// explicit `eps 0.0` is the default and disappears.
// CHECK-LABEL: func.func @dot_product_norm_lists
// CHECK: attn.dot_product %{{.+}} norm [softmax over queries, sum over keys eps 1.000000e-09] :
// CHECK: attn.dot_product %{{.+}} norm [sum over keys, softmax over queries] :
// CHECK: attn.dot_product %{{.+}} norm [count over keys, none over queries, sum over queries eps 5.000000e-01] :
// CHECK: attn.dot_product %{{.+}} norm [] :
func.func @dot_product_norm_lists(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x16xf32>) {
  %0 = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.0e-9] : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %1 = attn.dot_product %q, %k, %v norm [sum over keys eps 0.0, softmax over queries] : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %2 = attn.dot_product %q, %k, %v norm [count over keys, none over queries, sum over queries eps 0.5] : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  // An empty list is no normalization at all: O = S V.
  %3 = attn.dot_product %q, %k, %v norm [] : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  return
}

// -----

// scale, every feature map, causal; `scale 1.0` and `feature_map identity`
// are the defaults and are elided.
// CHECK-LABEL: func.func @dot_product_options
// CHECK: attn.dot_product %{{.+}} norm [softmax over keys] scale 1.250000e-01 : tensor
// CHECK: attn.dot_product %{{.+}} norm [sum over keys] feature_map elu_plus_one : tensor
// CHECK: attn.dot_product %{{.+}} norm [sum over keys] feature_map relu : tensor
// CHECK: attn.dot_product %{{.+}} norm [softmax over keys] : tensor
// CHECK: attn.dot_product %{{.+}} norm [softmax over keys] causal : tensor
// CHECK: attn.dot_product %{{.+}} norm [sum over keys eps 2.500000e-01] scale -2.000000e+00 feature_map relu causal : tensor
func.func @dot_product_options(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x16xf32>) {
  %0 = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %1 = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %2 = attn.dot_product %q, %k, %v norm [sum over keys] feature_map relu : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %3 = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.0 feature_map identity : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %4 = attn.dot_product %q, %k, %v norm [softmax over keys] causal : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %5 = attn.dot_product %q, %k, %v norm [sum over keys eps 0.25] scale -2.0 feature_map relu causal : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  return
}

// -----

// An additive mask (n x m) with every other option; its type follows the
// three operand types.
// CHECK-LABEL: func.func @dot_product_mask
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<8x128x64xf32>, %[[K:[a-z0-9_]+]]: tensor<8x96x64xf32>, %[[V:[a-z0-9_]+]]: tensor<8x96x32xf32>, %[[M:[a-z0-9_]+]]: tensor<128x96xf32>)
// CHECK: attn.dot_product %[[Q]], %[[K]], %[[V]] mask %[[M]] norm [softmax over keys] : tensor<8x128x64xf32>, tensor<8x96x64xf32>, tensor<8x96x32xf32>, tensor<128x96xf32> -> tensor<8x128x32xf32>
// CHECK: attn.dot_product %[[Q]], %[[K]], %[[V]] mask %[[M]] norm [softmax over keys] scale 1.250000e-01 feature_map relu causal : tensor<8x128x64xf32>, tensor<8x96x64xf32>, tensor<8x96x32xf32>, tensor<128x96xf32> -> tensor<8x128x32xf32>
func.func @dot_product_mask(%q: tensor<8x128x64xf32>, %k: tensor<8x96x64xf32>, %v: tensor<8x96x32xf32>, %mask: tensor<128x96xf32>) {
  %0 = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] : tensor<8x128x64xf32>, tensor<8x96x64xf32>, tensor<8x96x32xf32>, tensor<128x96xf32> -> tensor<8x128x32xf32>
  %1 = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 0.125 feature_map relu causal : tensor<8x128x64xf32>, tensor<8x96x64xf32>, tensor<8x96x32xf32>, tensor<128x96xf32> -> tensor<8x128x32xf32>
  return
}

// -----

// Leading dims broadcast: rank-2 K/V shared by every batch and head of Q, a
// head dim of 1 stretched, and a batched mask with broadcast heads.
// CHECK-LABEL: func.func @dot_product_broadcast
// CHECK: attn.dot_product %{{.+}} : tensor<2x8x128x64xf32>, tensor<100x64xf32>, tensor<100x32xf32> -> tensor<2x8x128x32xf32>
// CHECK: attn.dot_product %{{.+}} : tensor<2x1x128x64xf32>, tensor<8x100x64xf32>, tensor<2x8x100x32xf32> -> tensor<2x8x128x32xf32>
// CHECK: attn.dot_product %{{.+}} mask %{{.+}} : tensor<2x8x128x64xf32>, tensor<100x64xf32>, tensor<100x32xf32>, tensor<2x1x128x100xf32> -> tensor<2x8x128x32xf32>
func.func @dot_product_broadcast(%q: tensor<2x8x128x64xf32>, %k: tensor<100x64xf32>, %v: tensor<100x32xf32>,
                                 %q1: tensor<2x1x128x64xf32>, %k8: tensor<8x100x64xf32>, %v28: tensor<2x8x100x32xf32>,
                                 %mask: tensor<2x1x128x100xf32>) {
  %0 = attn.dot_product %q, %k, %v norm [softmax over keys] : tensor<2x8x128x64xf32>, tensor<100x64xf32>, tensor<100x32xf32> -> tensor<2x8x128x32xf32>
  %1 = attn.dot_product %q1, %k8, %v28 norm [softmax over keys] : tensor<2x1x128x64xf32>, tensor<8x100x64xf32>, tensor<2x8x100x32xf32> -> tensor<2x8x128x32xf32>
  %2 = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] : tensor<2x8x128x64xf32>, tensor<100x64xf32>, tensor<100x32xf32>, tensor<2x1x128x100xf32> -> tensor<2x8x128x32xf32>
  return
}

// -----

// Dynamic dims are compatible with anything; the result may be as dynamic
// as the operands, more static than them, or less static than inferred.
// CHECK-LABEL: func.func @dot_product_dynamic
// CHECK: attn.dot_product %{{.+}} : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: attn.dot_product %{{.+}} : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x?xf32> -> tensor<4x128x32xf32>
// CHECK: attn.dot_product %{{.+}} : tensor<4x128x64xf32>, tensor<4x128x64xf32>, tensor<4x128x32xf32> -> tensor<?x?x?xf32>
// CHECK: attn.dot_product %{{.+}} mask %{{.+}} : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
func.func @dot_product_dynamic(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x?xf32>, %mask: tensor<?x?xf32>,
                               %qs: tensor<4x128x64xf32>, %vs: tensor<4x128x32xf32>) {
  %0 = attn.dot_product %q, %k, %v norm [softmax over keys] : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = attn.dot_product %q, %k, %v norm [softmax over keys] : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x?xf32> -> tensor<4x128x32xf32>
  %2 = attn.dot_product %qs, %qs, %vs norm [softmax over keys] : tensor<4x128x64xf32>, tensor<4x128x64xf32>, tensor<4x128x32xf32> -> tensor<?x?x?xf32>
  %3 = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  return
}

// -----

// f64 is accepted so the reference runtime can run a spec in double.
// CHECK-LABEL: func.func @dot_product_f64
// CHECK: attn.dot_product %{{.+}} norm [softmax over keys] scale 1.250000e-01 : tensor<16x8xf64>, tensor<16x8xf64>, tensor<16x8xf64> -> tensor<16x8xf64>
func.func @dot_product_f64(%q: tensor<16x8xf64>, %k: tensor<16x8xf64>, %v: tensor<16x8xf64>) -> tensor<16x8xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<16x8xf64>, tensor<16x8xf64>, tensor<16x8xf64> -> tensor<16x8xf64>
  return %o : tensor<16x8xf64>
}

// -----

// Discardable attributes survive next to the properties.
// CHECK-LABEL: func.func @dot_product_attr_dict
// CHECK: attn.dot_product %{{.+}} norm [softmax over keys] {tag = "x"} : tensor
func.func @dot_product_attr_dict(%q: tensor<16x8xf32>) {
  %o = attn.dot_product %q, %q, %q norm [softmax over keys] {tag = "x"} : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

// The standalone step attribute parses and prints with its wrapper.
// CHECK-LABEL: func.func @norm_step_attr
// CHECK-SAME: steps = [#attn.norm<softmax over keys>, #attn.norm<sum over queries eps 1.000000e-09>, #attn.norm<count over keys>, #attn.norm<none over queries>]
func.func @norm_step_attr() attributes {steps = [#attn.norm<softmax over keys>, #attn.norm<sum over queries eps 1.0e-9>, #attn.norm<count over keys>, #attn.norm<none over queries>]} {
  return
}

//===----------------------------------------------------------------------===//
// attn.efficient, attn.external, attn.deformable
//===----------------------------------------------------------------------===//

// -----

// Both variants; n = 4096 queries against m = 1024 keys.
// CHECK-LABEL: func.func @efficient
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<4096x32xf32>, %[[K:[a-z0-9_]+]]: tensor<1024x32xf32>, %[[V:[a-z0-9_]+]]: tensor<1024x64xf32>)
// CHECK: %[[E:.+]] = attn.efficient %[[Q]], %[[K]], %[[V]] variant softmax : tensor<4096x32xf32>, tensor<1024x32xf32>, tensor<1024x64xf32> -> tensor<4096x64xf32>
// CHECK: %[[S:.+]] = attn.efficient %[[Q]], %[[K]], %[[V]] variant scaling : tensor<4096x32xf32>, tensor<1024x32xf32>, tensor<1024x64xf32> -> tensor<4096x64xf32>
// CHECK: return %[[E]], %[[S]]
func.func @efficient(%q: tensor<4096x32xf32>, %k: tensor<1024x32xf32>, %v: tensor<1024x64xf32>) -> (tensor<4096x64xf32>, tensor<4096x64xf32>) {
  %e = attn.efficient %q, %k, %v variant softmax : tensor<4096x32xf32>, tensor<1024x32xf32>, tensor<1024x64xf32> -> tensor<4096x64xf32>
  %s = attn.efficient %q, %k, %v variant scaling : tensor<4096x32xf32>, tensor<1024x32xf32>, tensor<1024x64xf32> -> tensor<4096x64xf32>
  return %e, %s : tensor<4096x64xf32>, tensor<4096x64xf32>
}

// -----

// Efficient attention broadcasts, takes dynamic dims and f64.
// CHECK-LABEL: func.func @efficient_broadcast_dynamic_f64
// CHECK: attn.efficient %{{.+}} variant softmax : tensor<2x4x256x32xf32>, tensor<256x32xf32>, tensor<4x256x64xf32> -> tensor<2x4x256x64xf32>
// CHECK: attn.efficient %{{.+}} variant scaling : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: attn.efficient %{{.+}} variant scaling : tensor<16x8xf64>, tensor<16x8xf64>, tensor<16x8xf64> -> tensor<16x8xf64>
func.func @efficient_broadcast_dynamic_f64(%q: tensor<2x4x256x32xf32>, %k: tensor<256x32xf32>, %v: tensor<4x256x64xf32>,
                                           %qd: tensor<?x?x32xf32>, %vd: tensor<?x?x?xf32>, %x: tensor<16x8xf64>) {
  %0 = attn.efficient %q, %k, %v variant softmax : tensor<2x4x256x32xf32>, tensor<256x32xf32>, tensor<4x256x64xf32> -> tensor<2x4x256x64xf32>
  %1 = attn.efficient %qd, %qd, %vd variant scaling : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %2 = attn.efficient %x, %x, %x variant scaling : tensor<16x8xf64>, tensor<16x8xf64>, tensor<16x8xf64> -> tensor<16x8xf64>
  return
}

// -----

// with_context: the normalized context, (..., dk, dv), and the key
// log-sum-exp, (..., 1, dk); dynamic dims kept.
// CHECK-LABEL: func.func @efficient_with_context
// CHECK: attn.efficient %{{.+}} variant softmax with_context : tensor<2x3x40x8xf32>, tensor<2x3x56x8xf32>, tensor<2x3x56x12xf32> -> tensor<2x3x40x12xf32>, tensor<2x3x8x12xf32>, tensor<2x3x1x8xf32>
// CHECK: attn.efficient %{{.+}} variant softmax with_context : tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x?xf64> -> tensor<?x?xf64>, tensor<8x?xf64>, tensor<1x8xf64>
func.func @efficient_with_context(%q: tensor<2x3x40x8xf32>, %k: tensor<2x3x56x8xf32>, %v: tensor<2x3x56x12xf32>,
                                  %qd: tensor<?x8xf64>, %vd: tensor<?x?xf64>) {
  %0, %c0, %l0 = attn.efficient %q, %k, %v variant softmax with_context : tensor<2x3x40x8xf32>, tensor<2x3x56x8xf32>, tensor<2x3x56x12xf32> -> tensor<2x3x40x12xf32>, tensor<2x3x8x12xf32>, tensor<2x3x1x8xf32>
  %1, %c1, %l1 = attn.efficient %qd, %qd, %vd variant softmax with_context : tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x?xf64> -> tensor<?x?xf64>, tensor<8x?xf64>, tensor<1x8xf64>
  return
}

// -----

// softmax_from_lse: lse has the input's shape with 1 at dim.
// CHECK-LABEL: func.func @softmax_from_lse
// CHECK: attn.softmax_from_lse %{{.+}}, %{{.+}} dim 0 : tensor<56x8xf32>, tensor<1x8xf32>
// CHECK: attn.softmax_from_lse %{{.+}}, %{{.+}} dim 2 : tensor<2x?x8xf64>, tensor<2x?x1xf64>
func.func @softmax_from_lse(%k: tensor<56x8xf32>, %lse: tensor<1x8xf32>, %x: tensor<2x?x8xf64>, %rows: tensor<2x?x1xf64>) {
  %0 = attn.softmax_from_lse %k, %lse dim 0 : tensor<56x8xf32>, tensor<1x8xf32>
  %1 = attn.softmax_from_lse %x, %rows dim 2 : tensor<2x?x8xf64>, tensor<2x?x1xf64>
  return
}

// -----

// External attention: the default eps (1e-9) is elided, another one prints;
// batched input against shared rank-2 memories; dynamic positions.
// CHECK-LABEL: func.func @external
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4x1024x64xf32>, %[[MK:[a-z0-9_]+]]: tensor<16x64xf32>, %[[MV:[a-z0-9_]+]]: tensor<16x64xf32>, %[[XD:[a-z0-9_]+]]: tensor<?x64xf32>)
// CHECK: attn.external %[[X]], %[[MK]], %[[MV]] : tensor<4x1024x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<4x1024x64xf32>
// CHECK: attn.external %[[X]], %[[MK]], %[[MV]] : tensor<4x1024x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<4x1024x64xf32>
// CHECK: attn.external %[[X]], %[[MK]], %[[MV]] eps 2.500000e-01 : tensor<4x1024x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<4x1024x64xf32>
// CHECK: attn.external %[[X]], %[[MK]], %[[MV]] eps 0.000000e+00 : tensor
// CHECK: attn.external %[[XD]], %[[MK]], %[[MV]] : tensor<?x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<?x64xf32>
func.func @external(%x: tensor<4x1024x64xf32>, %mk: tensor<16x64xf32>, %mv: tensor<16x64xf32>, %xd: tensor<?x64xf32>) {
  %0 = attn.external %x, %mk, %mv : tensor<4x1024x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<4x1024x64xf32>
  %1 = attn.external %x, %mk, %mv eps 1.0e-9 : tensor<4x1024x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<4x1024x64xf32>
  %2 = attn.external %x, %mk, %mv eps 0.25 : tensor<4x1024x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<4x1024x64xf32>
  %3 = attn.external %x, %mk, %mv eps 0.0 : tensor<4x1024x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<4x1024x64xf32>
  %4 = attn.external %xd, %mk, %mv : tensor<?x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<?x64xf32>
  return
}

// -----

// Deformable attention with one level, four levels and align_corners;
// 16x16 + 8x8 + 4x4 + 2x2 = 340 value positions, heads x channels = 4 x 8.
// CHECK-LABEL: func.func @deformable
// CHECK-SAME: (%[[V1:[a-z0-9_]+]]: tensor<1x256x4x8xf32>, %[[L1:[a-z0-9_]+]]: tensor<1x100x4x1x4x2xf32>, %[[W1:[a-z0-9_]+]]: tensor<1x100x4x1x4xf32>, %[[V:[a-z0-9_]+]]: tensor<2x340x4x8xf32>, %[[L:[a-z0-9_]+]]: tensor<2x340x4x4x4x2xf32>, %[[W:[a-z0-9_]+]]: tensor<2x340x4x4x4xf32>)
// CHECK: attn.deformable %[[V1]], %[[L1]], %[[W1]] levels [16x16] : tensor<1x256x4x8xf32>, tensor<1x100x4x1x4x2xf32>, tensor<1x100x4x1x4xf32> -> tensor<1x100x32xf32>
// CHECK: attn.deformable %[[V]], %[[L]], %[[W]] levels [16x16, 8x8, 4x4, 2x2] : tensor<2x340x4x8xf32>, tensor<2x340x4x4x4x2xf32>, tensor<2x340x4x4x4xf32> -> tensor<2x340x32xf32>
// CHECK: attn.deformable %[[V]], %[[L]], %[[W]] levels [16x16, 8x8, 4x4, 2x2] align_corners : tensor<2x340x4x8xf32>, tensor<2x340x4x4x4x2xf32>, tensor<2x340x4x4x4xf32> -> tensor<2x340x32xf32>
func.func @deformable(%v1: tensor<1x256x4x8xf32>, %l1: tensor<1x100x4x1x4x2xf32>, %w1: tensor<1x100x4x1x4xf32>,
                      %v: tensor<2x340x4x8xf32>, %l: tensor<2x340x4x4x4x2xf32>, %w: tensor<2x340x4x4x4xf32>) {
  %0 = attn.deformable %v1, %l1, %w1 levels [16x16] : tensor<1x256x4x8xf32>, tensor<1x100x4x1x4x2xf32>, tensor<1x100x4x1x4xf32> -> tensor<1x100x32xf32>
  %1 = attn.deformable %v, %l, %w levels [16x16, 8x8, 4x4, 2x2] : tensor<2x340x4x8xf32>, tensor<2x340x4x4x4x2xf32>, tensor<2x340x4x4x4xf32> -> tensor<2x340x32xf32>
  %2 = attn.deformable %v, %l, %w levels [16x16, 8x8, 4x4, 2x2] align_corners : tensor<2x340x4x8xf32>, tensor<2x340x4x4x4x2xf32>, tensor<2x340x4x4x4xf32> -> tensor<2x340x32xf32>
  return
}

// -----

// Non-square levels keep H before W (24x32 + 12x16 = 960); a dynamic
// query count, batch or channel count; f64.
// CHECK-LABEL: func.func @deformable_rect_dynamic_f64
// CHECK: attn.deformable %{{.+}} levels [24x32, 12x16] : tensor<1x960x8x4xf32>, tensor<1x?x8x2x4x2xf32>, tensor<1x?x8x2x4xf32> -> tensor<1x?x32xf32>
// CHECK: attn.deformable %{{.+}} levels [24x32, 12x16] : tensor<?x?x8x?xf32>, tensor<?x?x8x2x4x2xf32>, tensor<?x?x8x2x4xf32> -> tensor<?x?x?xf32>
// CHECK: attn.deformable %{{.+}} levels [2x3] align_corners : tensor<1x6x1x2xf64>, tensor<1x5x1x1x1x2xf64>, tensor<1x5x1x1x1xf64> -> tensor<1x5x2xf64>
func.func @deformable_rect_dynamic_f64(%v: tensor<1x960x8x4xf32>, %l: tensor<1x?x8x2x4x2xf32>, %w: tensor<1x?x8x2x4xf32>,
                                       %vd: tensor<?x?x8x?xf32>, %ld: tensor<?x?x8x2x4x2xf32>, %wd: tensor<?x?x8x2x4xf32>,
                                       %v64: tensor<1x6x1x2xf64>, %l64: tensor<1x5x1x1x1x2xf64>, %w64: tensor<1x5x1x1x1xf64>) {
  %0 = attn.deformable %v, %l, %w levels [24x32, 12x16] : tensor<1x960x8x4xf32>, tensor<1x?x8x2x4x2xf32>, tensor<1x?x8x2x4xf32> -> tensor<1x?x32xf32>
  %1 = attn.deformable %vd, %ld, %wd levels [24x32, 12x16] : tensor<?x?x8x?xf32>, tensor<?x?x8x2x4x2xf32>, tensor<?x?x8x2x4xf32> -> tensor<?x?x?xf32>
  %2 = attn.deformable %v64, %l64, %w64 levels [2x3] align_corners : tensor<1x6x1x2xf64>, tensor<1x5x1x1x1x2xf64>, tensor<1x5x1x1x1xf64> -> tensor<1x5x2xf64>
  return
}

//===----------------------------------------------------------------------===//
// Primitive ops
//===----------------------------------------------------------------------===//

// -----

// Every transpose combination; the result is (M, N) in each.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:[a-z0-9_]+]]: tensor<128x64xf32>, %[[B:[a-z0-9_]+]]: tensor<64x32xf32>, %[[AT:[a-z0-9_]+]]: tensor<64x128xf32>, %[[BT:[a-z0-9_]+]]: tensor<32x64xf32>)
// CHECK: attn.matmul %[[A]], %[[B]] : tensor<128x64xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
// CHECK: attn.matmul %[[AT]], %[[B]] transpose_lhs : tensor<64x128xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
// CHECK: attn.matmul %[[A]], %[[BT]] transpose_rhs : tensor<128x64xf32>, tensor<32x64xf32> -> tensor<128x32xf32>
// CHECK: attn.matmul %[[AT]], %[[BT]] transpose_lhs transpose_rhs : tensor<64x128xf32>, tensor<32x64xf32> -> tensor<128x32xf32>
func.func @matmul(%a: tensor<128x64xf32>, %b: tensor<64x32xf32>, %at: tensor<64x128xf32>, %bt: tensor<32x64xf32>) {
  %0 = attn.matmul %a, %b : tensor<128x64xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
  %1 = attn.matmul %at, %b transpose_lhs : tensor<64x128xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
  %2 = attn.matmul %a, %bt transpose_rhs : tensor<128x64xf32>, tensor<32x64xf32> -> tensor<128x32xf32>
  %3 = attn.matmul %at, %bt transpose_lhs transpose_rhs : tensor<64x128xf32>, tensor<32x64xf32> -> tensor<128x32xf32>
  return
}

// -----

// Batched matmul broadcasts leading dims (a shared rank-2 weight, a batch
// of 1 stretched), takes dynamic dims and f64.
// CHECK-LABEL: func.func @matmul_broadcast_dynamic_f64
// CHECK: attn.matmul %{{.+}} : tensor<2x8x128x64xf32>, tensor<64x32xf32> -> tensor<2x8x128x32xf32>
// CHECK: attn.matmul %{{.+}} transpose_rhs : tensor<1x8x128x64xf32>, tensor<2x1x128x64xf32> -> tensor<2x8x128x128xf32>
// CHECK: attn.matmul %{{.+}} : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
// CHECK: attn.matmul %{{.+}} : tensor<?x128x?xf32>, tensor<64x32xf32> -> tensor<3x128x32xf32>
// CHECK: attn.matmul %{{.+}} : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
func.func @matmul_broadcast_dynamic_f64(%a: tensor<2x8x128x64xf32>, %w: tensor<64x32xf32>,
                                        %q: tensor<1x8x128x64xf32>, %k: tensor<2x1x128x64xf32>,
                                        %ad: tensor<?x?x?xf32>, %wd: tensor<?x?xf32>, %ap: tensor<?x128x?xf32>, %x: tensor<4x4xf64>) {
  %0 = attn.matmul %a, %w : tensor<2x8x128x64xf32>, tensor<64x32xf32> -> tensor<2x8x128x32xf32>
  %1 = attn.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf32>, tensor<2x1x128x64xf32> -> tensor<2x8x128x128xf32>
  %2 = attn.matmul %ad, %wd : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  %3 = attn.matmul %ap, %w : tensor<?x128x?xf32>, tensor<64x32xf32> -> tensor<3x128x32xf32>
  %4 = attn.matmul %x, %x : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  return
}

// -----

// Every kind, any in-range dim, eps only printed when non-zero.
// CHECK-LABEL: func.func @normalize
// CHECK-SAME: (%[[S:[a-z0-9_]+]]: tensor<2x128x96xf32>)
// CHECK: attn.normalize softmax %[[S]] dim 2 : tensor<2x128x96xf32>
// CHECK: attn.normalize softmax %[[S]] dim 1 : tensor<2x128x96xf32>
// CHECK: attn.normalize sum %[[S]] dim 2 : tensor<2x128x96xf32>
// CHECK: attn.normalize sum %[[S]] dim 2 eps 1.000000e-09 : tensor<2x128x96xf32>
// CHECK: attn.normalize sum %[[S]] dim 0 : tensor<2x128x96xf32>
// CHECK: attn.normalize count %[[S]] dim 2 : tensor<2x128x96xf32>
// CHECK: attn.normalize none %[[S]] dim 1 : tensor<2x128x96xf32>
func.func @normalize(%s: tensor<2x128x96xf32>) {
  %0 = attn.normalize softmax %s dim 2 : tensor<2x128x96xf32>
  %1 = attn.normalize softmax %s dim 1 : tensor<2x128x96xf32>
  %2 = attn.normalize sum %s dim 2 : tensor<2x128x96xf32>
  %3 = attn.normalize sum %s dim 2 eps 1.0e-9 : tensor<2x128x96xf32>
  %4 = attn.normalize sum %s dim 0 eps 0.0 : tensor<2x128x96xf32>
  %5 = attn.normalize count %s dim 2 : tensor<2x128x96xf32>
  %6 = attn.normalize none %s dim 1 : tensor<2x128x96xf32>
  return
}

// -----

// The elementwise primitives on dynamic and f64 tensors; causal_mask's
// default fill (-inf) is elided, also when written out in hex.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<?x128x?xf32>, %[[Y:[a-z0-9_]+]]: tensor<16x16xf64>)
// CHECK: attn.normalize softmax %[[X]] dim 2 : tensor<?x128x?xf32>
// CHECK: attn.scale %[[X]] by 1.250000e-01 : tensor<?x128x?xf32>
// CHECK: attn.scale %[[Y]] by -3.000000e+00 : tensor<16x16xf64>
// CHECK: attn.feature_map elu_plus_one %[[X]] : tensor<?x128x?xf32>
// CHECK: attn.feature_map relu %[[X]] : tensor<?x128x?xf32>
// CHECK: attn.feature_map identity %[[Y]] : tensor<16x16xf64>
// CHECK: attn.prefix_sum %[[X]] dim 1 : tensor<?x128x?xf32>
// CHECK: attn.prefix_sum %[[Y]] dim 0 : tensor<16x16xf64>
// CHECK: attn.causal_mask %[[X]] : tensor<?x128x?xf32>
// CHECK: attn.causal_mask %[[X]] : tensor<?x128x?xf32>
// CHECK: attn.causal_mask %[[Y]] fill 0.000000e+00 : tensor<16x16xf64>
// CHECK: attn.causal_mask %[[Y]] fill -1.000000e+04 : tensor<16x16xf64>
func.func @elementwise(%x: tensor<?x128x?xf32>, %y: tensor<16x16xf64>) {
  %0 = attn.normalize softmax %x dim 2 : tensor<?x128x?xf32>
  %1 = attn.scale %x by 0.125 : tensor<?x128x?xf32>
  %2 = attn.scale %y by -3.0 : tensor<16x16xf64>
  %3 = attn.feature_map elu_plus_one %x : tensor<?x128x?xf32>
  %4 = attn.feature_map relu %x : tensor<?x128x?xf32>
  %5 = attn.feature_map identity %y : tensor<16x16xf64>
  %6 = attn.prefix_sum %x dim 1 : tensor<?x128x?xf32>
  %7 = attn.prefix_sum %y dim 0 : tensor<16x16xf64>
  %8 = attn.causal_mask %x : tensor<?x128x?xf32>
  %9 = attn.causal_mask %x fill 0xFFF0000000000000 : tensor<?x128x?xf32>
  %10 = attn.causal_mask %y fill 0.0 : tensor<16x16xf64>
  %11 = attn.causal_mask %y fill -1.0e4 : tensor<16x16xf64>
  return
}

// -----

// Rank-1 tensors are fine for the ops that work along one dim.
// CHECK-LABEL: func.func @rank_one
// CHECK: attn.normalize softmax %{{.+}} dim 0 : tensor<7xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 0 : tensor<7xf32>
// CHECK: attn.scale %{{.+}} by 2.000000e+00 : tensor<7xf32>
func.func @rank_one(%x: tensor<7xf32>) {
  %0 = attn.normalize softmax %x dim 0 : tensor<7xf32>
  %1 = attn.prefix_sum %x dim 0 : tensor<7xf32>
  %2 = attn.scale %x by 2.0 : tensor<7xf32>
  return
}

// -----

// attn.add broadcasts numpy style (the residual of a block, a bias row, a
// per-head 1 stretched), also against dynamic dims.
// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[O:[a-z0-9_]+]]: tensor<256x64xf32>, %[[X:[a-z0-9_]+]]: tensor<256x64xf32>, %[[B:[a-z0-9_]+]]: tensor<64xf32>, %[[H:[a-z0-9_]+]]: tensor<2x1x256x64xf32>, %[[D:[a-z0-9_]+]]: tensor<?x64xf32>)
// CHECK: attn.add %[[O]], %[[X]] : tensor<256x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
// CHECK: attn.add %[[O]], %[[B]] : tensor<256x64xf32>, tensor<64xf32> -> tensor<256x64xf32>
// CHECK: attn.add %[[B]], %[[H]] : tensor<64xf32>, tensor<2x1x256x64xf32> -> tensor<2x1x256x64xf32>
// CHECK: attn.add %[[D]], %[[X]] : tensor<?x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
// CHECK: attn.add %[[D]], %[[B]] : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
func.func @add(%o: tensor<256x64xf32>, %x: tensor<256x64xf32>, %b: tensor<64xf32>, %h: tensor<2x1x256x64xf32>, %d: tensor<?x64xf32>) {
  %0 = attn.add %o, %x : tensor<256x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  %1 = attn.add %o, %b : tensor<256x64xf32>, tensor<64xf32> -> tensor<256x64xf32>
  %2 = attn.add %b, %h : tensor<64xf32>, tensor<2x1x256x64xf32> -> tensor<2x1x256x64xf32>
  %3 = attn.add %d, %x : tensor<?x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  %4 = attn.add %d, %b : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  return
}

// -----

// The sampling primitive: multi-level, align_corners, dynamic queries.
// CHECK-LABEL: func.func @bilinear_gather
// CHECK-SAME: (%[[V:[a-z0-9_]+]]: tensor<1x1280x8x32xf32>, %[[L:[a-z0-9_]+]]: tensor<1x100x8x2x4x2xf32>, %[[LD:[a-z0-9_]+]]: tensor<1x?x8x2x4x2xf32>)
// CHECK: attn.bilinear_gather %[[V]], %[[L]] levels [32x32, 16x16] : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32> -> tensor<1x100x8x2x4x32xf32>
// CHECK: attn.bilinear_gather %[[V]], %[[L]] levels [32x32, 16x16] align_corners : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32> -> tensor<1x100x8x2x4x32xf32>
// CHECK: attn.bilinear_gather %[[V]], %[[LD]] levels [32x32, 16x16] : tensor<1x1280x8x32xf32>, tensor<1x?x8x2x4x2xf32> -> tensor<1x?x8x2x4x32xf32>
func.func @bilinear_gather(%v: tensor<1x1280x8x32xf32>, %l: tensor<1x100x8x2x4x2xf32>, %ld: tensor<1x?x8x2x4x2xf32>) {
  %0 = attn.bilinear_gather %v, %l levels [32x32, 16x16] : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32> -> tensor<1x100x8x2x4x32xf32>
  %1 = attn.bilinear_gather %v, %l levels [32x32, 16x16] align_corners : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32> -> tensor<1x100x8x2x4x32xf32>
  %2 = attn.bilinear_gather %v, %ld levels [32x32, 16x16] : tensor<1x1280x8x32xf32>, tensor<1x?x8x2x4x2xf32> -> tensor<1x?x8x2x4x32xf32>
  return
}

// -----

// attn.mul and attn.div broadcast like attn.add; div prints eps only when it
// is not 0; reduce_sum keeps the reduced dim with size 1; prefix_sum takes
// `exclusive`.
// CHECK-LABEL: func.func @mul_div_reduce_sum_exclusive
// CHECK-SAME: (%[[A:[a-z0-9_]+]]: tensor<2x128x64xf32>, %[[R:[a-z0-9_]+]]: tensor<2x128x1xf32>, %[[D:[a-z0-9_]+]]: tensor<?x64xf64>)
// CHECK: attn.mul %[[A]], %[[R]] : tensor<2x128x64xf32>, tensor<2x128x1xf32> -> tensor<2x128x64xf32>
// CHECK: attn.mul %[[D]], %[[D]] : tensor<?x64xf64>, tensor<?x64xf64> -> tensor<?x64xf64>
// CHECK: attn.div %[[A]], %[[R]] : tensor<2x128x64xf32>, tensor<2x128x1xf32> -> tensor<2x128x64xf32>
// CHECK: attn.div %[[A]], %[[R]] eps 5.000000e-01 : tensor<2x128x64xf32>, tensor<2x128x1xf32> -> tensor<2x128x64xf32>
// CHECK: attn.reduce_sum %[[A]] dim 1 : tensor<2x128x64xf32> -> tensor<2x1x64xf32>
// CHECK: attn.reduce_sum %[[D]] dim 0 : tensor<?x64xf64> -> tensor<1x64xf64>
// CHECK: attn.prefix_sum %[[A]] dim 1 exclusive : tensor<2x128x64xf32>
func.func @mul_div_reduce_sum_exclusive(%a: tensor<2x128x64xf32>, %r: tensor<2x128x1xf32>, %d: tensor<?x64xf64>) {
  %0 = attn.mul %a, %r : tensor<2x128x64xf32>, tensor<2x128x1xf32> -> tensor<2x128x64xf32>
  %1 = attn.mul %d, %d : tensor<?x64xf64>, tensor<?x64xf64> -> tensor<?x64xf64>
  %2 = attn.div %a, %r : tensor<2x128x64xf32>, tensor<2x128x1xf32> -> tensor<2x128x64xf32>
  %3 = attn.div %a, %r eps 0.5 : tensor<2x128x64xf32>, tensor<2x128x1xf32> -> tensor<2x128x64xf32>
  %4 = attn.reduce_sum %a dim 1 : tensor<2x128x64xf32> -> tensor<2x1x64xf32>
  %5 = attn.reduce_sum %d dim 0 : tensor<?x64xf64> -> tensor<1x64xf64>
  %6 = attn.prefix_sum %a dim 1 exclusive : tensor<2x128x64xf32>
  return
}

// -----

// The primitives of --attn-lower-deformable: attn.floor (elementwise, any
// rank, f32 or f64) and attn.gather_pixels (levels as in attn.deformable;
// dynamic batch and queries).
// CHECK-LABEL: func.func @floor_gather_pixels
// CHECK-SAME: (%[[V:[a-z0-9_]+]]: tensor<2x20x3x8xf32>, %[[P:[a-z0-9_]+]]: tensor<2x5x3x2x4x2xf32>, %[[DV:[a-z0-9_]+]]: tensor<?x20x3x8xf64>, %[[DP:[a-z0-9_]+]]: tensor<?x?x3x2x4x2xf64>)
// CHECK: %[[B:.+]] = attn.floor %[[P]] : tensor<2x5x3x2x4x2xf32>
// CHECK: attn.floor %[[DP]] : tensor<?x?x3x2x4x2xf64>
// CHECK: attn.gather_pixels %[[V]], %[[B]] levels [4x4, 2x2] : tensor<2x20x3x8xf32>, tensor<2x5x3x2x4x2xf32> -> tensor<2x5x3x2x4x8xf32>
// CHECK: attn.gather_pixels %[[DV]], %[[DP]] levels [4x4, 2x2] : tensor<?x20x3x8xf64>, tensor<?x?x3x2x4x2xf64> -> tensor<?x?x3x2x4x8xf64>
func.func @floor_gather_pixels(%v: tensor<2x20x3x8xf32>, %p: tensor<2x5x3x2x4x2xf32>,
                               %dv: tensor<?x20x3x8xf64>, %dp: tensor<?x?x3x2x4x2xf64>) {
  %0 = attn.floor %p : tensor<2x5x3x2x4x2xf32>
  %1 = attn.floor %dp : tensor<?x?x3x2x4x2xf64>
  %2 = attn.gather_pixels %v, %0 levels [4x4, 2x2] : tensor<2x20x3x8xf32>, tensor<2x5x3x2x4x2xf32> -> tensor<2x5x3x2x4x8xf32>
  %3 = attn.gather_pixels %dv, %dp levels [4x4, 2x2] : tensor<?x20x3x8xf64>, tensor<?x?x3x2x4x2xf64> -> tensor<?x?x3x2x4x8xf64>
  return
}

// -----

// The primitives of gradients: feature_map_grad (every kind, elementwise,
// dynamic dims, f64) and prefix_sum `reverse`, alone and after `exclusive`.
// CHECK-LABEL: func.func @feature_map_grad_reverse_scan
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<?x128x?xf32>, %[[DY:[a-z0-9_]+]]: tensor<?x128x?xf32>, %[[Y:[a-z0-9_]+]]: tensor<16x16xf64>)
// CHECK: attn.feature_map_grad identity %[[X]], %[[DY]] : tensor<?x128x?xf32>
// CHECK: attn.feature_map_grad elu_plus_one %[[X]], %[[DY]] : tensor<?x128x?xf32>
// CHECK: attn.feature_map_grad relu %[[Y]], %[[Y]] : tensor<16x16xf64>
// CHECK: attn.prefix_sum %[[X]] dim 1 reverse : tensor<?x128x?xf32>
// CHECK: attn.prefix_sum %[[Y]] dim 0 exclusive reverse : tensor<16x16xf64>
func.func @feature_map_grad_reverse_scan(%x: tensor<?x128x?xf32>, %dy: tensor<?x128x?xf32>, %y: tensor<16x16xf64>) {
  %0 = attn.feature_map_grad identity %x, %dy : tensor<?x128x?xf32>
  %1 = attn.feature_map_grad elu_plus_one %x, %dy : tensor<?x128x?xf32>
  %2 = attn.feature_map_grad relu %y, %y : tensor<16x16xf64>
  %3 = attn.prefix_sum %x dim 1 reverse : tensor<?x128x?xf32>
  %4 = attn.prefix_sum %y dim 0 exclusive reverse : tensor<16x16xf64>
  return
}

// -----

// attn.broadcast: to a higher rank and along size-1 dims; a dynamic `like`
// dim gives a dynamic result. attn.unbroadcast: the reverse; a dynamic
// `like` dim (1 or not at run time) stays dynamic.
// CHECK-LABEL: func.func @broadcast_unbroadcast
// CHECK-SAME: (%[[R:[a-z0-9_]+]]: tensor<8x128x1xf32>, %[[S:[a-z0-9_]+]]: tensor<8x128x128xf32>, %[[M:[a-z0-9_]+]]: tensor<128x128xf32>, %[[D:[a-z0-9_]+]]: tensor<?x128xf32>)
// CHECK: attn.broadcast %[[R]] like %[[S]] : tensor<8x128x1xf32>, tensor<8x128x128xf32> -> tensor<8x128x128xf32>
// CHECK: attn.broadcast %[[M]] like %[[S]] : tensor<128x128xf32>, tensor<8x128x128xf32> -> tensor<8x128x128xf32>
// CHECK: attn.broadcast %[[M]] like %[[D]] : tensor<128x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
// CHECK: attn.unbroadcast %[[S]] like %[[R]] : tensor<8x128x128xf32>, tensor<8x128x1xf32> -> tensor<8x128x1xf32>
// CHECK: attn.unbroadcast %[[S]] like %[[M]] : tensor<8x128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
// CHECK: attn.unbroadcast %[[S]] like %[[D]] : tensor<8x128x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
func.func @broadcast_unbroadcast(%r: tensor<8x128x1xf32>, %s: tensor<8x128x128xf32>, %m: tensor<128x128xf32>, %d: tensor<?x128xf32>) {
  %0 = attn.broadcast %r like %s : tensor<8x128x1xf32>, tensor<8x128x128xf32> -> tensor<8x128x128xf32>
  %1 = attn.broadcast %m like %s : tensor<128x128xf32>, tensor<8x128x128xf32> -> tensor<8x128x128xf32>
  %2 = attn.broadcast %m like %d : tensor<128x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  %3 = attn.unbroadcast %s like %r : tensor<8x128x128xf32>, tensor<8x128x1xf32> -> tensor<8x128x1xf32>
  %4 = attn.unbroadcast %s like %m : tensor<8x128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
  %5 = attn.unbroadcast %s like %d : tensor<8x128x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  return
}

// -----

// attn.scatter_pixels, the adjoint of gather_pixels: the result has the
// levels' rows; dynamic batch and queries.
// CHECK-LABEL: func.func @scatter_pixels
// CHECK-SAME: (%[[DY:[a-z0-9_]+]]: tensor<2x5x3x2x4x8xf32>, %[[P:[a-z0-9_]+]]: tensor<2x5x3x2x4x2xf32>, %[[DDY:[a-z0-9_]+]]: tensor<?x?x3x2x4x8xf64>, %[[DP:[a-z0-9_]+]]: tensor<?x?x3x2x4x2xf64>)
// CHECK: attn.scatter_pixels %[[DY]], %[[P]] levels [4x4, 2x2] : tensor<2x5x3x2x4x8xf32>, tensor<2x5x3x2x4x2xf32> -> tensor<2x20x3x8xf32>
// CHECK: attn.scatter_pixels %[[DDY]], %[[DP]] levels [4x4, 2x2] : tensor<?x?x3x2x4x8xf64>, tensor<?x?x3x2x4x2xf64> -> tensor<?x20x3x8xf64>
func.func @scatter_pixels(%dy: tensor<2x5x3x2x4x8xf32>, %p: tensor<2x5x3x2x4x2xf32>,
                          %ddy: tensor<?x?x3x2x4x8xf64>, %dp: tensor<?x?x3x2x4x2xf64>) {
  %0 = attn.scatter_pixels %dy, %p levels [4x4, 2x2] : tensor<2x5x3x2x4x8xf32>, tensor<2x5x3x2x4x2xf32> -> tensor<2x20x3x8xf32>
  %1 = attn.scatter_pixels %ddy, %dp levels [4x4, 2x2] : tensor<?x?x3x2x4x8xf64>, tensor<?x?x3x2x4x2xf64> -> tensor<?x20x3x8xf64>
  return
}

// -----

// attn.dot_product with_lse: the row log-sum-exp as a second result, f32
// for bf16 operands (the accumulator's type), f64 for f64; dynamic rows.
// CHECK-LABEL: func.func @dot_product_with_lse
// CHECK: %[[O:.+]], %[[L:.+]] = attn.dot_product %{{.+}}, %{{.+}}, %{{.+}} norm [softmax over keys] scale 1.250000e-01 causal with_lse : tensor<2x16x8xbf16>, tensor<2x24x8xbf16>, tensor<2x24x4xbf16> -> tensor<2x16x4xbf16>, tensor<2x16xf32>
// CHECK: attn.dot_product %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} norm [none over keys, softmax over keys] with_lse : tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x?xf64> -> tensor<?x8xf64>, tensor<?xf64>
// CHECK: return %[[O]], %[[L]]
func.func @dot_product_with_lse(%q: tensor<2x16x8xbf16>, %k: tensor<2x24x8xbf16>, %v: tensor<2x24x4xbf16>,
                                %x: tensor<?x8xf64>, %mask: tensor<?x?xf64>) -> (tensor<2x16x4xbf16>, tensor<2x16xf32>) {
  %o, %lse = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 causal with_lse
      : tensor<2x16x8xbf16>, tensor<2x24x8xbf16>, tensor<2x24x4xbf16> -> tensor<2x16x4xbf16>, tensor<2x16xf32>
  %o2, %lse2 = attn.dot_product %x, %x, %x mask %mask norm [none over keys, softmax over keys] with_lse
      : tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x?xf64> -> tensor<?x8xf64>, tensor<?xf64>
  return %o, %lse : tensor<2x16x4xbf16>, tensor<2x16xf32>
}

// -----

// attn.attention_grad with the forward's saved row log-sum-exp.
// CHECK-LABEL: func.func @attention_grad_lse
// CHECK: attn.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} lse %{{.+}} scale 5.000000e-01 causal : tensor<2x3x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>, tensor<2x3x16xf32> -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
func.func @attention_grad_lse(%q: tensor<2x3x16x8xf32>, %k: tensor<2x1x24x8xf32>, %v: tensor<2x1x24x4xf32>, %g: tensor<2x3x16x4xf32>, %lse: tensor<2x3x16xf32>) {
  %0:3 = attn.attention_grad %q, %k, %v, %g lse %lse scale 0.5 causal
      : tensor<2x3x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>, tensor<2x3x16xf32>
      -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
  return
}

// -----

// attn.attention_grad with the forward's saved lse and output.
// CHECK-LABEL: func.func @attention_grad_output
// CHECK: attn.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} lse %{{.+}} output %{{.+}} scale 5.000000e-01 causal : tensor<2x3x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>, tensor<16x24xf32>, tensor<2x3x16xf32>, tensor<2x3x16x4xf32> -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
func.func @attention_grad_output(%q: tensor<2x3x16x8xf32>, %k: tensor<2x1x24x8xf32>, %v: tensor<2x1x24x4xf32>, %g: tensor<2x3x16x4xf32>, %mask: tensor<16x24xf32>, %lse: tensor<2x3x16xf32>, %o: tensor<2x3x16x4xf32>) {
  %0:3 = attn.attention_grad %q, %k, %v, %g mask %mask lse %lse output %o scale 0.5 causal
      : tensor<2x3x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>, tensor<16x24xf32>, tensor<2x3x16xf32>, tensor<2x3x16x4xf32>
      -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
  return
}

// -----

// attn.attention_grad with an additive mask (broadcast over the heads and,
// with it, a mask that broadcasts the batch to 3 heads), alone and with a
// saved log-sum-exp: the types follow the operands' order.
// CHECK-LABEL: func.func @attention_grad_mask
// CHECK: attn.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} scale 5.000000e-01 : tensor<2x1x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>, tensor<3x16x24xf32> -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
// CHECK: attn.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} lse %{{.+}} causal : tensor<2x1x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>, tensor<3x16x24xf32>, tensor<2x3x16xf32> -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
func.func @attention_grad_mask(%q: tensor<2x1x16x8xf32>, %k: tensor<2x1x24x8xf32>, %v: tensor<2x1x24x4xf32>, %g: tensor<2x3x16x4xf32>, %mask: tensor<3x16x24xf32>, %lse: tensor<2x3x16xf32>) {
  %0:3 = attn.attention_grad %q, %k, %v, %g mask %mask scale 0.5
      : tensor<2x1x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>, tensor<3x16x24xf32>
      -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
  %1:3 = attn.attention_grad %q, %k, %v, %g mask %mask lse %lse causal
      : tensor<2x1x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>, tensor<3x16x24xf32>, tensor<2x3x16xf32>
      -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
  return
}

// -----

// attn.attention_grad, the fused softmax backward: gradients over the
// broadcast batch (K and V shared by the 3 query heads here), causal and
// dynamic sizes.
// CHECK-LABEL: func.func @attention_grad
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x3x16x8xf32>, %[[K:[a-z0-9_]+]]: tensor<2x1x24x8xf32>, %[[V:[a-z0-9_]+]]: tensor<2x1x24x4xf32>, %[[G:[a-z0-9_]+]]: tensor<2x3x16x4xf32>, %[[DQ:[a-z0-9_]+]]: tensor<?x8xf64>, %[[DG:[a-z0-9_]+]]: tensor<?x5xf64>)
// CHECK: attn.attention_grad %[[Q]], %[[K]], %[[V]], %[[G]] scale 3.500000e-01 : tensor<2x3x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32> -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
// CHECK: attn.attention_grad %[[DQ]], %[[DQ]], %[[DG]], %[[DG]] causal : tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x5xf64>, tensor<?x5xf64> -> tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x5xf64>
func.func @attention_grad(%q: tensor<2x3x16x8xf32>, %k: tensor<2x1x24x8xf32>, %v: tensor<2x1x24x4xf32>, %g: tensor<2x3x16x4xf32>,
                          %dq: tensor<?x8xf64>, %dg: tensor<?x5xf64>) {
  %0:3 = attn.attention_grad %q, %k, %v, %g scale 3.500000e-01
      : tensor<2x3x16x8xf32>, tensor<2x1x24x8xf32>, tensor<2x1x24x4xf32>, tensor<2x3x16x4xf32>
      -> tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>
  %1:3 = attn.attention_grad %dq, %dq, %dg, %dg causal
      : tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x5xf64>, tensor<?x5xf64>
      -> tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x5xf64>
  return
}

// -----

// attn.deformable_grad, the fused deformable backward: static with
// align_corners, and dynamic N, Lq, P and D (each gradient has its
// operand's shape; the weights fill in the locations' dynamic Lq).
// CHECK-LABEL: func.func @deformable_grad
// CHECK-SAME: (%[[V:[a-z0-9_]+]]: tensor<1x1280x8x32xf32>, %[[L:[a-z0-9_]+]]: tensor<1x100x8x2x4x2xf32>, %[[W:[a-z0-9_]+]]: tensor<1x100x8x2x4xf32>, %[[G:[a-z0-9_]+]]: tensor<1x100x256xf32>, %[[DV:[a-z0-9_]+]]: tensor<?x20x3x?xf64>, %[[DL:[a-z0-9_]+]]: tensor<?x?x3x2x?x2xf64>, %[[DW:[a-z0-9_]+]]: tensor<?x7x3x2x?xf64>, %[[DG:[a-z0-9_]+]]: tensor<?x?x?xf64>)
// CHECK: attn.deformable_grad %[[V]], %[[L]], %[[W]], %[[G]] levels [32x32, 16x16] align_corners : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>, tensor<1x100x8x2x4xf32>, tensor<1x100x256xf32> -> tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>, tensor<1x100x8x2x4xf32>
// CHECK: attn.deformable_grad %[[DV]], %[[DL]], %[[DW]], %[[DG]] levels [4x4, 2x2] : tensor<?x20x3x?xf64>, tensor<?x?x3x2x?x2xf64>, tensor<?x7x3x2x?xf64>, tensor<?x?x?xf64> -> tensor<?x20x3x?xf64>, tensor<?x7x3x2x?x2xf64>, tensor<?x7x3x2x?xf64>
func.func @deformable_grad(%v: tensor<1x1280x8x32xf32>, %l: tensor<1x100x8x2x4x2xf32>, %w: tensor<1x100x8x2x4xf32>, %g: tensor<1x100x256xf32>,
                           %dv: tensor<?x20x3x?xf64>, %dl: tensor<?x?x3x2x?x2xf64>, %dw: tensor<?x7x3x2x?xf64>, %dg: tensor<?x?x?xf64>) {
  %0:3 = attn.deformable_grad %v, %l, %w, %g levels [32x32, 16x16] align_corners
      : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>, tensor<1x100x8x2x4xf32>, tensor<1x100x256xf32>
      -> tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>, tensor<1x100x8x2x4xf32>
  %1:3 = attn.deformable_grad %dv, %dl, %dw, %dg levels [4x4, 2x2]
      : tensor<?x20x3x?xf64>, tensor<?x?x3x2x?x2xf64>, tensor<?x7x3x2x?xf64>, tensor<?x?x?xf64>
      -> tensor<?x20x3x?xf64>, tensor<?x7x3x2x?x2xf64>, tensor<?x7x3x2x?xf64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reduced precision (docs/precision.md)
//===----------------------------------------------------------------------===//

// bf16 and f16 operands; a result may be declared with another of bf16,
// f16 and f32 (rounded to it once); pixel coordinates stay f32 next to a
// bf16 value.
// CHECK-LABEL: func.func @reduced_precision
// CHECK: attn.dot_product %{{.*}}, %{{.*}}, %{{.*}} norm [softmax over keys] scale 1.250000e-01 : tensor<2x16x8xbf16>, tensor<2x16x8xbf16>, tensor<2x16x8xbf16> -> tensor<2x16x8xf32>
// CHECK: attn.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<16x8xf16>, tensor<16x8xf16> -> tensor<16x16xbf16>
// CHECK: attn.normalize softmax %{{.*}} dim 1 : tensor<16x16xf16>
// CHECK: attn.gather_pixels %{{.*}}, %{{.*}} levels [4x5] : tensor<1x20x2x4xbf16>, tensor<1x3x2x1x2x2xf32> -> tensor<1x3x2x1x2x4xbf16>
func.func @reduced_precision(%q: tensor<2x16x8xbf16>, %a: tensor<16x8xf16>, %s: tensor<16x16xf16>,
                             %value: tensor<1x20x2x4xbf16>, %pixels: tensor<1x3x2x1x2x2xf32>) {
  %0 = attn.dot_product %q, %q, %q norm [softmax over keys] scale 0.125 : tensor<2x16x8xbf16>, tensor<2x16x8xbf16>, tensor<2x16x8xbf16> -> tensor<2x16x8xf32>
  %1 = attn.matmul %a, %a transpose_rhs : tensor<16x8xf16>, tensor<16x8xf16> -> tensor<16x16xbf16>
  %2 = attn.normalize softmax %s dim 1 : tensor<16x16xf16>
  %3 = attn.gather_pixels %value, %pixels levels [4x5] : tensor<1x20x2x4xbf16>, tensor<1x3x2x1x2x2xf32> -> tensor<1x3x2x1x2x4xbf16>
  return
}
