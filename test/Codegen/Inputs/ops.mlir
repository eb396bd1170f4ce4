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

// The primitives of gradients at sizes that take the other schedule paths:
// an unbroadcast over 3 x 700 positions (the rfactor chunks), f64, and one
// along rows (the last dim summed, with a middle one).
func.func @unbroadcast_positions_f64(%g: tensor<3x700x9xf64>, %like: tensor<1x9xf64>) -> tensor<1x9xf64> {
  %s = attn.unbroadcast %g like %like : tensor<3x700x9xf64>, tensor<1x9xf64> -> tensor<1x9xf64>
  return %s : tensor<1x9xf64>
}

func.func @unbroadcast_rows(%g: tensor<5x7x300xf32>, %like: tensor<5x1x1xf32>) -> tensor<5x1x1xf32> {
  %s = attn.unbroadcast %g like %like : tensor<5x7x300xf32>, tensor<5x1x1xf32> -> tensor<5x1x1xf32>
  return %s : tensor<5x1x1xf32>
}

// Reverse prefix sums along the first and the last dim, inclusive then
// exclusive.
func.func @reverse_prefix_sums(%x: tensor<5x7x3xf32>) -> tensor<5x7x3xf32> {
  %a = attn.prefix_sum %x dim 0 reverse : tensor<5x7x3xf32>
  %b = attn.prefix_sum %a dim 2 exclusive reverse : tensor<5x7x3xf32>
  return %b : tensor<5x7x3xf32>
}

// broadcast of dynamic sizes, f64, over 33 channels (no whole vectors).
func.func @broadcast_dynamic_f64(%x: tensor<?x1xf64>, %like: tensor<?x?x33xf64>) -> tensor<?x?x33xf64> {
  %b = attn.broadcast %x like %like : tensor<?x1xf64>, tensor<?x?x33xf64> -> tensor<?x?x33xf64>
  return %b : tensor<?x?x33xf64>
}

// feature_map_grad of elu+1 in f64 at x - 0.5 (both branches).
func.func @feature_map_grad_f64(%x: tensor<9x33xf64>, %dy: tensor<9x33xf64>) -> tensor<9x33xf64> {
  %half = arith.constant dense<-5.000000e-01> : tensor<1xf64>
  %s = attn.add %x, %half : tensor<9x33xf64>, tensor<1xf64> -> tensor<9x33xf64>
  %o = attn.feature_map_grad elu_plus_one %s, %dy : tensor<9x33xf64>
  return %o : tensor<9x33xf64>
}

// scatter_pixels of 37 channels (a guarded vector tail) with 40 queries
// adding into 2 small levels (many samples per row), pixels 8 u - 2 as in
// Numerics/Inputs/primitives.mlir; and f64.
func.func @scatter_pixels_wide(%dy: tensor<1x40x3x2x4x37xf32>, %u: tensor<1x40x3x2x4x2xf32>) -> tensor<1x18x3x37xf32> {
  %two = arith.constant dense<-2.000000e+00> : tensor<1xf32>
  %s = attn.scale %u by 8.000000e+00 : tensor<1x40x3x2x4x2xf32>
  %p = attn.add %s, %two : tensor<1x40x3x2x4x2xf32>, tensor<1xf32> -> tensor<1x40x3x2x4x2xf32>
  %o = attn.scatter_pixels %dy, %p levels [3x4, 2x3]
      : tensor<1x40x3x2x4x37xf32>, tensor<1x40x3x2x4x2xf32> -> tensor<1x18x3x37xf32>
  return %o : tensor<1x18x3x37xf32>
}

func.func @scatter_pixels_f64(%dy: tensor<2x5x3x2x4x8xf64>, %u: tensor<2x5x3x2x4x2xf64>) -> tensor<2x18x3x8xf64> {
  %two = arith.constant dense<-2.000000e+00> : tensor<1xf64>
  %s = attn.scale %u by 8.000000e+00 : tensor<2x5x3x2x4x2xf64>
  %p = attn.add %s, %two : tensor<2x5x3x2x4x2xf64>, tensor<1xf64> -> tensor<2x5x3x2x4x2xf64>
  %o = attn.scatter_pixels %dy, %p levels [3x4, 2x3]
      : tensor<2x5x3x2x4x8xf64>, tensor<2x5x3x2x4x2xf64> -> tensor<2x18x3x8xf64>
  return %o : tensor<2x18x3x8xf64>
}

// Dynamic batch, queries, points and channels: sizes that disagree at run
// time are the kernel's error.
func.func @scatter_pixels_dynamic(%dy: tensor<?x?x3x2x?x?xf32>, %pixels: tensor<?x?x3x2x?x2xf32>) -> tensor<?x18x3x?xf32> {
  %o = attn.scatter_pixels %dy, %pixels levels [3x4, 2x3]
      : tensor<?x?x3x2x?x?xf32>, tensor<?x?x3x2x?x2xf32> -> tensor<?x18x3x?xf32>
  return %o : tensor<?x18x3x?xf32>
}

// insert_slice of a strided block into a larger dest, f64.
func.func @insert_slice_f64(%src: tensor<2x13xf64>, %dest: tensor<6x40xf64>) -> tensor<6x40xf64> {
  %o = tensor.insert_slice %src into %dest[2, 1] [2, 13] [3, 3]
      : tensor<2x13xf64> into tensor<6x40xf64>
  return %o : tensor<6x40xf64>
}

// Rank 0: a scalar broadcast to a matrix, and a matrix summed to a scalar
// (the schedules have no dim to vectorize).
func.func @broadcast_scalar(%s: tensor<f32>, %like: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %o = attn.broadcast %s like %like : tensor<f32>, tensor<5x7xf32> -> tensor<5x7xf32>
  return %o : tensor<5x7xf32>
}

func.func @unbroadcast_scalar(%g: tensor<5x7xf32>, %like: tensor<f32>) -> tensor<f32> {
  %o = attn.unbroadcast %g like %like : tensor<5x7xf32>, tensor<f32> -> tensor<f32>
  return %o : tensor<f32>
}
