// Softmax attention at n = m = 2048 (attention-grad.test compiles its
// gradient and reads the buffers it allocates).
func.func @large(%q: tensor<2x2048x64xf32>, %k: tensor<2x2048x64xf32>, %v: tensor<2x2048x64xf32>) -> tensor<2x2048x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.250000e-01
      : tensor<2x2048x64xf32>, tensor<2x2048x64xf32>, tensor<2x2048x64xf32> -> tensor<2x2048x64xf32>
  return %o : tensor<2x2048x64xf32>
}
