// Products with few rows and a long reduction (K^T V as the reassociated
// forms emit it): the Gemm schedule reduces chunks of positions in parallel
// (gemm-chunked.test).

func.func @ktv(%k: tensor<2000x16xf32>, %v: tensor<2000x24xf32>) -> tensor<16x24xf32> {
  %o = attn.matmul %k, %v transpose_lhs : tensor<2000x16xf32>, tensor<2000x24xf32> -> tensor<16x24xf32>
  return %o : tensor<16x24xf32>
}

// Batched, an odd number of columns, and f64.
func.func @ktv_batched_f64(%k: tensor<3x1100x8xf64>, %v: tensor<3x1100x5xf64>) -> tensor<3x8x5xf64> {
  %o = attn.matmul %k, %v transpose_lhs : tensor<3x1100x8xf64>, tensor<3x1100x5xf64> -> tensor<3x8x5xf64>
  return %o : tensor<3x8x5xf64>
}

// attn.efficient's context uses the same chunked product; dv = 24 is not a
// multiple of the 16-lane vector.
func.func @efficient_dv24(%q: tensor<64x16xf32>, %k: tensor<2000x16xf32>, %v: tensor<2000x24xf32>) -> tensor<64x24xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<64x16xf32>, tensor<2000x16xf32>, tensor<2000x24xf32> -> tensor<64x24xf32>
  return %o : tensor<64x24xf32>
}

// Sums of K over positions next to K^T V (linear attention's key sums):
// after the product or before it, they are reduced in its chunk tasks.
func.func @ktv_sums_after(%k: tensor<2000x16xf32>, %v: tensor<2000x24xf32>, %w: tensor<24x16xf32>) -> tensor<1x24xf32> {
  %p = attn.matmul %k, %v transpose_lhs : tensor<2000x16xf32>, tensor<2000x24xf32> -> tensor<16x24xf32>
  %s = attn.reduce_sum %k dim 0 : tensor<2000x16xf32> -> tensor<1x16xf32>
  %o = attn.matmul %s, %p : tensor<1x16xf32>, tensor<16x24xf32> -> tensor<1x24xf32>
  return %o : tensor<1x24xf32>
}
func.func @ktv_sums_before(%k: tensor<2000x16xf32>, %v: tensor<2000x24xf32>) -> tensor<1x24xf32> {
  %s = attn.reduce_sum %k dim 0 : tensor<2000x16xf32> -> tensor<1x16xf32>
  %p = attn.matmul %k, %v transpose_lhs : tensor<2000x16xf32>, tensor<2000x24xf32> -> tensor<16x24xf32>
  %o = attn.matmul %s, %p : tensor<1x16xf32>, tensor<16x24xf32> -> tensor<1x24xf32>
  return %o : tensor<1x24xf32>
}

// Wide rows (512 columns, 2 KiB apart): a block's rows of one column tile
// fall on a few L1 sets, so each block and column tile copies them into a
// contiguous panel (external attention's dMk). The same with a computed
// rhs (a root buffer, not an input) and a batch dim. 64 columns (256 bytes
// apart) spread over the sets and read in place.
func.func @ktv_wide(%k: tensor<2000x16xf32>, %v: tensor<2000x512xf32>) -> tensor<16x512xf32> {
  %o = attn.matmul %k, %v transpose_lhs : tensor<2000x16xf32>, tensor<2000x512xf32> -> tensor<16x512xf32>
  return %o : tensor<16x512xf32>
}

func.func @ktv_wide_computed(%k: tensor<2x1100x8xf32>, %v: tensor<2x1100x256xf32>) -> tensor<2x8x256xf32> {
  %s = attn.normalize softmax %v dim 1 : tensor<2x1100x256xf32>
  %o = attn.matmul %k, %s transpose_lhs : tensor<2x1100x8xf32>, tensor<2x1100x256xf32> -> tensor<2x8x256xf32>
  return %o : tensor<2x8x256xf32>
}

// A transposed wide rhs: its rows run along the positions, so it is read
// in place.
func.func @ktv_wide_transposed(%k: tensor<2000x16xf32>, %v: tensor<512x2000xf32>) -> tensor<16x512xf32> {
  %o = attn.matmul %k, %v transpose_lhs transpose_rhs : tensor<2000x16xf32>, tensor<512x2000xf32> -> tensor<16x512xf32>
  return %o : tensor<16x512xf32>
}

func.func @ktv_dv64(%k: tensor<2000x16xf32>, %v: tensor<2000x64xf32>) -> tensor<16x64xf32> {
  %o = attn.matmul %k, %v transpose_lhs : tensor<2000x16xf32>, tensor<2000x64xf32> -> tensor<16x64xf32>
  return %o : tensor<16x64xf32>
}
