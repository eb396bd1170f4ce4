// Specs checked by the numpy oracle (../oracle.py); one lit test per function.

func.func @eff_softmax(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x3xf32>) -> tensor<2x2x5x3xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32> -> tensor<2x2x5x3xf32>
  return %o : tensor<2x2x5x3xf32>
}

func.func @eff_softmax_bcast(%q: tensor<2x3x4x4xf32>, %k: tensor<6x4xf32>, %v: tensor<6x3xf32>) -> tensor<2x3x4x3xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2x3x4x4xf32>, tensor<6x4xf32>, tensor<6x3xf32> -> tensor<2x3x4x3xf32>
  return %o : tensor<2x3x4x3xf32>
}

func.func @eff_scaling(%q: tensor<2x3x4x4xf32>, %k: tensor<2x3x6x4xf32>, %v: tensor<2x3x6x2xf32>) -> tensor<2x3x4x2xf32> {
  %o = attn.efficient %q, %k, %v variant scaling
      : tensor<2x3x4x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x2xf32> -> tensor<2x3x4x2xf32>
  return %o : tensor<2x3x4x2xf32>
}

func.func @eff_softmax_f64(%q: tensor<2x2x5x4xf64>, %k: tensor<2x2x6x4xf64>, %v: tensor<2x2x6x3xf64>) -> tensor<2x2x5x3xf64> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2x2x5x4xf64>, tensor<2x2x6x4xf64>, tensor<2x2x6x3xf64> -> tensor<2x2x5x3xf64>
  return %o : tensor<2x2x5x3xf64>
}

func.func @eff_scaling_f64(%q: tensor<2x5x4xf64>, %k: tensor<2x3x4xf64>, %v: tensor<2x3x2xf64>) -> tensor<2x5x2xf64> {
  %o = attn.efficient %q, %k, %v variant scaling
      : tensor<2x5x4xf64>, tensor<2x3x4xf64>, tensor<2x3x2xf64> -> tensor<2x5x2xf64>
  return %o : tensor<2x5x2xf64>
}
