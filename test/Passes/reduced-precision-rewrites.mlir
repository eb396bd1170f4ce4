// RUN: attn-opt %s --attn-reassociate=explain=1 --attn-lower-double-norm 2>&1 | FileCheck %s --check-prefix=BLOCKED
// RUN: attn-opt %s --attn-widen-to-f32 --attn-reassociate --attn-lower-double-norm | FileCheck %s --check-prefix=WIDENED
//
// Rewrites wait for --attn-widen-to-f32 (docs/precision.md): on a bf16 op
// they would build bf16 intermediates, rounding what the fused op keeps in
// f32. After the widening the same rewrites apply to the f32 op, between
// the arith.extf of its operands and the arith.truncf of its result.

// BLOCKED: remark: attn-reassociate: not rewritten: bf16/f16 operands or results: --attn-widen-to-f32 first makes it an f32 op
// BLOCKED-LABEL: func.func @count_bf16
// BLOCKED: attn.dot_product {{.*}} norm [count over keys] : tensor<1024x32xbf16>
// WIDENED-LABEL: func.func @count_bf16
// WIDENED: attn.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<1024x32xf32>, tensor<1024x32xf32> -> tensor<32x32xf32>
// WIDENED: arith.truncf %{{.*}} : tensor<1024x32xf32> to tensor<1024x32xbf16>
func.func @count_bf16(%q: tensor<1024x32xbf16>, %k: tensor<1024x32xbf16>, %v: tensor<1024x32xbf16>) -> tensor<1024x32xbf16> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] : tensor<1024x32xbf16>, tensor<1024x32xbf16>, tensor<1024x32xbf16> -> tensor<1024x32xbf16>
  return %o : tensor<1024x32xbf16>
}

// BLOCKED-LABEL: func.func @double_norm_f16
// BLOCKED: attn.dot_product {{.*}} norm [softmax over queries, sum over keys eps 1.000000e-09] : tensor<64x16xf16>
// WIDENED-LABEL: func.func @double_norm_f16
// WIDENED: attn.normalize softmax %{{.*}} dim 0 : tensor<64x8xf32>
// WIDENED: arith.truncf %{{.*}} : tensor<64x16xf32> to tensor<64x16xf16>
func.func @double_norm_f16(%x: tensor<64x16xf16>, %mk: tensor<8x16xf16>, %mv: tensor<8x16xf16>) -> tensor<64x16xf16> {
  %o = attn.dot_product %x, %mk, %mv norm [softmax over queries, sum over keys eps 1.0e-9] : tensor<64x16xf16>, tensor<8x16xf16>, tensor<8x16xf16> -> tensor<64x16xf16>
  return %o : tensor<64x16xf16>
}
