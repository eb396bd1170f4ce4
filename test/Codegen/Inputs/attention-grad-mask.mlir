// Masked softmax attention whose mask needs no gradient: --attn-grad emits
// one fused attn.attention_grad with the mask (no n x m matrix), at sizes
// that reach the edges of its schedule (ScheduleAttentionGrad.cpp).

// A padding mask (an attn.no_grad argument) broadcast over the heads;
// attention-grad-mask.test gives it -inf entries and a row of -inf only.
func.func @padding(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x3xf32>, %mask: tensor<8x8xf32> {attn.no_grad}) -> tensor<2x8x3xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 5.000000e-01
      : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<8x8xf32> -> tensor<2x8x3xf32>
  return %o : tensor<2x8x3xf32>
}

// A per-head bias, causal, n = 300 queries (chunks of 256 + 44) against
// m = 200 keys (key blocks 64 x 3 + 8), dk = 20, dv = 12.
func.func @causal_bias(%q: tensor<2x300x20xf32>, %k: tensor<2x200x20xf32>, %v: tensor<2x200x12xf32>, %bias: tensor<2x300x200xf32> {attn.no_grad}) -> tensor<2x300x12xf32> {
  %o = attn.dot_product %q, %k, %v mask %bias norm [softmax over keys] scale 2.000000e-01 causal
      : tensor<2x300x20xf32>, tensor<2x200x20xf32>, tensor<2x200x12xf32>, tensor<2x300x200xf32> -> tensor<2x300x12xf32>
  return %o : tensor<2x300x12xf32>
}

// A mask computed in the body from a no_grad argument (its causal fill
// makes -inf entries) on a non-causal op, K and V shared by 3 query heads.
func.func @built(%q: tensor<3x70x16xf32>, %k: tensor<1x70x16xf32>, %v: tensor<1x70x8xf32>, %bias: tensor<70x70xf32> {attn.no_grad}) -> tensor<3x70x8xf32> {
  %mask = attn.causal_mask %bias : tensor<70x70xf32>
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 2.500000e-01
      : tensor<3x70x16xf32>, tensor<1x70x16xf32>, tensor<1x70x8xf32>, tensor<70x70xf32> -> tensor<3x70x8xf32>
  return %o : tensor<3x70x8xf32>
}

// f64 (8 lanes) and dynamic n = m.
func.func @dynamic_f64(%q: tensor<2x?x8xf64>, %k: tensor<2x?x8xf64>, %v: tensor<2x?x5xf64>, %mask: tensor<?x?xf64> {attn.no_grad}) -> tensor<2x?x5xf64> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 3.000000e-01
      : tensor<2x?x8xf64>, tensor<2x?x8xf64>, tensor<2x?x5xf64>, tensor<?x?xf64> -> tensor<2x?x5xf64>
  return %o : tensor<2x?x5xf64>
}
