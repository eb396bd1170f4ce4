// A pointwise output whose operand is a product computed for it alone: the
// product is computed in the output's register tiles and never stored
// (gemm-epilogue.test).

// Divided by per-row sums (linear attention's output), eps added.
func.func @div_rows(%a: tensor<300x40xf32>, %b: tensor<40x96xf32>, %s: tensor<300x1xf32>) -> tensor<300x96xf32> {
  %p = attn.matmul %a, %b : tensor<300x40xf32>, tensor<40x96xf32> -> tensor<300x96xf32>
  %o = attn.div %p, %s eps 0.5 : tensor<300x96xf32>, tensor<300x1xf32> -> tensor<300x96xf32>
  return %o : tensor<300x96xf32>
}

// The product as the rhs of an add, a bias row broadcast over the rows.
func.func @add_bias(%a: tensor<300x40xf32>, %b: tensor<40x64xf32>, %bias: tensor<64xf32>) -> tensor<300x64xf32> {
  %p = attn.matmul %a, %b : tensor<300x40xf32>, tensor<40x64xf32> -> tensor<300x64xf32>
  %o = attn.add %bias, %p : tensor<64xf32>, tensor<300x64xf32> -> tensor<300x64xf32>
  return %o : tensor<300x64xf32>
}

// Batched, transposed rhs (packed), scaled.
func.func @scale_batched(%a: tensor<2x130x24xf32>, %b: tensor<2x100x24xf32>) -> tensor<2x130x100xf32> {
  %p = attn.matmul %a, %b transpose_rhs : tensor<2x130x24xf32>, tensor<2x100x24xf32> -> tensor<2x130x100xf32>
  %o = attn.scale %p by 2.500000e-01 : tensor<2x130x100xf32>
  return %o : tensor<2x130x100xf32>
}

// A product of two pointwise outputs: the first product (a's) is fused;
// the second one is its own loop nest and read.
func.func @mul_two(%a: tensor<200x16xf32>, %b: tensor<200x16xf32>, %c: tensor<16x48xf32>) -> tensor<200x48xf32> {
  %p = attn.matmul %a, %c : tensor<200x16xf32>, tensor<16x48xf32> -> tensor<200x48xf32>
  %q = attn.matmul %b, %c : tensor<200x16xf32>, tensor<16x48xf32> -> tensor<200x48xf32>
  %o = attn.mul %p, %q : tensor<200x48xf32>, tensor<200x48xf32> -> tensor<200x48xf32>
  return %o : tensor<200x48xf32>
}

// Not fused: the product has a second use (it is returned too).
func.func @two_uses(%a: tensor<300x40xf32>, %b: tensor<40x64xf32>) -> (tensor<300x64xf32>, tensor<300x64xf32>) {
  %p = attn.matmul %a, %b : tensor<300x40xf32>, tensor<40x64xf32> -> tensor<300x64xf32>
  %o = attn.scale %p by 2.000000e+00 : tensor<300x64xf32>
  return %o, %p : tensor<300x64xf32>, tensor<300x64xf32>
}

// Not fused: the product is broadcast (its type is not the output's).
func.func @broadcast(%a: tensor<300x40xf32>, %b: tensor<40x64xf32>, %c: tensor<2x300x64xf32>) -> tensor<2x300x64xf32> {
  %p = attn.matmul %a, %b : tensor<300x40xf32>, tensor<40x64xf32> -> tensor<300x64xf32>
  %o = attn.add %p, %c : tensor<300x64xf32>, tensor<2x300x64xf32> -> tensor<2x300x64xf32>
  return %o : tensor<2x300x64xf32>
}

// Not fused: at most one block of rows and a long reduction, a chunked
// product.
func.func @few_rows(%k: tensor<3000x16xf32>, %v: tensor<3000x24xf32>) -> tensor<16x24xf32> {
  %p = attn.matmul %k, %v transpose_lhs : tensor<3000x16xf32>, tensor<3000x24xf32> -> tensor<16x24xf32>
  %o = attn.scale %p by 5.000000e-01 : tensor<16x24xf32>
  return %o : tensor<16x24xf32>
}

// Divided by a one-column product of the same lhs (linear attention's row
// sums): both products are computed per row block in the division's tasks,
// from one copy of the block's lhs (an inlined feature map).
func.func @div_row_product(%x: tensor<300x24xf32>, %b: tensor<24x80xf32>, %w: tensor<1x24xf32>) -> tensor<300x80xf32> {
  %a = attn.feature_map elu_plus_one %x : tensor<300x24xf32>
  %p = attn.matmul %a, %b : tensor<300x24xf32>, tensor<24x80xf32> -> tensor<300x80xf32>
  %s = attn.matmul %a, %w transpose_rhs : tensor<300x24xf32>, tensor<1x24xf32> -> tensor<300x1xf32>
  %o = attn.div %p, %s : tensor<300x80xf32>, tensor<300x1xf32> -> tensor<300x80xf32>
  return %o : tensor<300x80xf32>
}

// The same with a depth of 32 (two vectors per row: one horizontal add
// each) and different lhs operands (arguments, read in place).
func.func @div_row_product_2(%a: tensor<300x32xf32>, %c: tensor<300x32xf32>, %b: tensor<32x64xf32>, %w: tensor<1x32xf32>) -> tensor<300x64xf32> {
  %p = attn.matmul %a, %b : tensor<300x32xf32>, tensor<32x64xf32> -> tensor<300x64xf32>
  %s = attn.matmul %c, %w transpose_rhs : tensor<300x32xf32>, tensor<1x32xf32> -> tensor<300x1xf32>
  %o = attn.div %p, %s eps 0.125 : tensor<300x64xf32>, tensor<300x1xf32> -> tensor<300x64xf32>
  return %o : tensor<300x64xf32>
}

// A dynamic row count: the product is still computed in the output's
// blocks (one row of the accumulator at a time); the one-column product,
// not static, is its own loop nest.
func.func @dynamic_rows(%a: tensor<?x40xf32>, %b: tensor<40x96xf32>, %w: tensor<1x40xf32>) -> tensor<?x96xf32> {
  %p = attn.matmul %a, %b : tensor<?x40xf32>, tensor<40x96xf32> -> tensor<?x96xf32>
  %s = attn.matmul %a, %w transpose_rhs : tensor<?x40xf32>, tensor<1x40xf32> -> tensor<?x1xf32>
  %o = attn.div %p, %s eps 0.5 : tensor<?x96xf32>, tensor<?x1xf32> -> tensor<?x96xf32>
  return %o : tensor<?x96xf32>
}

// The softmax backward of a product's rows, r (g - rowsum(g r)) with
// g = a b (efficient attention's dQ, with g = dE C^T): the product feeds
// the output twice, once through the row sum. A tile spans a row (32
// columns, a few whole vectors), so the tiles compute g and its row sums
// and g is never stored.
func.func @softmax_backward_rows(%a: tensor<300x40xf32>, %b: tensor<40x32xf32>, %r: tensor<300x32xf32>) -> tensor<300x32xf32> {
  %g = attn.matmul %a, %b : tensor<300x40xf32>, tensor<40x32xf32> -> tensor<300x32xf32>
  %gr = attn.mul %g, %r : tensor<300x32xf32>, tensor<300x32xf32> -> tensor<300x32xf32>
  %s = attn.reduce_sum %gr dim 1 : tensor<300x32xf32> -> tensor<300x1xf32>
  %n = attn.scale %s by -1.000000e+00 : tensor<300x1xf32>
  %d = attn.add %g, %n : tensor<300x32xf32>, tensor<300x1xf32> -> tensor<300x32xf32>
  %o = attn.mul %r, %d : tensor<300x32xf32>, tensor<300x32xf32> -> tensor<300x32xf32>
  return %o : tensor<300x32xf32>
}

// The same, batched, with a transposed rhs (packed) and 16 columns.
func.func @softmax_backward_batched(%a: tensor<2x130x24xf32>, %b: tensor<2x16x24xf32>, %r: tensor<2x130x16xf32>) -> tensor<2x130x16xf32> {
  %g = attn.matmul %a, %b transpose_rhs : tensor<2x130x24xf32>, tensor<2x16x24xf32> -> tensor<2x130x16xf32>
  %gr = attn.mul %g, %r : tensor<2x130x16xf32>, tensor<2x130x16xf32> -> tensor<2x130x16xf32>
  %s = attn.reduce_sum %gr dim 2 : tensor<2x130x16xf32> -> tensor<2x130x1xf32>
  %n = attn.scale %s by -1.000000e+00 : tensor<2x130x1xf32>
  %d = attn.add %g, %n : tensor<2x130x16xf32>, tensor<2x130x1xf32> -> tensor<2x130x16xf32>
  %o = attn.mul %r, %d : tensor<2x130x16xf32>, tensor<2x130x16xf32> -> tensor<2x130x16xf32>
  return %o : tensor<2x130x16xf32>
}

// Not fused: rows wider than a register tile (160 columns; at most 64 on
// AVX-512), rows that are not whole vectors (36 columns), a dynamic row
// count. The product is its own loop nest, the row sums read it.
func.func @softmax_backward_wide(%a: tensor<300x40xf32>, %b: tensor<40x160xf32>, %r: tensor<300x160xf32>) -> tensor<300x160xf32> {
  %g = attn.matmul %a, %b : tensor<300x40xf32>, tensor<40x160xf32> -> tensor<300x160xf32>
  %gr = attn.mul %g, %r : tensor<300x160xf32>, tensor<300x160xf32> -> tensor<300x160xf32>
  %s = attn.reduce_sum %gr dim 1 : tensor<300x160xf32> -> tensor<300x1xf32>
  %d = attn.add %g, %s : tensor<300x160xf32>, tensor<300x1xf32> -> tensor<300x160xf32>
  %o = attn.mul %r, %d : tensor<300x160xf32>, tensor<300x160xf32> -> tensor<300x160xf32>
  return %o : tensor<300x160xf32>
}

func.func @softmax_backward_ragged(%a: tensor<300x40xf32>, %b: tensor<40x36xf32>, %r: tensor<300x36xf32>) -> tensor<300x36xf32> {
  %g = attn.matmul %a, %b : tensor<300x40xf32>, tensor<40x36xf32> -> tensor<300x36xf32>
  %gr = attn.mul %g, %r : tensor<300x36xf32>, tensor<300x36xf32> -> tensor<300x36xf32>
  %s = attn.reduce_sum %gr dim 1 : tensor<300x36xf32> -> tensor<300x1xf32>
  %d = attn.add %g, %s : tensor<300x36xf32>, tensor<300x1xf32> -> tensor<300x36xf32>
  %o = attn.mul %r, %d : tensor<300x36xf32>, tensor<300x36xf32> -> tensor<300x36xf32>
  return %o : tensor<300x36xf32>
}

func.func @softmax_backward_dynamic(%a: tensor<?x40xf32>, %b: tensor<40x32xf32>, %r: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %g = attn.matmul %a, %b : tensor<?x40xf32>, tensor<40x32xf32> -> tensor<?x32xf32>
  %gr = attn.mul %g, %r : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x32xf32>
  %s = attn.reduce_sum %gr dim 1 : tensor<?x32xf32> -> tensor<?x1xf32>
  %d = attn.add %g, %s : tensor<?x32xf32>, tensor<?x1xf32> -> tensor<?x32xf32>
  %o = attn.mul %r, %d : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}
