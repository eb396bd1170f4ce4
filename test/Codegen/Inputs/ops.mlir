// Cases for codegen beyond test/Numerics/Inputs: reshapes, constants,
// dynamic sizes, reductions long enough for the rfactor schedules, -inf
// handling, odd sizes that do not fill a register tile, several results.

// Reshapes: collapse (2, 3, 4) -> (6, 4), scale, expand back.
func.func @reshapes(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %s = attn.scale %c by 2.0 : tensor<6x4xf32>
  %e = tensor.expand_shape %s [[0, 1], [2]] output_shape [3, 2, 4] : tensor<6x4xf32> into tensor<3x2x4xf32>
  return %e : tensor<3x2x4xf32>
}

// A dense constant and a splat constant.
func.func @constants(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]]> : tensor<2x3xf32>
  %s = arith.constant dense<0.5> : tensor<2x3xf32>
  %a = attn.add %x, %c : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %b = attn.add %a, %s : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// causal_mask with its default -inf fill, then a softmax: masked entries
// must vanish under Halide's fast-math flags.
func.func @mask_then_softmax(%x: tensor<2x6x6xf32>) -> tensor<2x6x6xf32> {
  %m = attn.causal_mask %x : tensor<2x6x6xf32>
  %p = attn.normalize softmax %m dim 2 : tensor<2x6x6xf32>
  return %p : tensor<2x6x6xf32>
}

// Softmax over positions (dim 0) long enough for the rfactor schedule.
func.func @softmax_positions(%x: tensor<1000x20xf32>) -> tensor<1000x20xf32> {
  %p = attn.normalize softmax %x dim 0 : tensor<1000x20xf32>
  return %p : tensor<1000x20xf32>
}

// Sum normalization over positions, f64.
func.func @sum_positions_f64(%x: tensor<700x9xf64>) -> tensor<700x9xf64> {
  %p = attn.normalize sum %x dim 0 eps 1.0e-3 : tensor<700x9xf64>
  return %p : tensor<700x9xf64>
}

// Prefix sums along the first and the last dim.
func.func @prefix_sums(%x: tensor<5x7x3xf32>) -> tensor<5x7x3xf32> {
  %a = attn.prefix_sum %x dim 0 : tensor<5x7x3xf32>
  %b = attn.prefix_sum %a dim 2 : tensor<5x7x3xf32>
  return %b : tensor<5x7x3xf32>
}

// Matmul whose sizes fill no register tile evenly.
func.func @matmul_odd(%a: tensor<37x19xf32>, %b: tensor<19x29xf32>) -> tensor<37x29xf32> {
  %c = attn.matmul %a, %b : tensor<37x19xf32>, tensor<19x29xf32> -> tensor<37x29xf32>
  return %c : tensor<37x29xf32>
}

// Efficient attention over enough positions for the rfactor of K^T V.
func.func @efficient_long(%q: tensor<40x8xf32>, %k: tensor<600x8xf32>, %v: tensor<600x12xf32>) -> tensor<40x12xf32> {
  %e = attn.efficient %q, %k, %v variant softmax
      : tensor<40x8xf32>, tensor<600x8xf32>, tensor<600x12xf32> -> tensor<40x12xf32>
  return %e : tensor<40x12xf32>
}

// Softmax attention with more queries than one block and odd sizes.
func.func @softmax_blocks(%q: tensor<70x8xf32>, %k: tensor<45x8xf32>, %v: tensor<45x11xf32>) -> tensor<70x11xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.3 causal
      : tensor<70x8xf32>, tensor<45x8xf32>, tensor<45x11xf32> -> tensor<70x11xf32>
  return %o : tensor<70x11xf32>
}

// Several results, one of them an argument returned as is.
func.func @two_results(%x: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %s = attn.feature_map relu %x : tensor<4x5xf32>
  return %s, %x : tensor<4x5xf32>, tensor<4x5xf32>
}

// Dynamic sizes: every dim taken from the inputs at run time.
func.func @dynamic_attention(%q: tensor<?x?xf32>, %k: tensor<?x?xf32>, %v: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}

func.func @dynamic_matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = attn.matmul %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}

// reduce_sum over positions, long enough for the rfactor schedule (f64),
// and over the innermost dim.
func.func @reduce_sum_positions_f64(%x: tensor<700x9xf64>) -> tensor<1x9xf64> {
  %s = attn.reduce_sum %x dim 0 : tensor<700x9xf64> -> tensor<1x9xf64>
  return %s : tensor<1x9xf64>
}

func.func @reduce_sum_last(%x: tensor<5x7x3xf32>) -> tensor<5x7x1xf32> {
  %s = attn.reduce_sum %x dim 2 : tensor<5x7x3xf32> -> tensor<5x7x1xf32>
  return %s : tensor<5x7x1xf32>
}

// Exclusive prefix sums along the first and the last dim.
func.func @exclusive_prefix_sums(%x: tensor<5x7x3xf32>) -> tensor<5x7x3xf32> {
  %a = attn.prefix_sum %x dim 0 exclusive : tensor<5x7x3xf32>
  %b = attn.prefix_sum %a dim 2 exclusive : tensor<5x7x3xf32>
  return %b : tensor<5x7x3xf32>
}

// The linear-attention ratio with dynamic rows, f64: num / (den + eps),
// den broadcast along the features, and a product.
func.func @ratio_dynamic_f64(%num: tensor<?x6xf64>, %den: tensor<?x1xf64>) -> tensor<?x6xf64> {
  %q = attn.div %num, %den eps 1.0e-3 : tensor<?x6xf64>, tensor<?x1xf64> -> tensor<?x6xf64>
  %p = attn.mul %q, %num : tensor<?x6xf64>, tensor<?x6xf64> -> tensor<?x6xf64>
  return %p : tensor<?x6xf64>
}
