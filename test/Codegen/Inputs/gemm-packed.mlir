// Products whose rhs spans several column tiles, or is transposed: the Gemm
// schedule copies each column tile's rhs columns into a contiguous panel
// per block (gemm-packed.test).

// 200 columns: three full 64-column tiles and a shifted-inwards last one;
// the rhs row stride (200 floats) is not a multiple of the tile.
func.func @wide(%a: tensor<200x72xf32>, %b: tensor<72x200xf32>) -> tensor<200x200xf32> {
  %o = attn.matmul %a, %b : tensor<200x72xf32>, tensor<72x200xf32> -> tensor<200x200xf32>
  return %o : tensor<200x200xf32>
}

// Transposed rhs: the panel copy transposes it.
func.func @wide_t(%a: tensor<200x72xf32>, %b: tensor<200x72xf32>) -> tensor<200x200xf32> {
  %o = attn.matmul %a, %b transpose_rhs : tensor<200x72xf32>, tensor<200x72xf32> -> tensor<200x200xf32>
  return %o : tensor<200x200xf32>
}

// Batched lhs, one rhs broadcast over the batch, transposed; f64.
func.func @batched_t_f64(%a: tensor<3x130x40xf64>, %b: tensor<100x40xf64>) -> tensor<3x130x100xf64> {
  %o = attn.matmul %a, %b transpose_rhs : tensor<3x130x40xf64>, tensor<100x40xf64> -> tensor<3x130x100xf64>
  return %o : tensor<3x130x100xf64>
}

// Batched rhs: a panel per batch.
func.func @batched(%a: tensor<2x100x48xf32>, %b: tensor<2x48x160xf32>) -> tensor<2x100x160xf32> {
  %o = attn.matmul %a, %b : tensor<2x100x48xf32>, tensor<2x48x160xf32> -> tensor<2x100x160xf32>
  return %o : tensor<2x100x160xf32>
}

// One column tile, not transposed: read in place, no panel.
func.func @narrow(%a: tensor<200x72xf32>, %b: tensor<72x64xf32>) -> tensor<200x64xf32> {
  %o = attn.matmul %a, %b : tensor<200x72xf32>, tensor<72x64xf32> -> tensor<200x64xf32>
  return %o : tensor<200x64xf32>
}

// A transposed matrix-vector product (one column): no panel.
func.func @matvec_t(%a: tensor<200x72xf32>, %b: tensor<1x72xf32>) -> tensor<200x1xf32> {
  %o = attn.matmul %a, %b transpose_rhs : tensor<200x72xf32>, tensor<1x72xf32> -> tensor<200x1xf32>
  return %o : tensor<200x1xf32>
}

// Dynamic sizes have no column tiles: no panel.
func.func @dynamic(%a: tensor<?x72xf32>, %b: tensor<72x?xf32>) -> tensor<?x?xf32> {
  %o = attn.matmul %a, %b : tensor<?x72xf32>, tensor<72x?xf32> -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}
