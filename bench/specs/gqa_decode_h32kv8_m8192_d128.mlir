// Benchmark kernel gqa_decode_h32kv8_m8192_d128 (bench/kernels.py renders this file).
// Softmax attention, grouped-query decode, 32 query heads on 8 KV heads (K and V broadcast over the 4 query heads of a group), Q 8x4x1x128, K 8x1x8192x128, V 8x1x8192x128:
//   O = softmax_keys(0.08838834764831843 * Q K^T) V
func.func @gqa_decode_h32kv8_m8192_d128(%q: tensor<8x4x1x128xf32>, %k: tensor<8x1x8192x128xf32>, %v: tensor<8x1x8192x128xf32>) -> tensor<8x4x1x128xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.08838834764831843
      : tensor<8x4x1x128xf32>, tensor<8x1x8192x128xf32>, tensor<8x1x8192x128xf32> -> tensor<8x4x1x128xf32>
  return %o : tensor<8x4x1x128xf32>
}
