// attn.normalize softmax along rows (dim 1, the innermost), across rows
// (dim 0, over positions) and in f64 (normalize-softmax.test).
func.func @rows(%x: tensor<512x32xf32>) -> tensor<512x32xf32> {
  %0 = attn.normalize softmax %x dim 1 : tensor<512x32xf32>
  return %0 : tensor<512x32xf32>
}
func.func @columns(%x: tensor<512x32xf32>) -> tensor<512x32xf32> {
  %0 = attn.normalize softmax %x dim 0 : tensor<512x32xf32>
  return %0 : tensor<512x32xf32>
}
func.func @rows_f64(%x: tensor<64x24xf64>) -> tensor<64x24xf64> {
  %0 = attn.normalize softmax %x dim 1 : tensor<64x24xf64>
  return %0 : tensor<64x24xf64>
}
