// Benchmark kernel softmax_h8_n1024_bf16_weights (bench/kernels.py renders this file).
// Softmax attention, 8 heads, n = m = 1024, dk = dv = 64:
//   O = softmax_keys(0.125 * Q K^T) V
// Every tensor bf16 (storage; the arithmetic is f32, docs/precision.md).
// The weights are rounded to bf16 before P V (attn.allow_bf16_products, docs/precision.md).
func.func @softmax_h8_n1024_bf16_weights(%q: tensor<8x1024x64xbf16>, %k: tensor<8x1024x64xbf16>, %v: tensor<8x1024x64xbf16>) -> tensor<8x1024x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 {attn.allow_bf16_products}
      : tensor<8x1024x64xbf16>, tensor<8x1024x64xbf16>, tensor<8x1024x64xbf16> -> tensor<8x1024x64xbf16>
  return %o : tensor<8x1024x64xbf16>
}
