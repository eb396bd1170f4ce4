// Softmax attention on bf16 Q, K and V with the opt-in to bf16 weights,
// {attn.allow_bf16_products} (docs/precision.md, "Opt-in: bf16 products"):
// on AVX512-BF16 targets the weights are rounded to bf16 and weights x V
// reduces keys in pairs (vdpbf16ps) as well as Q K^T. bf16-weights.test
// runs each form of the row schedule and the shapes where the opt-in is
// not used.

// Whole key tiles, one block of queries.
func.func @tiles(%q: tensor<2x64x64xbf16>, %k: tensor<2x64x64xbf16>, %v: tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 {attn.allow_bf16_products} : tensor<2x64x64xbf16>, tensor<2x64x64xbf16>, tensor<2x64x64xbf16> -> tensor<2x64x64xbf16>
  return %o : tensor<2x64x64xbf16>
}

// Causal, ragged query blocks; key pairs straddle the diagonal.
func.func @causal(%q: tensor<2x200x64xbf16>, %k: tensor<2x200x64xbf16>, %v: tensor<2x200x64xbf16>) -> tensor<2x200x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 causal {attn.allow_bf16_products} : tensor<2x200x64xbf16>, tensor<2x200x64xbf16>, tensor<2x200x64xbf16> -> tensor<2x200x64xbf16>
  return %o : tensor<2x200x64xbf16>
}

// Key splits with a ragged last split (2500 keys: 2 x 1024 + 452), K and V
// shared by 4 query heads.
func.func @key_split(%q: tensor<2x4x96x64xbf16>, %k: tensor<2x1x2500x64xbf16>, %v: tensor<2x1x2500x64xbf16>) -> tensor<2x4x96x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 {attn.allow_bf16_products} : tensor<2x4x96x64xbf16>, tensor<2x1x2500x64xbf16>, tensor<2x1x2500x64xbf16> -> tensor<2x4x96x64xbf16>
  return %o : tensor<2x4x96x64xbf16>
}

// Causal key splits (n = m = 600 > attention.causalKeySplit).
func.func @causal_split(%q: tensor<1x600x32xbf16>, %k: tensor<1x600x32xbf16>, %v: tensor<1x600x48xbf16>) -> tensor<1x600x48xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.17 causal {attn.allow_bf16_products} : tensor<1x600x32xbf16>, tensor<1x600x32xbf16>, tensor<1x600x48xbf16> -> tensor<1x600x48xbf16>
  return %o : tensor<1x600x48xbf16>
}

// A window of 50 keys (padded to whole vectors), dv = 20 (not whole
// vectors), an f32 result.
func.func @window(%q: tensor<3x37x32xbf16>, %k: tensor<3x50x32xbf16>, %v: tensor<3x50x20xbf16>) -> tensor<3x37x20xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.17677669529 {attn.allow_bf16_products} : tensor<3x37x32xbf16>, tensor<3x50x32xbf16>, tensor<3x50x20xbf16> -> tensor<3x37x20xf32>
  return %o : tensor<3x37x20xf32>
}

// Not used: an odd number of keys.
func.func @odd_keys(%q: tensor<2x64x64xbf16>, %k: tensor<2x49x64xbf16>, %v: tensor<2x49x64xbf16>) -> tensor<2x64x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 {attn.allow_bf16_products} : tensor<2x64x64xbf16>, tensor<2x49x64xbf16>, tensor<2x49x64xbf16> -> tensor<2x64x64xbf16>
  return %o : tensor<2x64x64xbf16>
}

// Not used: the op returns its row log-sum-exp.
func.func @with_lse(%q: tensor<2x64x64xbf16>, %k: tensor<2x64x64xbf16>, %v: tensor<2x64x64xbf16>) -> (tensor<2x64x64xbf16>, tensor<2x64xf32>) {
  %o, %l = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 with_lse {attn.allow_bf16_products} : tensor<2x64x64xbf16>, tensor<2x64x64xbf16>, tensor<2x64x64xbf16> -> tensor<2x64x64xbf16>, tensor<2x64xf32>
  return %o, %l : tensor<2x64x64xbf16>, tensor<2x64xf32>
}

// Not used: decode (one query row, split-KV reads K in place).
func.func @decode(%q: tensor<8x1x64xbf16>, %k: tensor<8x5000x64xbf16>, %v: tensor<8x5000x64xbf16>) -> tensor<8x1x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 {attn.allow_bf16_products} : tensor<8x1x64xbf16>, tensor<8x5000x64xbf16>, tensor<8x5000x64xbf16> -> tensor<8x1x64xbf16>
  return %o : tensor<8x1x64xbf16>
}

// Dynamic query rows, 100 static keys: the untiled output rows, each pair
// of keys still one product.
func.func @dyn_rows(%q: tensor<2x?x64xbf16>, %k: tensor<2x100x64xbf16>, %v: tensor<2x100x64xbf16>) -> tensor<2x?x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 {attn.allow_bf16_products} : tensor<2x?x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16> -> tensor<2x?x64xbf16>
  return %o : tensor<2x?x64xbf16>
}
