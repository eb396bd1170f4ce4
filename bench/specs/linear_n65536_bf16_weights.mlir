// Benchmark kernel linear_n65536_bf16_weights (bench/kernels.py renders this file).
// Linear attention (Katharopoulos et al.), n = m = 65536, dk = 32, dv = 64, phi = elu + 1:
//   O = phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1)
// Every tensor bf16 (storage; the arithmetic is f32, docs/precision.md).
// phi(K), phi(Q) and the context are rounded to bf16 before their products
// (attn.allow_bf16_products, docs/precision.md).
func.func @linear_n65536_bf16_weights(%q: tensor<65536x32xbf16>, %k: tensor<65536x32xbf16>, %v: tensor<65536x64xbf16>) -> tensor<65536x64xbf16> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one {attn.allow_bf16_products}
      : tensor<65536x32xbf16>, tensor<65536x32xbf16>, tensor<65536x64xbf16> -> tensor<65536x64xbf16>
  return %o : tensor<65536x64xbf16>
}
