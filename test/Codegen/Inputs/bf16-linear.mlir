// Linear attention and plain products in bf16 pairs (bf16-linear.test):
// the opt-in {attn.allow_bf16_products} on attn.dot_product goes to the
// reassociated products; attn.matmul takes it directly, and pairs its
// stored bf16 operands without it.

// phi(K)^T V over 2048 positions in chunks (2 of 1024), then phi(Q) C.
func.func @linear(%q: tensor<2048x32xbf16>, %k: tensor<2048x32xbf16>, %v: tensor<2048x64xbf16>) -> tensor<2048x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one {attn.allow_bf16_products}
      : tensor<2048x32xbf16>, tensor<2048x32xbf16>, tensor<2048x64xbf16> -> tensor<2048x64xbf16>
  return %o : tensor<2048x64xbf16>
}

// Heads, K and V shared across the three heads (broadcast), n != m, and an
// f32 result.
func.func @heads(%q: tensor<2x3x1000x16xbf16>, %k: tensor<2x1x3072x16xbf16>, %v: tensor<2x1x3072x48xbf16>) -> tensor<2x3x1000x48xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one {attn.allow_bf16_products}
      : tensor<2x3x1000x16xbf16>, tensor<2x1x3072x16xbf16>, tensor<2x1x3072x48xbf16> -> tensor<2x3x1000x48xf32>
  return %o : tensor<2x3x1000x48xf32>
}

// Causal, n = 1000: chunks of 64 and a ragged last one; the states
// phi(K)^T V per chunk and phi(Q) times their prefix sums pair up.
func.func @causal(%q: tensor<1000x32xbf16>, %k: tensor<1000x32xbf16>, %v: tensor<1000x64xbf16>) -> tensor<1000x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal {attn.allow_bf16_products}
      : tensor<1000x32xbf16>, tensor<1000x32xbf16>, tensor<1000x64xbf16> -> tensor<1000x64xbf16>
  return %o : tensor<1000x64xbf16>
}

// Dynamic query rows (the rewrite is chosen at run time).
func.func @dyn_rows(%q: tensor<?x32xbf16>, %k: tensor<2048x32xbf16>, %v: tensor<2048x64xbf16>) -> tensor<?x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one {attn.allow_bf16_products}
      : tensor<?x32xbf16>, tensor<2048x32xbf16>, tensor<2048x64xbf16> -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}

// dk = 15: phi(K)^T V pairs positions, phi(Q) C cannot pair features.
func.func @odd_features(%q: tensor<2048x15xbf16>, %k: tensor<2048x15xbf16>, %v: tensor<2048x64xbf16>) -> tensor<2048x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one {attn.allow_bf16_products}
      : tensor<2048x15xbf16>, tensor<2048x15xbf16>, tensor<2048x64xbf16> -> tensor<2048x64xbf16>
  return %o : tensor<2048x64xbf16>
}

// f32 operands, the lhs computed (elu + 1), both rounded: register tiles
// over rows.
func.func @product(%a: tensor<300x64xf32>, %b: tensor<64x96xf32>) -> tensor<300x96xf32> {
  %phi = attn.feature_map elu_plus_one %a : tensor<300x64xf32>
  %c = attn.matmul %phi, %b {attn.allow_bf16_products} : tensor<300x64xf32>, tensor<64x96xf32> -> tensor<300x96xf32>
  return %c : tensor<300x96xf32>
}

// Both operands transposed, few rows: positions in chunks.
func.func @product_transposed(%a: tensor<4096x24xf32>, %b: tensor<40x4096xf32>) -> tensor<24x40xf32> {
  %c = attn.matmul %a, %b transpose_lhs transpose_rhs {attn.allow_bf16_products} : tensor<4096x24xf32>, tensor<40x4096xf32> -> tensor<24x40xf32>
  return %c : tensor<24x40xf32>
}

// Stored bf16 operands pair without the opt-in (exact products); batched,
// dynamic rows.
func.func @product_stored(%a: tensor<2x?x64xbf16>, %b: tensor<2x64x80xbf16>) -> tensor<2x?x80xbf16> {
  %c = attn.matmul %a, %b : tensor<2x?x64xbf16>, tensor<2x64x80xbf16> -> tensor<2x?x80xbf16>
  return %c : tensor<2x?x80xbf16>
}

// An odd contraction dim: no pairs.
func.func @product_odd(%a: tensor<64x33xf32>, %b: tensor<33x64xf32>) -> tensor<64x64xf32> {
  %c = attn.matmul %a, %b {attn.allow_bf16_products} : tensor<64x33xf32>, tensor<33x64xf32> -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
