// Efficient attention (softmax variant) on bf16 Q, K and V with the opt-in
// to bf16 products, {attn.allow_bf16_products} (docs/precision.md, "Opt-in:
// bf16 products"): on AVX512-BF16 targets both softmaxes' weights and the
// normalized context are rounded to bf16, and K^T V and Q context reduce in
// pairs (vdpbf16ps). bf16-efficient.test runs each form and the shapes
// where the opt-in is not used.

// Two chunks of positions (chunkedProduct.chunk = 1024), one head.
func.func @chunks(%q: tensor<2048x32xbf16>, %k: tensor<2048x32xbf16>, %v: tensor<2048x64xbf16>) -> tensor<2048x64xbf16> {
  %o = attn.efficient %q, %k, %v variant softmax {attn.allow_bf16_products} : tensor<2048x32xbf16>, tensor<2048x32xbf16>, tensor<2048x64xbf16> -> tensor<2048x64xbf16>
  return %o : tensor<2048x64xbf16>
}

// Batch and heads, 3 chunks, dk = 16 and dv = 48 (three vectors of
// columns), rows not a multiple of the register tile, an f32 result.
func.func @heads(%q: tensor<2x3x1000x16xbf16>, %k: tensor<2x3x3072x16xbf16>, %v: tensor<2x3x3072x48xbf16>) -> tensor<2x3x1000x48xf32> {
  %o = attn.efficient %q, %k, %v variant softmax {attn.allow_bf16_products} : tensor<2x3x1000x16xbf16>, tensor<2x3x3072x16xbf16>, tensor<2x3x3072x48xbf16> -> tensor<2x3x1000x48xf32>
  return %o : tensor<2x3x1000x48xf32>
}

// Wide columns (dv = 128: two column tiles of the chunk tasks), dk = 64.
func.func @wide(%q: tensor<512x64xbf16>, %k: tensor<2048x64xbf16>, %v: tensor<2048x128xbf16>) -> tensor<512x128xbf16> {
  %o = attn.efficient %q, %k, %v variant softmax {attn.allow_bf16_products} : tensor<512x64xbf16>, tensor<2048x64xbf16>, tensor<2048x128xbf16> -> tensor<512x128xbf16>
  return %o : tensor<512x128xbf16>
}

// Dynamic query rows: the final product one row at a time.
func.func @dyn_rows(%q: tensor<?x32xbf16>, %k: tensor<2048x32xbf16>, %v: tensor<2048x64xbf16>) -> tensor<?x64xbf16> {
  %o = attn.efficient %q, %k, %v variant softmax {attn.allow_bf16_products} : tensor<?x32xbf16>, tensor<2048x32xbf16>, tensor<2048x64xbf16> -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}

// Not used: an odd dk.
func.func @odd_features(%q: tensor<256x31xbf16>, %k: tensor<2048x31xbf16>, %v: tensor<2048x64xbf16>) -> tensor<256x64xbf16> {
  %o = attn.efficient %q, %k, %v variant softmax {attn.allow_bf16_products} : tensor<256x31xbf16>, tensor<2048x31xbf16>, tensor<2048x64xbf16> -> tensor<256x64xbf16>
  return %o : tensor<256x64xbf16>
}

// Not used: one chunk of positions (m < 2 x chunkedProduct.chunk).
func.func @short(%q: tensor<256x32xbf16>, %k: tensor<1000x32xbf16>, %v: tensor<1000x64xbf16>) -> tensor<256x64xbf16> {
  %o = attn.efficient %q, %k, %v variant softmax {attn.allow_bf16_products} : tensor<256x32xbf16>, tensor<1000x32xbf16>, tensor<1000x64xbf16> -> tensor<256x64xbf16>
  return %o : tensor<256x64xbf16>
}

// Not used: the scaling variant (its products read stored values only).
func.func @scaling(%q: tensor<256x32xbf16>, %k: tensor<2048x32xbf16>, %v: tensor<2048x64xbf16>) -> tensor<256x64xbf16> {
  %o = attn.efficient %q, %k, %v variant scaling {attn.allow_bf16_products} : tensor<256x32xbf16>, tensor<2048x32xbf16>, tensor<2048x64xbf16> -> tensor<256x64xbf16>
  return %o : tensor<256x64xbf16>
}
