// Benchmark kernel efficient_n65536_bf16_weights (bench/kernels.py renders this file).
// Efficient attention, softmax variant (Shen et al.), n = 65536, dk = 32, dv = 64:
//   E = softmax_features(Q) (softmax_positions(K)^T V)
// Every tensor bf16 (storage; the arithmetic is f32, docs/precision.md).
// The weights of both softmaxes and the context are rounded to bf16 before
// their products (attn.allow_bf16_products, docs/precision.md).
func.func @efficient_n65536_bf16_weights(%q: tensor<65536x32xbf16>, %k: tensor<65536x32xbf16>, %v: tensor<65536x64xbf16>) -> tensor<65536x64xbf16> {
  %o = attn.efficient %q, %k, %v variant softmax {attn.allow_bf16_products}
      : tensor<65536x32xbf16>, tensor<65536x32xbf16>, tensor<65536x64xbf16> -> tensor<65536x64xbf16>
  return %o : tensor<65536x64xbf16>
}
