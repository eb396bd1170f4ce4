// Few query rows (decode): split-KV, AlgorithmOptions::fewRows
// (test/Codegen/few-rows.test).

// One query per head against 1000 keys: parts of 64 keys (the test's
// keyPart) leave a ragged last part of 40.
func.func @decode_ragged(%q: tensor<3x1x32xf32>, %k: tensor<3x1000x32xf32>, %v: tensor<3x1000x16xf32>) -> tensor<3x1x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.17678 : tensor<3x1x32xf32>, tensor<3x1000x32xf32>, tensor<3x1000x16xf32> -> tensor<3x1x16xf32>
  return %o : tensor<3x1x16xf32>
}

// A KV cache that grows every step: the key length is dynamic.
func.func @decode_dynamic(%q: tensor<2x1x64xf32>, %k: tensor<2x?x64xf32>, %v: tensor<2x?x64xf32>) -> tensor<2x1x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<2x1x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32> -> tensor<2x1x64xf32>
  return %o : tensor<2x1x64xf32>
}

// Grouped-query attention: 2 KV heads, 4 query heads each, 3 queries per
// head; K and V broadcast over the group dim.
func.func @gqa(%q: tensor<2x4x3x32xf32>, %k: tensor<2x1x300x32xf32>, %v: tensor<2x1x300x24xf32>) -> tensor<2x4x3x24xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.17678 : tensor<2x4x3x32xf32>, tensor<2x1x300x32xf32>, tensor<2x1x300x24xf32> -> tensor<2x4x3x24xf32>
  return %o : tensor<2x4x3x24xf32>
}

// GQA with the batch dim before the KV heads broadcast too (K and V have
// no batch dim): batch 2, 2 KV heads of 2 query heads.
func.func @gqa_batch(%q: tensor<2x2x2x1x16xf32>, %k: tensor<2x1x200x16xf32>, %v: tensor<2x1x200x16xf32>) -> tensor<2x2x2x1x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] : tensor<2x2x2x1x16xf32>, tensor<2x1x200x16xf32>, tensor<2x1x200x16xf32> -> tensor<2x2x2x1x16xf32>
  return %o : tensor<2x2x2x1x16xf32>
}

// Causal with n != m: 5 queries see keys 0..i of 300; and more queries
// than keys (rows past the last key see them all).
func.func @causal_few(%q: tensor<2x5x16xf32>, %k: tensor<2x300x16xf32>, %v: tensor<2x300x8xf32>) -> tensor<2x5x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] causal : tensor<2x5x16xf32>, tensor<2x300x16xf32>, tensor<2x300x8xf32> -> tensor<2x5x8xf32>
  return %o : tensor<2x5x8xf32>
}
func.func @causal_n_gt_m(%q: tensor<7x16xf32>, %k: tensor<3x16xf32>, %v: tensor<3x8xf32>) -> tensor<7x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] causal : tensor<7x16xf32>, tensor<3x16xf32>, tensor<3x8xf32> -> tensor<7x8xf32>
  return %o : tensor<7x8xf32>
}

// An additive mask broadcast over the heads, and head dims that are not
// whole vectors (dk 40, dv 48; dk != dv).
func.func @masked_odd_dims(%q: tensor<3x2x40xf32>, %k: tensor<3x500x40xf32>, %v: tensor<3x500x48xf32>, %mask: tensor<1x2x500xf32>) -> tensor<3x2x48xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 0.158 : tensor<3x2x40xf32>, tensor<3x500x40xf32>, tensor<3x500x48xf32>, tensor<1x2x500xf32> -> tensor<3x2x48xf32>
  return %o : tensor<3x2x48xf32>
}

// f64, 16 rows (the default fewRows), dk 128.
func.func @f64_rows16(%q: tensor<16x128xf64>, %k: tensor<700x128xf64>, %v: tensor<700x32xf64>) -> tensor<16x32xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.088 : tensor<16x128xf64>, tensor<700x128xf64>, tensor<700x32xf64> -> tensor<16x32xf64>
  return %o : tensor<16x32xf64>
}
