// Benchmark kernel window_b64h3_n49_d32_bias (bench/kernels.py renders this file).
// Softmax attention, window attention (Swin), 64 windows x 3 heads of 7 x 7 tokens, relative-position bias broadcast over the windows, Q 64x3x49x32, K 64x3x49x32, V 64x3x49x32, additive bias 1x3x49x49:
//   O = softmax_keys(0.17677669529663687 * Q K^T + bias) V
func.func @window_b64h3_n49_d32_bias(%q: tensor<64x3x49x32xf32>, %k: tensor<64x3x49x32xf32>, %v: tensor<64x3x49x32xf32>, %bias: tensor<1x3x49x49xf32>) -> tensor<64x3x49x32xf32> {
  %o = attn.dot_product %q, %k, %v mask %bias norm [softmax over keys] scale 0.17677669529663687
      : tensor<64x3x49x32xf32>, tensor<64x3x49x32xf32>, tensor<64x3x49x32xf32>, tensor<1x3x49x49xf32> -> tensor<64x3x49x32xf32>
  return %o : tensor<64x3x49x32xf32>
}
