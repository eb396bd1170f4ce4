// The fused softmax backward (attn.attention_grad, from --attn-grad) at
// sizes that reach the edges of its schedule (ScheduleAttentionGrad.cpp):
// several query blocks with a ragged last one, key blocks of 64 with a
// ragged last one, query chunks of 256 with a ragged last one, register
// tiles over sizes that are not whole vectors, K and V broadcast over query
// heads, causal with n != m, and dynamic sizes.

// n = 300 (chunks 256 + 44), m = 200 (key blocks 64 x 3 + 8), dk = 20,
// dv = 12: tiles not whole vectors.
func.func @ragged(%q: tensor<2x300x20xf32>, %k: tensor<2x200x20xf32>, %v: tensor<2x200x12xf32>) -> tensor<2x300x12xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.000000e-01
      : tensor<2x300x20xf32>, tensor<2x200x20xf32>, tensor<2x200x12xf32> -> tensor<2x300x12xf32>
  return %o : tensor<2x300x12xf32>
}

// Head dim 64, n = m = 640: whole tiles; the row pass's blocks hold 64 rows.
func.func @heads(%q: tensor<2x640x64xf32>, %k: tensor<2x640x64xf32>, %v: tensor<2x640x64xf32>) -> tensor<2x640x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.250000e-01
      : tensor<2x640x64xf32>, tensor<2x640x64xf32>, tensor<2x640x64xf32> -> tensor<2x640x64xf32>
  return %o : tensor<2x640x64xf32>
}

// Causal, n = 150 queries against m = 100 keys, dk = 32, dv = 48.
func.func @causal_rect(%q: tensor<3x150x32xf32>, %k: tensor<3x100x32xf32>, %v: tensor<3x100x48xf32>) -> tensor<3x150x48xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.700000e-01 causal
      : tensor<3x150x32xf32>, tensor<3x100x32xf32>, tensor<3x100x48xf32> -> tensor<3x150x48xf32>
  return %o : tensor<3x150x48xf32>
}

// Causal in f64 (8 lanes), n = 9 queries, fewer than a query tile of the
// key pass (found by the differential fuzzer, test/fuzz: the tile's product
// failed to compile, its visible queries a region of varying size).
func.func @causal_f64(%q: tensor<2x9x31xf64>, %k: tensor<32x31xf64>, %v: tensor<32x5xf64>) -> tensor<2x9x5xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.250000e-01 causal
      : tensor<2x9x31xf64>, tensor<32x31xf64>, tensor<32x5xf64> -> tensor<2x9x5xf64>
  return %o : tensor<2x9x5xf64>
}

// Grouped-query: 4 query heads per KV head; dK and dV sum over the group.
func.func @grouped(%q: tensor<2x4x70x32xf32>, %k: tensor<2x1x150x32xf32>, %v: tensor<2x1x150x32xf32>) -> tensor<2x4x70x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.800000e-01
      : tensor<2x4x70x32xf32>, tensor<2x1x150x32xf32>, tensor<2x1x150x32xf32> -> tensor<2x4x70x32xf32>
  return %o : tensor<2x4x70x32xf32>
}

// A single query and a single key.
func.func @single(%q: tensor<1x1x16xf32>, %k: tensor<1x1x16xf32>, %v: tensor<1x1x16xf32>) -> tensor<1x1x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x1x16xf32> -> tensor<1x1x16xf32>
  return %o : tensor<1x1x16xf32>
}

// Dynamic n and m, with a feature map.
func.func @dynamic_relu(%q: tensor<2x?x24xf32>, %k: tensor<2x?x24xf32>, %v: tensor<2x?x16xf32>) -> tensor<2x?x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.000000e-01 feature_map relu causal
      : tensor<2x?x24xf32>, tensor<2x?x24xf32>, tensor<2x?x16xf32> -> tensor<2x?x16xf32>
  return %o : tensor<2x?x16xf32>
}
