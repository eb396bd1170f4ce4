// Softmax attention whose forward saves its row log-sum-exp for the fused
// backward (--attn-grad=save-statistics=1, docs/training.md), at the forms
// of the forward kernel (row blocks, key splits, split-KV for few rows) and
// the edges of the backward's schedule.

// Causal with a scale, n = 150 queries against m = 100 keys (n > m: the
// rows past the last key see every key), dk = 32, dv = 48: row blocks.
func.func @causal_rect(%q: tensor<3x150x32xf32>, %k: tensor<3x100x32xf32>, %v: tensor<3x100x48xf32>) -> tensor<3x150x48xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.700000e-01 causal
      : tensor<3x150x32xf32>, tensor<3x100x32xf32>, tensor<3x100x48xf32> -> tensor<3x150x48xf32>
  return %o : tensor<3x150x48xf32>
}

// Dynamic n = m (one row, ragged blocks, several chunks), relu feature map.
func.func @dynamic(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01 feature_map relu causal
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// Key splits (attention.keySplit = 1024): m = 1500 (a split and a ragged
// one of 476) with batch and head dims, K and V shared by 2 query heads.
func.func @split_1500(%q: tensor<2x2x64x32xf32>, %k: tensor<2x1x1500x32xf32>, %v: tensor<2x1x1500x32xf32>) -> tensor<2x2x64x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.767767e-01
      : tensor<2x2x64x32xf32>, tensor<2x1x1500x32xf32>, tensor<2x1x1500x32xf32> -> tensor<2x2x64x32xf32>
  return %o : tensor<2x2x64x32xf32>
}

// m = 2048, two whole splits; and causal (attention.causalKeySplit = 256:
// eight splits, those past a query block skipped).
func.func @split_2048(%q: tensor<2x2x48x16xf32>, %k: tensor<2x2x2048x16xf32>, %v: tensor<2x2x2048x16xf32>) -> tensor<2x2x48x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01
      : tensor<2x2x48x16xf32>, tensor<2x2x2048x16xf32>, tensor<2x2x2048x16xf32> -> tensor<2x2x48x16xf32>
  return %o : tensor<2x2x48x16xf32>
}
func.func @split_causal(%q: tensor<2x600x16xf32>, %k: tensor<2x600x16xf32>, %v: tensor<2x600x16xf32>) -> tensor<2x600x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01 causal
      : tensor<2x600x16xf32>, tensor<2x600x16xf32>, tensor<2x600x16xf32> -> tensor<2x600x16xf32>
  return %o : tensor<2x600x16xf32>
}

// Few rows (n = 3 <= attention.fewRows): split-KV over parts of 512 keys (two and a ragged one of 276); forward only:
// the gradient of so few rows against so many keys misses 1e-4 with or
// without saved statistics (tiny gradients; see the report of issue 21).
func.func @few_rows(%q: tensor<4x3x32xf32>, %k: tensor<4x1300x32xf32>, %v: tensor<4x1300x32xf32>) -> tensor<4x3x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.767767e-01
      : tensor<4x3x32xf32>, tensor<4x1300x32xf32>, tensor<4x1300x32xf32> -> tensor<4x3x32xf32>
  return %o : tensor<4x3x32xf32>
}

// f64 and bf16 storage: the log-sum-exp is f64 and f32.
func.func @f64(%q: tensor<9x8xf64>, %k: tensor<20x8xf64>, %v: tensor<20x5xf64>) -> tensor<9x5xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 3.000000e-01 causal
      : tensor<9x8xf64>, tensor<20x8xf64>, tensor<20x5xf64> -> tensor<9x5xf64>
  return %o : tensor<9x5xf64>
}
func.func @bf16(%q: tensor<2x40x16xbf16>, %k: tensor<2x40x16xbf16>, %v: tensor<2x40x16xbf16>) -> tensor<2x40x16xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01
      : tensor<2x40x16xbf16>, tensor<2x40x16xbf16>, tensor<2x40x16xbf16> -> tensor<2x40x16xbf16>
  return %o : tensor<2x40x16xbf16>
}
