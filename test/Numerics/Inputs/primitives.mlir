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

// The primitives of gradients (--attn-grad). The feature map derivatives
// take x - 0.5, so that attn-run --random inputs in [0, 1) reach both
// branches (x > 0 and x <= 0) too.

func.func @feature_map_grad_identity(%x: tensor<3x8xf32>, %dy: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %half = arith.constant dense<-5.000000e-01> : tensor<1xf32>
  %s = attn.add %x, %half : tensor<3x8xf32>, tensor<1xf32> -> tensor<3x8xf32>
  %o = attn.feature_map_grad identity %s, %dy : tensor<3x8xf32>
  return %o : tensor<3x8xf32>
}

func.func @feature_map_grad_elu(%x: tensor<3x8xf32>, %dy: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %half = arith.constant dense<-5.000000e-01> : tensor<1xf32>
  %s = attn.add %x, %half : tensor<3x8xf32>, tensor<1xf32> -> tensor<3x8xf32>
  %o = attn.feature_map_grad elu_plus_one %s, %dy : tensor<3x8xf32>
  return %o : tensor<3x8xf32>
}

func.func @feature_map_grad_relu(%x: tensor<?x8xf32>, %dy: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %half = arith.constant dense<-5.000000e-01> : tensor<1xf32>
  %s = attn.add %x, %half : tensor<?x8xf32>, tensor<1xf32> -> tensor<?x8xf32>
  %o = attn.feature_map_grad relu %s, %dy : tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// Rank-increasing (a leading dim of 2) and along a size-1 dim.
func.func @broadcast_rank(%x: tensor<3x1xf32>, %like: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %o = attn.broadcast %x like %like : tensor<3x1xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %o : tensor<2x3x4xf32>
}

// A dynamic input dim: with --dynamic-size 1 it stretches to 3, with 3 it
// is kept (and the last dim of `like` stretches the input's 1).
func.func @broadcast_dyn(%x: tensor<?x1xf32>, %like: tensor<2x3x?xf32>) -> tensor<2x3x?xf32> {
  %o = attn.broadcast %x like %like : tensor<?x1xf32>, tensor<2x3x?xf32> -> tensor<2x3x?xf32>
  return %o : tensor<2x3x?xf32>
}

// The adjoint of broadcast_rank: sums over the leading dim and the last.
func.func @unbroadcast_rank(%g: tensor<2x3x4xf32>, %like: tensor<3x1xf32>) -> tensor<3x1xf32> {
  %o = attn.unbroadcast %g like %like : tensor<2x3x4xf32>, tensor<3x1xf32> -> tensor<3x1xf32>
  return %o : tensor<3x1xf32>
}

// Same rank, size-1 dims outermost and innermost.
func.func @unbroadcast_unit(%g: tensor<2x3x4xf32>, %like: tensor<1x3x1xf32>) -> tensor<1x3x1xf32> {
  %o = attn.unbroadcast %g like %like : tensor<2x3x4xf32>, tensor<1x3x1xf32> -> tensor<1x3x1xf32>
  return %o : tensor<1x3x1xf32>
}

// A dynamic `like` dim: with --dynamic-size 1 the sum runs over it too,
// with 3 it is kept.
func.func @unbroadcast_dyn(%g: tensor<2x3x4xf32>, %like: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %o = attn.unbroadcast %g like %like : tensor<2x3x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %o : tensor<?x4xf32>
}

func.func @prefix_sum_reverse(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %o = attn.prefix_sum %x dim 1 reverse : tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

// Exclusive, along the innermost dim.
func.func @prefix_sum_reverse_exclusive(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %o = attn.prefix_sum %x dim 2 exclusive reverse : tensor<2x3x5xf32>
  return %o : tensor<2x3x5xf32>
}

// A scan of dynamic length.
func.func @prefix_sum_reverse_dyn(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %o = attn.prefix_sum %x dim 0 reverse : tensor<?x3xf32>
  return %o : tensor<?x3xf32>
}

// Levels 3x4 (rows 0..11) and 2x3 (rows 12..17).
func.func @scatter_pixels(%dy: tensor<2x3x2x2x4x3xf32>, %pixels: tensor<2x3x2x2x4x2xf32>) -> tensor<2x18x2x3xf32> {
  %o = attn.scatter_pixels %dy, %pixels levels [3x4, 2x3]
      : tensor<2x3x2x2x4x3xf32>, tensor<2x3x2x2x4x2xf32> -> tensor<2x18x2x3xf32>
  return %o : tensor<2x18x2x3xf32>
}

// scatter_pixels at pixels 8 u - 2 for u in [0, 1): attn-run --random
// inputs then fall inside and outside both levels, on every side (8 and 2
// keep the f32 pixels exact where they are >= 0, so the kernel and the
// reference floor them alike).
func.func @scatter_pixels_spread(%dy: tensor<2x3x2x2x4x3xf32>, %u: tensor<2x3x2x2x4x2xf32>) -> tensor<2x18x2x3xf32> {
  %two = arith.constant dense<-2.000000e+00> : tensor<1xf32>
  %s = attn.scale %u by 8.000000e+00 : tensor<2x3x2x2x4x2xf32>
  %pixels = attn.add %s, %two : tensor<2x3x2x2x4x2xf32>, tensor<1xf32> -> tensor<2x3x2x2x4x2xf32>
  %o = attn.scatter_pixels %dy, %pixels levels [3x4, 2x3]
      : tensor<2x3x2x2x4x3xf32>, tensor<2x3x2x2x4x2xf32> -> tensor<2x18x2x3xf32>
  return %o : tensor<2x18x2x3xf32>
}

// The adjoint of tensor.extract_slice: a strided 2x2 block into 3x5.
func.func @insert_slice(%src: tensor<2x2xf32>, %dest: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %o = tensor.insert_slice %src into %dest[1, 0] [2, 2] [1, 3]
      : tensor<2x2xf32> into tensor<3x5xf32>
  return %o : tensor<3x5xf32>
}

// Into a dest with a dynamic dim (its rows are checked at run time).
func.func @insert_slice_dyn(%src: tensor<2x3xf32>, %dest: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %o = tensor.insert_slice %src into %dest[1, 1] [2, 3] [2, 1]
      : tensor<2x3xf32> into tensor<?x4xf32>
  return %o : tensor<?x4xf32>
}

// The building blocks of causal linear attention at a dynamic n
// (--attn-reassociate pads the positions to a run-time multiple of the
// chunk): a run-time high pad and a static low one, with a padding value
// that is not 0 so that it is seen. n rows become ceil(n / 4) * 4.
func.func @pad_dyn(%x: tensor<?x3xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %chunks = arith.ceildivui %n, %c4 : index
  %rows = arith.muli %chunks, %c4 : index
  %high = arith.subi %rows, %n : index
  %value = arith.constant 5.000000e-01 : f32
  %p = tensor.pad %x low[0, 1] high[%high, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %value : f32
  } : tensor<?x3xf32> to tensor<?x4xf32>
  return %p : tensor<?x4xf32>
}

// Zero-padded rows split into a run-time number of chunks of 4
// (expand_shape with a dynamic output_shape entry), each chunk summed.
func.func @chunk_sums_dyn(%x: tensor<?x3xf32>) -> tensor<?x1x3xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %n3 = arith.addi %n, %c3 : index
  %chunks = arith.divui %n3, %c4 : index
  %rows = arith.muli %chunks, %c4 : index
  %high = arith.subi %rows, %n : index
  %zero = arith.constant 0.000000e+00 : f32
  %p = tensor.pad %x low[0, 0] high[%high, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<?x3xf32> to tensor<?x3xf32>
  %e = tensor.expand_shape %p [[0, 1], [2]] output_shape [%chunks, 4, 3]
      : tensor<?x3xf32> into tensor<?x4x3xf32>
  %s = attn.reduce_sum %e dim 1 : tensor<?x4x3xf32> -> tensor<?x1x3xf32>
  return %s : tensor<?x1x3xf32>
}

// A run-time offset and size: rows [n / 2, n), every other column from 1.
func.func @extract_slice_dyn(%x: tensor<?x5xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x5xf32>
  %half = arith.divui %n, %c2 : index
  %rest = arith.subi %n, %half : index
  %s = tensor.extract_slice %x[%half, 1] [%rest, 2] [1, 2]
      : tensor<?x5xf32> to tensor<?x2xf32>
  return %s : tensor<?x2xf32>
}

// A run-time offset and size into a dest of run-time rows: the first
// n - 1 rows of src written from row 1 of dest, every other column.
func.func @insert_slice_sizes_dyn(%src: tensor<?x2xf32>, %dest: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %src, %c0 : tensor<?x2xf32>
  %rows = arith.subi %n, %c1 : index
  %head = tensor.extract_slice %src[0, 0] [%rows, 2] [1, 1]
      : tensor<?x2xf32> to tensor<?x2xf32>
  %o = tensor.insert_slice %head into %dest[%c1, 1] [%rows, 2] [1, 2]
      : tensor<?x2xf32> into tensor<?x4xf32>
  return %o : tensor<?x4xf32>
}
