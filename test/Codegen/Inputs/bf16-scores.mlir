// Softmax attention on bf16 Q and K, whose scores use vdpbf16ps on
// AVX512-BF16 targets (bf16-dot-products.test): the shapes of each form of
// the row schedule, and the other forms (dynamic sizes, a mask, decode,
// f16) in reduced precision.

// Whole key tiles, one block of queries.
func.func @tiles(%q: tensor<2x64x64xbf16>, %k: tensor<2x64x64xbf16>, %v: tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<2x64x64xbf16>, tensor<2x64x64xbf16>, tensor<2x64x64xbf16> -> tensor<2x64x64xbf16>
  return %o : tensor<2x64x64xbf16>
}

// A window: 49 keys (padded to whole vectors), 37 queries, dk = 32, f32
// result.
func.func @window(%q: tensor<3x37x32xbf16>, %k: tensor<3x49x32xbf16>, %v: tensor<3x49x32xbf16>) -> tensor<3x37x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.17677669529 : tensor<3x37x32xbf16>, tensor<3x49x32xbf16>, tensor<3x49x32xbf16> -> tensor<3x37x32xf32>
  return %o : tensor<3x37x32xf32>
}

// Causal, ragged query blocks.
func.func @causal(%q: tensor<2x200x64xbf16>, %k: tensor<2x200x64xbf16>, %v: tensor<2x200x64xbf16>) -> tensor<2x200x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 causal : tensor<2x200x64xbf16>, tensor<2x200x64xbf16>, tensor<2x200x64xbf16> -> tensor<2x200x64xbf16>
  return %o : tensor<2x200x64xbf16>
}

// Many keys: the key-split form; K and V shared by 4 query heads.
func.func @key_split(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x1x4096x64xbf16>, %v: tensor<2x1x4096x64xbf16>) -> tensor<2x4x128x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<2x4x128x64xbf16>, tensor<2x1x4096x64xbf16>, tensor<2x1x4096x64xbf16> -> tensor<2x4x128x64xbf16>
  return %o : tensor<2x4x128x64xbf16>
}

// An odd head dim: no pairs, the plain f32 product.
func.func @odd_features(%q: tensor<2x64x33xbf16>, %k: tensor<2x64x33xbf16>, %v: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] : tensor<2x64x33xbf16>, tensor<2x64x33xbf16>, tensor<2x64x16xbf16> -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}

// Dynamic positions (one size for Q, K and V at run time).
func.func @dyn(%q: tensor<2x?x64xbf16>, %k: tensor<2x?x64xbf16>, %v: tensor<2x?x64xbf16>) -> tensor<2x?x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  return %o : tensor<2x?x64xbf16>
}
// A bf16 additive mask over 100 keys (not whole vectors).
func.func @masked(%q: tensor<2x100x64xbf16>, %k: tensor<2x100x64xbf16>, %v: tensor<2x100x64xbf16>, %m: tensor<100x100xbf16>) -> tensor<2x100x64xbf16> {
  %o = attn.dot_product %q, %k, %v mask %m norm [softmax over keys] scale 0.125 : tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<2x100x64xbf16>, tensor<100x100xbf16> -> tensor<2x100x64xbf16>
  return %o : tensor<2x100x64xbf16>
}
// Decode: one query row, split-KV over 5000 keys (no pairs: K is read in
// place).
func.func @decode(%q: tensor<8x1x64xbf16>, %k: tensor<8x5000x64xbf16>, %v: tensor<8x5000x64xbf16>) -> tensor<8x1x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<8x1x64xbf16>, tensor<8x5000x64xbf16>, tensor<8x5000x64xbf16> -> tensor<8x1x64xbf16>
  return %o : tensor<8x1x64xbf16>
}
// f16, causal, head dim 128, a ragged last query block.
func.func @causal_big(%q: tensor<1x1500x128xf16>, %k: tensor<1x1500x128xf16>, %v: tensor<1x1500x128xf16>) -> tensor<1x1500x128xf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.088 causal : tensor<1x1500x128xf16>, tensor<1x1500x128xf16>, tensor<1x1500x128xf16> -> tensor<1x1500x128xf16>
  return %o : tensor<1x1500x128xf16>
}
