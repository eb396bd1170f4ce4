// Reduced-precision I/O (attn-run-precision.test): copies that round to
// the declared type, and a bf16 attention with an f32 result.
func.func @to_bf16(%x: tensor<8xf32>) -> tensor<8xbf16> {
  %y = attn.scale %x by 1.0 : tensor<8xf32>
  %b = arith.truncf %y : tensor<8xf32> to tensor<8xbf16>
  return %b : tensor<8xbf16>
}

func.func @bf16_identity(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %y = attn.scale %x by 1.0 : tensor<8xbf16>
  return %y : tensor<8xbf16>
}

func.func @f16_identity(%x: tensor<8xf16>) -> tensor<8xf16> {
  %y = attn.scale %x by 1.0 : tensor<8xf16>
  return %y : tensor<8xf16>
}

func.func @sdpa_bf16(%q: tensor<2x16x8xbf16>, %k: tensor<2x16x8xbf16>, %v: tensor<2x16x8xbf16>) -> tensor<2x16x8xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.35 : tensor<2x16x8xbf16>, tensor<2x16x8xbf16>, tensor<2x16x8xbf16> -> tensor<2x16x8xbf16>
  return %o : tensor<2x16x8xbf16>
}
