// Specs checked by the numpy oracle (../oracle.py); one lit test per function.

func.func @matmul_bcast(%a: tensor<2x1x3x4xf32>, %b: tensor<3x4x5xf32>) -> tensor<2x3x3x5xf32> {
  %o = attn.matmul %a, %b
      : tensor<2x1x3x4xf32>, tensor<3x4x5xf32> -> tensor<2x3x3x5xf32>
  return %o : tensor<2x3x3x5xf32>
}

func.func @matmul_tl(%a: tensor<2x4x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %o = attn.matmul %a, %b transpose_lhs
      : tensor<2x4x3xf32>, tensor<4x5xf32> -> tensor<2x3x5xf32>
  return %o : tensor<2x3x5xf32>
}

func.func @matmul_tr(%a: tensor<3x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %o = attn.matmul %a, %b transpose_rhs
      : tensor<3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  return %o : tensor<2x3x5xf32>
}

func.func @matmul_tl_tr(%a: tensor<2x4x3xf32>, %b: tensor<1x5x4xf32>) -> tensor<2x3x5xf32> {
  %o = attn.matmul %a, %b transpose_lhs transpose_rhs
      : tensor<2x4x3xf32>, tensor<1x5x4xf32> -> tensor<2x3x5xf32>
  return %o : tensor<2x3x5xf32>
}

func.func @normalize_softmax(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %o = attn.normalize softmax %x dim 1 : tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

func.func @normalize_sum(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %o = attn.normalize sum %x dim 1 eps 1.000000e-03 : tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

func.func @normalize_count(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %o = attn.normalize count %x dim 1 : tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

func.func @normalize_none(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %o = attn.normalize none %x dim 1 : tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

func.func @masked_softmax_cols(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %m = attn.causal_mask %x : tensor<2x3x5xf32>
  %o = attn.normalize softmax %m dim 1 : tensor<2x3x5xf32>
  return %o : tensor<2x3x5xf32>
}

func.func @scale_op(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %o = attn.scale %x by 3.750000e-01 : tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

func.func @prefix_sum_mid(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %o = attn.prefix_sum %x dim 1 : tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

func.func @causal_mask_inf(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %o = attn.causal_mask %x : tensor<2x3x5xf32>
  return %o : tensor<2x3x5xf32>
}

func.func @causal_mask_zero(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %o = attn.causal_mask %x fill 0.000000e+00 : tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

func.func @feature_map_elu(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %o = attn.feature_map elu_plus_one %x : tensor<3x8xf32>
  return %o : tensor<3x8xf32>
}

func.func @feature_map_relu(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %o = attn.feature_map relu %x : tensor<3x8xf32>
  return %o : tensor<3x8xf32>
}

func.func @add_bcast(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %o = attn.add %a, %b : tensor<2x1x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %o : tensor<2x3x4xf32>
}

func.func @prefix_sum_exclusive(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %o = attn.prefix_sum %x dim 1 exclusive : tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

func.func @mul_bcast(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %o = attn.mul %a, %b : tensor<2x1x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %o : tensor<2x3x4xf32>
}

func.func @div_bcast_eps(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %o = attn.div %a, %b eps 0.25 : tensor<2x1x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %o : tensor<2x3x4xf32>
}

func.func @reduce_sum_mid(%x: tensor<2x5x3xf32>) -> tensor<2x1x3xf32> {
  %o = attn.reduce_sum %x dim 1 : tensor<2x5x3xf32> -> tensor<2x1x3xf32>
  return %o : tensor<2x1x3xf32>
}

func.func @gather(%value: tensor<2x46x2x3xf32>, %loc: tensor<2x3x2x3x2x2xf32>) -> tensor<2x3x2x3x2x3xf32> {
  %o = attn.bilinear_gather %value, %loc levels [6x5, 3x4, 2x2]
      : tensor<2x46x2x3xf32>, tensor<2x3x2x3x2x2xf32> -> tensor<2x3x2x3x2x3xf32>
  return %o : tensor<2x3x2x3x2x3xf32>
}

func.func @gather_ac(%value: tensor<2x46x2x3xf32>, %loc: tensor<2x3x2x3x2x2xf32>) -> tensor<2x3x2x3x2x3xf32> {
  %o = attn.bilinear_gather %value, %loc levels [6x5, 3x4, 2x2] align_corners
      : tensor<2x46x2x3xf32>, tensor<2x3x2x3x2x2xf32> -> tensor<2x3x2x3x2x3xf32>
  return %o : tensor<2x3x2x3x2x3xf32>
}
