// Mixed and reduced precision with saved statistics
// (--attn-grad=save-statistics=1): @f computes each op in f32 and saves f32
// statistics, as for f32 operands: saved-mixed-precision.test.

func.func @efficient(%q: tensor<2x300x16xbf16>, %k: tensor<2x300x16xbf16>, %v: tensor<2x300x24xbf16>) -> tensor<2x300x24xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<2x300x16xbf16>, tensor<2x300x16xbf16>, tensor<2x300x24xbf16> -> tensor<2x300x24xf32>
  return %o : tensor<2x300x24xf32>
}

func.func @sdpa(%q: tensor<2x100x16xbf16>, %k: tensor<2x120x16xbf16>, %v: tensor<2x120x24xbf16>) -> tensor<2x100x24xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25 : tensor<2x100x16xbf16>, tensor<2x120x16xbf16>, tensor<2x120x24xbf16> -> tensor<2x100x24xf32>
  return %o : tensor<2x100x24xf32>
}

func.func @external(%x: tensor<300x16xbf16>, %mk: tensor<8x16xbf16>, %mv: tensor<8x16xbf16>) -> tensor<300x16xf32> {
  %o = attn.external %x, %mk, %mv : tensor<300x16xbf16>, tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<300x16xf32>
  return %o : tensor<300x16xf32>
}

func.func @linear(%q: tensor<2x300x16xbf16>, %k: tensor<2x300x16xbf16>, %v: tensor<2x300x24xbf16>) -> tensor<2x300x24xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one : tensor<2x300x16xbf16>, tensor<2x300x16xbf16>, tensor<2x300x24xbf16> -> tensor<2x300x24xf32>
  return %o : tensor<2x300x24xf32>
}

// A bf16 result (rounded once): computed in f32, each op saves what an f32
// op saves, in f32 (softmax attention's output unrounded).
func.func @sdpa_rounded(%q: tensor<2x100x16xf32>, %k: tensor<2x120x16xf32>, %v: tensor<2x120x24xf32>) -> tensor<2x100x24xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25 : tensor<2x100x16xf32>, tensor<2x120x16xf32>, tensor<2x120x24xf32> -> tensor<2x100x24xbf16>
  return %o : tensor<2x100x24xbf16>
}

func.func @linear_rounded(%q: tensor<2x300x16xf32>, %k: tensor<2x300x16xf32>, %v: tensor<2x300x24xf32>) -> tensor<2x300x24xbf16> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one : tensor<2x300x16xf32>, tensor<2x300x16xf32>, tensor<2x300x24xf32> -> tensor<2x300x24xbf16>
  return %o : tensor<2x300x24xbf16>
}

func.func @efficient_bf16(%q: tensor<2x300x16xbf16>, %k: tensor<2x300x16xbf16>, %v: tensor<2x300x24xbf16>) -> tensor<2x300x24xbf16> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<2x300x16xbf16>, tensor<2x300x16xbf16>, tensor<2x300x24xbf16> -> tensor<2x300x24xbf16>
  return %o : tensor<2x300x24xbf16>
}

func.func @linear_bf16(%q: tensor<2x300x16xbf16>, %k: tensor<2x300x16xbf16>, %v: tensor<2x300x24xbf16>) -> tensor<2x300x24xbf16> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one : tensor<2x300x16xbf16>, tensor<2x300x16xbf16>, tensor<2x300x24xbf16> -> tensor<2x300x24xbf16>
  return %o : tensor<2x300x24xbf16>
}
