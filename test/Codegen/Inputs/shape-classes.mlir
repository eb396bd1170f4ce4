// The shapes users run (issue 27), one per schedule class; shape-classes.test
// pins the form each gets (--remark-schedule). bench/kernels.py times them.

// LLM decode: 8 heads, 1 query, 32768 keys.
func.func @decode(%q: tensor<8x1x64xf32>, %k: tensor<8x32768x64xf32>, %v: tensor<8x32768x64xf32>) -> tensor<8x1x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<8x1x64xf32>, tensor<8x32768x64xf32>, tensor<8x32768x64xf32> -> tensor<8x1x64xf32>
  return %o : tensor<8x1x64xf32>
}

// Grouped-query decode: 32 query heads on 8 KV heads, 8192 keys, d 128.
func.func @gqa_decode(%q: tensor<8x4x1x128xf32>, %k: tensor<8x1x8192x128xf32>, %v: tensor<8x1x8192x128xf32>) -> tensor<8x4x1x128xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.0883883 : tensor<8x4x1x128xf32>, tensor<8x1x8192x128xf32>, tensor<8x1x8192x128xf32> -> tensor<8x4x1x128xf32>
  return %o : tensor<8x4x1x128xf32>
}

// Causal prefill: 8 heads, n = m = 4096.
func.func @causal_prefill(%q: tensor<8x4096x64xf32>, %k: tensor<8x4096x64xf32>, %v: tensor<8x4096x64xf32>) -> tensor<8x4096x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 causal : tensor<8x4096x64xf32>, tensor<8x4096x64xf32>, tensor<8x4096x64xf32> -> tensor<8x4096x64xf32>
  return %o : tensor<8x4096x64xf32>
}

// Window attention (Swin): 64 windows x 3 heads of 7 x 7 tokens, with a
// relative-position bias broadcast over the windows.
func.func @window(%q: tensor<64x3x49x32xf32>, %k: tensor<64x3x49x32xf32>, %v: tensor<64x3x49x32xf32>, %bias: tensor<1x3x49x49xf32>) -> tensor<64x3x49x32xf32> {
  %o = attn.dot_product %q, %k, %v mask %bias norm [softmax over keys] scale 0.1767767 : tensor<64x3x49x32xf32>, tensor<64x3x49x32xf32>, tensor<64x3x49x32xf32>, tensor<1x3x49x49xf32> -> tensor<64x3x49x32xf32>
  return %o : tensor<64x3x49x32xf32>
}
