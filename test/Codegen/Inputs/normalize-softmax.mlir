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
// Over positions in chunks of 256 (lowerNormalize, normalizeChunk): a
// ragged last chunk (600 = 2 x 256 + 88) with features not a multiple of
// the vector, a batched middle dim, f64, and 300 positions, too few for
// two chunks (one max, then one sum).
func.func @columns_ragged(%x: tensor<600x20xf32>) -> tensor<600x20xf32> {
  %0 = attn.normalize softmax %x dim 0 : tensor<600x20xf32>
  return %0 : tensor<600x20xf32>
}
func.func @positions_batched(%x: tensor<2x520x8xf32>) -> tensor<2x520x8xf32> {
  %0 = attn.normalize softmax %x dim 1 : tensor<2x520x8xf32>
  return %0 : tensor<2x520x8xf32>
}
func.func @columns_f64(%x: tensor<600x8xf64>) -> tensor<600x8xf64> {
  %0 = attn.normalize softmax %x dim 0 : tensor<600x8xf64>
  return %0 : tensor<600x8xf64>
}
func.func @columns_short(%x: tensor<300x16xf32>) -> tensor<300x16xf32> {
  %0 = attn.normalize softmax %x dim 0 : tensor<300x16xf32>
  return %0 : tensor<300x16xf32>
}
