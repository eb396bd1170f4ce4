// The functions whose argument the .npy fuzzer (test/fuzz/npy_fuzzer.py)
// loads, one per element type, rank and kind of size the loader must check.

func.func @static(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %o = attn.normalize softmax %x dim 1 : tensor<3x4xf32>
  return %o : tensor<3x4xf32>
}

// Any 2-D file fits, empty ones too.
func.func @dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %o = attn.matmul %x, %x transpose_rhs : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}

func.func @vector(%x: tensor<5xf64>) -> tensor<5xf64> {
  %o = attn.prefix_sum %x dim 0 : tensor<5xf64>
  return %o : tensor<5xf64>
}

func.func @half(%x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %o = attn.scale %x by 2.0 : tensor<2x3xf16>
  return %o : tensor<2x3xf16>
}

// NumPy has no bfloat16: the loader rounds a float32 file on binding.
func.func @brain(%x: tensor<1x2x?x3xbf16>) -> tensor<1x2x?x3xbf16> {
  %o = attn.normalize sum %x dim 3 eps 1.0e-3 : tensor<1x2x?x3xbf16>
  return %o : tensor<1x2x?x3xbf16>
}
