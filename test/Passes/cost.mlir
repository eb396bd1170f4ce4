// RUN: attn-opt %s --attn-cost -split-input-file --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | grep "remark:" | FileCheck %s

// Per-op remarks of --attn-cost ("cost: macs = M, flops = F, floats = N")
// and the totals of each function and module, hand-computed from
// passes/CostModel.cpp. MACs of attention ops: batch * n * m * (dk + dv)
// (Q K^T and P V); flops = 2 * macs + elementwise work; floats = what the op
// materializes (scores n x m or context dk x dv, plus its output).
// grep drops the echoed source lines and carets so CHECK-NEXT can follow the
// remarks one by one.

// dot_product, n = 128, m = 96, dk = 64, dv = 32, [softmax over keys],
// scale 0.125:
//   scores = 128 * 96 = 12288; macs = 12288 * (64 + 32) = 1179648
//   elementwise = 12288 * (4 softmax + 1 scale) = 61440
//   flops = 2 * 1179648 + 61440 = 2420736
//   floats = 12288 scores + 128 * 32 output = 16384
// Totals add the three arguments: 128*64 + 96*64 + 96*32 = 17408 floats,
// 33792 floats = 135168 bytes at f32 = 0.00 GB (two decimals).
// CHECK-LABEL: remark: cost: macs = 1179648, flops = 2420736, floats = 16384
// CHECK-NEXT: remark: total of @dot_product_softmax: macs = 1179648, flops = 2420736 (2 x macs + 61440 elementwise), floats = 33792 (0.00 GB), weights = 0 floats (not in floats)
// CHECK-NEXT: remark: module total: macs = 1179648, flops = 2420736 (2 x macs + 61440 elementwise), floats = 33792 (0.00 GB), weights = 0 floats (not in floats)
func.func @dot_product_softmax(%q: tensor<128x64xf32>, %k: tensor<96x64xf32>, %v: tensor<96x32xf32>) -> tensor<128x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<128x64xf32>, tensor<96x64xf32>, tensor<96x32xf32> -> tensor<128x32xf32>
  return %o : tensor<128x32xf32>
}

// -----

// Broadcast batch (2 x 4 heads against a shared rank-2 K/V), additive mask,
// elu+1 feature map, two norm steps, causal:
//   batch = 8; scores = 8 * 64 * 32 = 16384
//   macs = 16384 * (16 + 8) = 393216
//   per score: sum 2 + count 1 + mask 1 = 4 (scale 1 and causal are free)
//   feature map: 1 per element of Q (2*4*64*16 = 8192) and K (32*16 = 512)
//   elementwise = 16384 * 4 + 8704 = 74240; flops = 786432 + 74240 = 860672
//   floats = 16384 + 2*4*64*8 = 20480
// CHECK-LABEL: remark: cost: macs = 393216, flops = 860672, floats = 20480
// CHECK-NEXT: remark: total of @dot_product_options
func.func @dot_product_options(%q: tensor<2x4x64x16xf32>, %k: tensor<32x16xf32>, %v: tensor<32x8xf32>, %mask: tensor<64x32xf32>) -> tensor<2x4x64x8xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [sum over keys, count over queries] feature_map elu_plus_one causal : tensor<2x4x64x16xf32>, tensor<32x16xf32>, tensor<32x8xf32>, tensor<64x32xf32> -> tensor<2x4x64x8xf32>
  return %o : tensor<2x4x64x8xf32>
}

// -----

// Efficient attention, n = 256, m = 128, dk = 32, dv = 64:
//   context = 32 * 64 = 2048; macs = 2048 * (256 + 128) = 786432
//   softmax: 4 flops per element of Q (8192) and K (4096) = 49152
//     flops = 1572864 + 49152 = 1622016
//   scaling: 1 flop per element = 12288; flops = 1572864 + 12288 = 1585152
//   floats = 2048 context + 256 * 64 output = 18432
// CHECK-LABEL: remark: cost: macs = 786432, flops = 1622016, floats = 18432
// CHECK-NEXT: remark: cost: macs = 786432, flops = 1585152, floats = 18432
// CHECK-NEXT: remark: total of @efficient
func.func @efficient(%q: tensor<256x32xf32>, %k: tensor<128x32xf32>, %v: tensor<128x64xf32>) -> (tensor<256x64xf32>, tensor<256x64xf32>) {
  %e = attn.efficient %q, %k, %v variant softmax : tensor<256x32xf32>, tensor<128x32xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
  %s = attn.efficient %q, %k, %v variant scaling : tensor<256x32xf32>, tensor<128x32xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
  return %e, %s : tensor<256x64xf32>, tensor<256x64xf32>
}

// -----

// External attention, n = 256, S = 16 slots, d = 64, dv = 32; memories are
// {attn.weight}: excluded from floats, reported as weights (16*64 + 16*32).
//   scores = 256 * 16 = 4096; macs = 4096 * (64 + 32) = 393216
//   elementwise = 4096 * (softmax 4 + sum 2) = 24576
//   flops = 786432 + 24576 = 811008
//   floats = 4096 + 256 * 32 = 12288; total = 12288 + X 256*64 = 28672
// CHECK-LABEL: remark: cost: macs = 393216, flops = 811008, floats = 12288
// CHECK-NEXT: remark: total of @external: macs = 393216, flops = 811008 (2 x macs + 24576 elementwise), floats = 28672 (0.00 GB), weights = 1536 floats (not in floats)
func.func @external(%x: tensor<256x64xf32>, %mk: tensor<16x64xf32> {attn.weight}, %mv: tensor<16x32xf32> {attn.weight}) -> tensor<256x32xf32> {
  %o = attn.external %x, %mk, %mv : tensor<256x64xf32>, tensor<16x64xf32>, tensor<16x32xf32> -> tensor<256x32xf32>
  return %o : tensor<256x32xf32>
}

// -----

// Deformable attention: N = 1, Lq = 340, M = 4, L = 4, P = 4, D = 8.
//   sampled channels = 1*340*4*4*4 * 8 = 174080
//   macs = 174080 * (4 corners + 1 weight) = 870400; flops = 1740800
//   floats = output 1 * 340 * 32 = 10880
// bilinear_gather: N = 1, Lq = 100, M = 8, L = 2, P = 4, D = 32.
//   sampled channels = 1*100*8*2*4 * 32 = 204800
//   macs = 204800 * 4 corners = 819200; flops = 1638400; floats = 204800
// CHECK-LABEL: remark: cost: macs = 870400, flops = 1740800, floats = 10880
// CHECK-NEXT: remark: cost: macs = 819200, flops = 1638400, floats = 204800
// CHECK-NEXT: remark: total of @sampling
func.func @sampling(%v: tensor<1x340x4x8xf32>, %l: tensor<1x340x4x4x4x2xf32>, %w: tensor<1x340x4x4x4xf32>,
                    %v2: tensor<1x1280x8x32xf32>, %l2: tensor<1x100x8x2x4x2xf32>) -> (tensor<1x340x32xf32>, tensor<1x100x8x2x4x32xf32>) {
  %0 = attn.deformable %v, %l, %w levels [16x16, 8x8, 4x4, 2x2] : tensor<1x340x4x8xf32>, tensor<1x340x4x4x4x2xf32>, tensor<1x340x4x4x4xf32> -> tensor<1x340x32xf32>
  %1 = attn.bilinear_gather %v2, %l2 levels [32x32, 16x16] : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32> -> tensor<1x100x8x2x4x32xf32>
  return %0, %1 : tensor<1x340x32xf32>, tensor<1x100x8x2x4x32xf32>
}

// -----

// deformable_grad (the fused backward): per sampled channel 4 corner MACs of
// the dots with the cotangent and 4 of the scatter into dvalue, so 8:
//   samples 1*340*4*4*4 = 21760, times D = 8: 174080; macs = 8 * 174080 =
//   1392640, flops = 2785280; floats = dvalue 1*340*4*8 = 10880 + dloc
//   21760*2 = 43520 + dweights 21760 = 76160.
// CHECK-LABEL: remark: cost: macs = 1392640, flops = 2785280, floats = 76160
// CHECK-NEXT: remark: total of @deformable_grad
func.func @deformable_grad(%v: tensor<1x340x4x8xf32>, %l: tensor<1x340x4x4x4x2xf32>, %w: tensor<1x340x4x4x4xf32>, %g: tensor<1x340x32xf32>) -> (tensor<1x340x4x8xf32>, tensor<1x340x4x4x4x2xf32>, tensor<1x340x4x4x4xf32>) {
  %0:3 = attn.deformable_grad %v, %l, %w, %g levels [16x16, 8x8, 4x4, 2x2] : tensor<1x340x4x8xf32>, tensor<1x340x4x4x4x2xf32>, tensor<1x340x4x4x4xf32>, tensor<1x340x32xf32> -> tensor<1x340x4x8xf32>, tensor<1x340x4x4x4x2xf32>, tensor<1x340x4x4x4xf32>
  return %0#0, %0#1, %0#2 : tensor<1x340x4x8xf32>, tensor<1x340x4x4x4x2xf32>, tensor<1x340x4x4x4xf32>
}

// -----

// matmul: outputs * inner dim; the transposed lhs (64x128, K = 64) costs the
// same as the plain one; a broadcast batch multiplies.
//   128x64 * 64x32: macs = 128*32 * 64 = 262144, flops = 524288, floats = 4096
//   2x8x128x64 * 64x32: macs = 2*8*128*32 * 64 = 4194304, floats = 65536
// CHECK-LABEL: remark: cost: macs = 262144, flops = 524288, floats = 4096
// CHECK-NEXT: remark: cost: macs = 262144, flops = 524288, floats = 4096
// CHECK-NEXT: remark: cost: macs = 4194304, flops = 8388608, floats = 65536
// CHECK-NEXT: remark: total of @matmul
func.func @matmul(%a: tensor<128x64xf32>, %at: tensor<64x128xf32>, %b: tensor<64x32xf32>, %x: tensor<2x8x128x64xf32>)
    -> (tensor<128x32xf32>, tensor<128x32xf32>, tensor<2x8x128x32xf32>) {
  %0 = attn.matmul %a, %b : tensor<128x64xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
  %1 = attn.matmul %at, %b transpose_lhs : tensor<64x128xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
  %2 = attn.matmul %x, %b : tensor<2x8x128x64xf32>, tensor<64x32xf32> -> tensor<2x8x128x32xf32>
  return %0, %1, %2 : tensor<128x32xf32>, tensor<128x32xf32>, tensor<2x8x128x32xf32>
}

// -----

// In-place rule: a normalize whose input has one use writes into it
// (floats = 0); when the input has a second use it needs its own buffer.
// Scores S = 128x128 = 16384 elements; softmax = 4 flops each = 65536.
//   %s (matmul, 128*128 * 64 MACs = 1048576) has two uses -> %p counted;
//   %p has one use -> %c (count, 1 flop each) in place.
// CHECK-LABEL: remark: cost: macs = 1048576, flops = 2097152, floats = 16384
// CHECK-NEXT: remark: cost: macs = 0, flops = 65536, floats = 16384
// CHECK-NEXT: remark: cost: macs = 0, flops = 16384, floats = 0
// CHECK-NEXT: remark: total of @normalize_in_place: macs = 1048576, flops = 2179072 (2 x macs + 81920 elementwise)
func.func @normalize_in_place(%q: tensor<128x64xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %s = attn.matmul %q, %q transpose_rhs : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x128xf32>
  %p = attn.normalize softmax %s dim 1 : tensor<128x128xf32>
  %c = attn.normalize count %p dim 0 : tensor<128x128xf32>
  return %s, %c : tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// Elementwise primitives, 128x128 = 16384 elements each, all in place
// except where noted:
//   causal_mask 0 flops; scale 1; sum 2 (+eps is free); feature_map relu 1,
//   identity 0; prefix_sum 1; add 1.
// The add's operands: %m (one use, same type) -> in place.
// A broadcast add whose only same-shaped operand has another use is not.
// CHECK-LABEL: remark: cost: macs = 1048576, flops = 2097152, floats = 16384
// CHECK-NEXT: remark: cost: macs = 0, flops = 0, floats = 0
// CHECK-NEXT: remark: cost: macs = 0, flops = 16384, floats = 0
// CHECK-NEXT: remark: cost: macs = 0, flops = 32768, floats = 0
// CHECK-NEXT: remark: cost: macs = 0, flops = 16384, floats = 0
// CHECK-NEXT: remark: cost: macs = 0, flops = 0, floats = 0
// CHECK-NEXT: remark: cost: macs = 0, flops = 16384, floats = 0
// CHECK-NEXT: remark: cost: macs = 0, flops = 16384, floats = 0
// CHECK-NEXT: remark: cost: macs = 0, flops = 16384, floats = 16384
// CHECK-NEXT: remark: total of @elementwise
func.func @elementwise(%q: tensor<128x64xf32>, %bias: tensor<128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %s = attn.matmul %q, %q transpose_rhs : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x128xf32>
  %0 = attn.causal_mask %s fill 0.0 : tensor<128x128xf32>
  %1 = attn.scale %0 by 0.5 : tensor<128x128xf32>
  %2 = attn.normalize sum %1 dim 1 eps 1.0e-9 : tensor<128x128xf32>
  %3 = attn.feature_map relu %2 : tensor<128x128xf32>
  %4 = attn.feature_map identity %3 : tensor<128x128xf32>
  %5 = attn.prefix_sum %4 dim 0 : tensor<128x128xf32>
  %6 = attn.add %5, %bias : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf32>
  %7 = attn.add %6, %bias : tensor<128x128xf32>, tensor<128xf32> -> tensor<128x128xf32>
  return %6, %7 : tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// Only {attn.weight} arguments are excluded: W (64x32 = 2048) is a weight,
// X (256x64 = 16384) counts; the matmul adds 256*32 = 8192 floats and
// 256*32*64 = 524288 MACs. f64 counts 8 bytes per float (but 0.00 GB here).
// CHECK-LABEL: remark: cost: macs = 524288, flops = 1048576, floats = 8192
// CHECK-NEXT: remark: total of @weights: macs = 524288, flops = 1048576 (2 x macs + 0 elementwise), floats = 24576 (0.00 GB), weights = 2048 floats (not in floats)
func.func @weights(%x: tensor<256x64xf64>, %w: tensor<64x32xf64> {attn.weight}) -> tensor<256x32xf64> {
  %0 = attn.matmul %x, %w : tensor<256x64xf64>, tensor<64x32xf64> -> tensor<256x32xf64>
  return %0 : tensor<256x32xf64>
}

// -----

// Dynamic sizes: the op is not costed but says so, and the total counts
// it (and the dynamic argument) as not counted. The static scale is
// 16*64 = 1024 flops in place; floats = the static argument, 1024.
// CHECK-LABEL: remark: cost: unknown, the op has dynamic sizes
// CHECK-NEXT: remark: cost: macs = 0, flops = 1024, floats = 0
// CHECK-NEXT: remark: total of @dynamic: macs = 0, flops = 1024 (2 x macs + 1024 elementwise), floats = 1024 (0.00 GB), weights = 0 floats (not in floats); 2 ops or arguments with dynamic sizes not counted
func.func @dynamic(%x: tensor<?x64xf32>, %y: tensor<16x64xf32>) -> (tensor<?x64xf32>, tensor<16x64xf32>) {
  %0 = attn.scale %x by 2.0 : tensor<?x64xf32>
  %1 = attn.scale %y by 2.0 : tensor<16x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<16x64xf32>
}

// -----

// Bytes follow the element type: 32768 x 4096 = 134217728 f64 floats
// = 1073741824 bytes = 1.07 GB (the in-place scale adds none).
// CHECK-LABEL: remark: cost: macs = 0, flops = 134217728, floats = 0
// CHECK-NEXT: remark: total of @bytes_f64: macs = 0, flops = 134217728 (2 x macs + 134217728 elementwise), floats = 134217728 (1.07 GB)
func.func @bytes_f64(%x: tensor<32768x4096xf64>) -> tensor<32768x4096xf64> {
  %0 = attn.scale %x by 2.0 : tensor<32768x4096xf64>
  return %0 : tensor<32768x4096xf64>
}

// -----

// Module totals sum every function; a declaration costs nothing.
// f: matmul 16x16x16 = 4096 MACs, floats 256 + args 512 = 768.
// g: scale of 256 elements in place = 256 flops, floats 256 (argument).
// CHECK-LABEL: remark: total of @f: macs = 4096
// CHECK: remark: total of @g: macs = 0, flops = 256
// CHECK-NEXT: remark: module total: macs = 4096, flops = 8448 (2 x macs + 256 elementwise), floats = 1024 (0.00 GB), weights = 0 floats (not in floats)
func.func private @decl(tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
func.func @f(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = attn.matmul %a, %b : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
func.func @g(%a: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = attn.scale %a by 2.0 : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

// The primitives of gradients (--attn-grad). feature_map_grad elu+1: the
// derivative (1 flop, as the map) and the product with dy, 2 x 32 = 64;
// broadcast: a copy into a new 8x4 tensor, no flops; unbroadcast: one add per
// input element (32) into a 1x4 tensor; scatter_pixels: one add per
// cotangent element (30) into a new 1x6x1x5 tensor. Floats: arguments 110
// plus the results 32 + 32 + 4 + 30.
// CHECK-LABEL: remark: cost: macs = 0, flops = 64, floats = 32
// CHECK-NEXT: remark: cost: macs = 0, flops = 0, floats = 32
// CHECK-NEXT: remark: cost: macs = 0, flops = 32, floats = 4
// CHECK-NEXT: remark: cost: macs = 0, flops = 30, floats = 30
// CHECK-NEXT: remark: total of @gradient_primitives: macs = 0, flops = 126 (2 x macs + 126 elementwise), floats = 208 (0.00 GB)
func.func @gradient_primitives(%x: tensor<8x4xf32>, %dy: tensor<8x4xf32>, %r: tensor<1x4xf32>, %g: tensor<1x2x1x1x3x5xf32>, %p: tensor<1x2x1x1x3x2xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x6x1x5xf32>) {
  %0 = attn.feature_map_grad elu_plus_one %x, %dy : tensor<8x4xf32>
  %1 = attn.broadcast %r like %x : tensor<1x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %2 = attn.unbroadcast %dy like %r : tensor<8x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  %3 = attn.scatter_pixels %g, %p levels [2x3] : tensor<1x2x1x1x3x5xf32>, tensor<1x2x1x1x3x2xf32> -> tensor<1x6x1x5xf32>
  return %0, %1, %2, %3 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x6x1x5xf32>
}

// -----

// The fused softmax backward as codegen runs it: per score (2 x 16 x 24 =
// 768), a row pass (S, dP, dQ: 2 dk + dv = 20 MACs) and a key pass (S, dP,
// dK, dV: 2 dk + 2 dv = 24): 768 x 44 = 33792 MACs; per score and pass the
// softmax's 4 flops and 3 more (scale, dP - D, times P): 768 x 14 = 10752.
// Floats: its three gradients, 256 + 384 + 192 = 832 (no score matrix).
// CHECK-LABEL: remark: cost: macs = 33792, flops = 78336, floats = 832
// CHECK-NEXT: remark: total of @attention_grad: macs = 33792, flops = 78336 (2 x macs + 10752 elementwise), floats = 1792 (0.00 GB)
func.func @attention_grad(%q: tensor<2x16x8xf32>, %k: tensor<2x24x8xf32>, %v: tensor<2x24x4xf32>, %g: tensor<2x16x4xf32>) -> (tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>) {
  %0:3 = attn.attention_grad %q, %k, %v, %g scale 3.500000e-01 : tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>, tensor<2x16x4xf32> -> tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>
  return %0#0, %0#1, %0#2 : tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>
}

// -----

// Arguments of a type no attn op takes still count, complex<f32> at 8 bytes
// an element (found by the spec fuzzer, test/fuzz: the pass crashed asking
// a complex type for its bit width): 65536 x 8192 = 536870912 elements,
// 4.29 GB.
// CHECK-LABEL: remark: total of @complex_argument: macs = 0, flops = 0 (2 x macs + 0 elementwise), floats = 536870912 (4.29 GB)
func.func @complex_argument(%c: tensor<65536x8192xcomplex<f32>>) {
  return
}
