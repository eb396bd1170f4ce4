// Softmax along rows of two vectors (dk = 32, as efficient attention's
// gradient takes over Q's features) and of one (16).
func.func @rows32(%x: tensor<4096x32xf32>) -> tensor<4096x32xf32> {
  %0 = attn.normalize softmax %x dim 1 : tensor<4096x32xf32>
  return %0 : tensor<4096x32xf32>
}
func.func @rows16(%x: tensor<4096x16xf32>) -> tensor<4096x16xf32> {
  %0 = attn.normalize softmax %x dim 1 : tensor<4096x16xf32>
  return %0 : tensor<4096x16xf32>
}
