// Specs checked by the numpy oracle (../oracle.py); one lit test per function.

func.func @softmax_scale(%q: tensor<2x5x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>) -> tensor<2x5x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01
      : tensor<2x5x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32> -> tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

func.func @softmax_causal_eq(%q: tensor<2x5x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.69999999999999996 causal
      : tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32> -> tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

func.func @softmax_causal_n_lt_m(%q: tensor<2x3x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>) -> tensor<2x3x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01 causal
      : tensor<2x3x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32> -> tensor<2x3x3xf32>
  return %o : tensor<2x3x3xf32>
}

func.func @softmax_causal_n_gt_m(%q: tensor<2x6x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x3xf32>) -> tensor<2x6x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01 causal
      : tensor<2x6x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32> -> tensor<2x6x3xf32>
  return %o : tensor<2x6x3xf32>
}

func.func @softmax_mask(%q: tensor<2x4x3xf32>, %k: tensor<2x5x3xf32>, %v: tensor<2x5x2xf32>, %mask: tensor<2x4x5xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 2.500000e-01
      : tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x2xf32>, tensor<2x4x5xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

func.func @softmax_mask_bcast(%q: tensor<2x2x4x3xf32>, %k: tensor<2x2x5x3xf32>, %v: tensor<2x2x5x2xf32>, %mask: tensor<4x5xf32>) -> tensor<2x2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys]
      : tensor<2x2x4x3xf32>, tensor<2x2x5x3xf32>, tensor<2x2x5x2xf32>, tensor<4x5xf32> -> tensor<2x2x4x2xf32>
  return %o : tensor<2x2x4x2xf32>
}

func.func @softmax_mask_neginf(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x2xf32>, %mask: tensor<3x5xf32>) -> tensor<2x3x2xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 5.000000e-01
      : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x2xf32>, tensor<3x5xf32> -> tensor<2x3x2xf32>
  return %o : tensor<2x3x2xf32>
}

func.func @count_keys(%q: tensor<2x4x3xf32>, %k: tensor<2x6x3xf32>, %v: tensor<2x6x2xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<2x4x3xf32>, tensor<2x6x3xf32>, tensor<2x6x2xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

func.func @count_keys_causal(%q: tensor<2x4x3xf32>, %k: tensor<2x6x3xf32>, %v: tensor<2x6x2xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<2x4x3xf32>, tensor<2x6x3xf32>, tensor<2x6x2xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

// A mask keeps the causal count materialized (no reassociation), and a
// causal query block of 32 rows needs 32 of the 64 keys, fewer than a score
// tile: the tile starts before key 0 (found by the differential fuzzer,
// test/fuzz: the kernel read the mask at key -32).
func.func @count_keys_causal_mask(%q: tensor<32x3xf32>, %k: tensor<64x3xf32>, %v: tensor<64x4xf32>, %mask: tensor<32x64xf32>) -> tensor<32x4xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [count over keys] causal
      : tensor<32x3xf32>, tensor<64x3xf32>, tensor<64x4xf32>, tensor<32x64xf32> -> tensor<32x4xf32>
  return %o : tensor<32x4xf32>
}

func.func @sum_elu(%q: tensor<2x4x3xf32>, %k: tensor<2x5x3xf32>, %v: tensor<2x5x2xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x2xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

func.func @sum_relu(%q: tensor<2x4x3xf32>, %k: tensor<2x5x3xf32>, %v: tensor<2x5x2xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-03] feature_map relu
      : tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x2xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

func.func @sum_elu_signed(%q: tensor<2x4x3xf32>, %k: tensor<2x5x3xf32>, %v: tensor<2x5x2xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x2xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

func.func @sum_relu_signed(%q: tensor<2x4x3xf32>, %k: tensor<2x5x3xf32>, %v: tensor<2x5x2xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-03] feature_map relu
      : tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x2xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

func.func @linear_causal(%q: tensor<2x6x3xf32>, %k: tensor<2x6x3xf32>, %v: tensor<2x6x2xf32>) -> tensor<2x6x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<2x6x3xf32>, tensor<2x6x3xf32>, tensor<2x6x2xf32> -> tensor<2x6x2xf32>
  return %o : tensor<2x6x2xf32>
}

func.func @linear_causal_signed(%q: tensor<2x6x3xf32>, %k: tensor<2x6x3xf32>, %v: tensor<2x6x2xf32>) -> tensor<2x6x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<2x6x3xf32>, tensor<2x6x3xf32>, tensor<2x6x2xf32> -> tensor<2x6x2xf32>
  return %o : tensor<2x6x2xf32>
}

func.func @double_norm(%q: tensor<2x6x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x5xf32>) -> tensor<2x6x5xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.000000e-09]
      : tensor<2x6x4xf32>, tensor<3x4xf32>, tensor<3x5xf32> -> tensor<2x6x5xf32>
  return %o : tensor<2x6x5xf32>
}

func.func @double_norm_causal(%q: tensor<2x6x4xf32>, %k: tensor<2x4x4xf32>, %v: tensor<2x4x3xf32>) -> tensor<2x6x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.000000e-09] causal
      : tensor<2x6x4xf32>, tensor<2x4x4xf32>, tensor<2x4x3xf32> -> tensor<2x6x3xf32>
  return %o : tensor<2x6x3xf32>
}

func.func @softmax_queries_causal(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x2xf32>) -> tensor<2x3x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries] causal
      : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x2xf32> -> tensor<2x3x2xf32>
  return %o : tensor<2x3x2xf32>
}

func.func @three_steps(%q: tensor<2x4x3xf32>, %k: tensor<2x5x3xf32>, %v: tensor<2x5x2xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over queries, softmax over keys, none over keys] scale 2.000000e+00
      : tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x2xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

func.func @none_scale(%q: tensor<2x4x3xf32>, %k: tensor<2x5x3xf32>, %v: tensor<2x5x2xf32>) -> tensor<2x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 0.29999999999999999
      : tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x2xf32> -> tensor<2x4x2xf32>
  return %o : tensor<2x4x2xf32>
}

func.func @mha_cross(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>) -> tensor<2x2x3x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01
      : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32> -> tensor<2x2x3x3xf32>
  return %o : tensor<2x2x3x3xf32>
}

func.func @kv_rank2_bcast(%q: tensor<2x3x4x4xf32>, %k: tensor<6x4xf32>, %v: tensor<6x2xf32>) -> tensor<2x3x4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01
      : tensor<2x3x4x4xf32>, tensor<6x4xf32>, tensor<6x2xf32> -> tensor<2x3x4x2xf32>
  return %o : tensor<2x3x4x2xf32>
}

func.func @unit_dim_bcast(%q: tensor<2x1x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<2x5x3xf32>) -> tensor<2x2x3x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<2x1x3x4xf32>, tensor<1x2x5x4xf32>, tensor<2x5x3xf32> -> tensor<2x2x3x3xf32>
  return %o : tensor<2x2x3x3xf32>
}

func.func @softmax_causal_f64(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>) -> tensor<2x5x3xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01 causal
      : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64> -> tensor<2x5x3xf64>
  return %o : tensor<2x5x3xf64>
}

func.func @linear_causal_f64(%q: tensor<2x6x3xf64>, %k: tensor<2x6x3xf64>, %v: tensor<2x6x2xf64>) -> tensor<2x6x2xf64> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<2x6x3xf64>, tensor<2x6x3xf64>, tensor<2x6x2xf64> -> tensor<2x6x2xf64>
  return %o : tensor<2x6x2xf64>
}

func.func @double_norm_f64(%q: tensor<2x6x4xf64>, %k: tensor<3x4xf64>, %v: tensor<3x5xf64>) -> tensor<2x6x5xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.000000e-09]
      : tensor<2x6x4xf64>, tensor<3x4xf64>, tensor<3x5xf64> -> tensor<2x6x5xf64>
  return %o : tensor<2x6x5xf64>
}

func.func @mask_f64(%q: tensor<2x5x3xf64>, %k: tensor<2x4x3xf64>, %v: tensor<2x4x2xf64>, %mask: tensor<2x5x4xf64>) -> tensor<2x5x2xf64> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys, sum over queries eps 5.000000e-01] scale 5.000000e-01 causal
      : tensor<2x5x3xf64>, tensor<2x4x3xf64>, tensor<2x4x2xf64>, tensor<2x5x4xf64> -> tensor<2x5x2xf64>
  return %o : tensor<2x5x2xf64>
}
