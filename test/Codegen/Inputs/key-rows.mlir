// Softmax attention whose keyT rows (m keys each) the CPU schedule pads or
// not (key-rows.test): rows of a multiple of 1 KiB get 256 more bytes.

// m = 256 f32 keys: 1 KiB rows, padded to 320 keys.
func.func @rows_1k(%q: tensor<2x40x16xf32>, %k: tensor<2x256x16xf32>, %v: tensor<2x256x24xf32>) -> tensor<2x40x24xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01
      : tensor<2x40x16xf32>, tensor<2x256x16xf32>, tensor<2x256x24xf32> -> tensor<2x40x24xf32>
  return %o : tensor<2x40x24xf32>
}

// m = 512, split into keys of 128 (attention.keySplit=128 in the test):
// 2 KiB rows, padded to 576 keys.
func.func @rows_2k_causal(%q: tensor<512x16xf32>, %k: tensor<512x16xf32>, %v: tensor<512x8xf32>) -> tensor<512x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01 causal
      : tensor<512x16xf32>, tensor<512x16xf32>, tensor<512x8xf32> -> tensor<512x8xf32>
  return %o : tensor<512x8xf32>
}

// m = 128 f64 keys with a feature map: 1 KiB rows, padded to 160 keys.
func.func @rows_1k_f64(%q: tensor<?x16xf64>, %k: tensor<128x16xf64>, %v: tensor<128x8xf64>) -> tensor<?x8xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] feature_map elu_plus_one
      : tensor<?x16xf64>, tensor<128x16xf64>, tensor<128x8xf64> -> tensor<?x8xf64>
  return %o : tensor<?x8xf64>
}

// m = 200: 800-byte rows, not padded.
func.func @rows_800(%q: tensor<40x16xf32>, %k: tensor<200x16xf32>, %v: tensor<200x8xf32>) -> tensor<40x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01
      : tensor<40x16xf32>, tensor<200x16xf32>, tensor<200x8xf32> -> tensor<40x8xf32>
  return %o : tensor<40x8xf32>
}

// Dynamic m: not padded.
func.func @rows_dynamic(%q: tensor<40x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x8xf32>) -> tensor<40x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01
      : tensor<40x16xf32>, tensor<?x16xf32>, tensor<?x8xf32> -> tensor<40x8xf32>
  return %o : tensor<40x8xf32>
}
