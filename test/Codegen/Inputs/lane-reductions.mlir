// Kernels whose rows end in a horizontal reduction of one vector's lanes
// (an atomic().vectorize() update): efficient attention's row max of Q
// (max), linear attention's row sums phi(Q) (phi(K)^T 1) (add) and softmax
// attention's row max and sum over keys.
func.func @efficient(%q: tensor<1024x32xf32>, %k: tensor<1024x32xf32>, %v: tensor<1024x64xf32>) -> tensor<1024x64xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<1024x32xf32>, tensor<1024x32xf32>, tensor<1024x64xf32> -> tensor<1024x64xf32>
  return %o : tensor<1024x64xf32>
}
func.func @linear(%q: tensor<1024x32xf32>, %k: tensor<1024x32xf32>, %v: tensor<1024x64xf32>) -> tensor<1024x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<1024x32xf32>, tensor<1024x32xf32>, tensor<1024x64xf32> -> tensor<1024x64xf32>
  return %o : tensor<1024x64xf32>
}
func.func @softmax(%q: tensor<4x256x64xf32>, %k: tensor<4x256x64xf32>, %v: tensor<4x256x64xf32>) -> tensor<4x256x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 1.250000e-01
      : tensor<4x256x64xf32>, tensor<4x256x64xf32>, tensor<4x256x64xf32> -> tensor<4x256x64xf32>
  return %o : tensor<4x256x64xf32>
}
// Window attention (Swin: 7 x 7 windows) with a relative position bias: the
// additive mask makes the module use is_nan/is_inf, so Halide leaves
// LLVM's reductions strict, and each row's max over its 49 keys' lanes was
// a serial chain of maxima with a NaN check each.
func.func @window(%q: tensor<8x3x49x32xf32>, %k: tensor<8x3x49x32xf32>, %v: tensor<8x3x49x32xf32>, %bias: tensor<1x3x49x49xf32>) -> tensor<8x3x49x32xf32> {
  %o = attn.dot_product %q, %k, %v mask %bias norm [softmax over keys] scale 0.17677669529663687
      : tensor<8x3x49x32xf32>, tensor<8x3x49x32xf32>, tensor<8x3x49x32xf32>, tensor<1x3x49x49xf32> -> tensor<8x3x49x32xf32>
  return %o : tensor<8x3x49x32xf32>
}
