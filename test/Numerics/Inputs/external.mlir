// Specs checked by the numpy oracle (../oracle.py); one lit test per function.

func.func @eanet(%x: tensor<2x6x4xf32>, %mk: tensor<3x4xf32>, %mv: tensor<3x5xf32>) -> tensor<2x6x5xf32> {
  %o = attn.external %x, %mk, %mv
      : tensor<2x6x4xf32>, tensor<3x4xf32>, tensor<3x5xf32> -> tensor<2x6x5xf32>
  return %o : tensor<2x6x5xf32>
}

func.func @eanet_eps(%x: tensor<2x2x6x4xf32>, %mk: tensor<2x1x3x4xf32>, %mv: tensor<3x5xf32>) -> tensor<2x2x6x5xf32> {
  %o = attn.external %x, %mk, %mv eps 2.500000e-01
      : tensor<2x2x6x4xf32>, tensor<2x1x3x4xf32>, tensor<3x5xf32> -> tensor<2x2x6x5xf32>
  return %o : tensor<2x2x6x5xf32>
}

func.func @eanet_f64(%x: tensor<2x6x4xf64>, %mk: tensor<3x4xf64>, %mv: tensor<3x5xf64>) -> tensor<2x6x5xf64> {
  %o = attn.external %x, %mk, %mv
      : tensor<2x6x4xf64>, tensor<3x4xf64>, tensor<3x5xf64> -> tensor<2x6x5xf64>
  return %o : tensor<2x6x5xf64>
}
