// Small functions whose gradients test/Codegen/grad-ops.test checks: the
// reference gradient against finite differences (attn-run --check-grad),
// and the gradient kernel, JIT and AOT, against the reference gradient
// (attn-run --grad --check). One function per op and normalization list;
// sizes keep every argument under 256 elements, so the finite differences
// run element by element.

// Standard attention: softmax over keys with scale, an additive mask
// broadcast over the heads, causal.
func.func @softmax_mask_causal(%q: tensor<2x6x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>, %mask: tensor<6x6xf32>) -> tensor<2x6x3xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys] scale 5.000000e-01 causal
      : tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<6x6xf32> -> tensor<2x6x3xf32>
  return %o : tensor<2x6x3xf32>
}

// Cross attention (n != m) with K and V shared by the heads (rank 2).
func.func @softmax_cross_shared_kv(%q: tensor<2x5x4xf32>, %k: tensor<7x4xf32>, %v: tensor<7x3xf32>) -> tensor<2x5x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01
      : tensor<2x5x4xf32>, tensor<7x4xf32>, tensor<7x3xf32> -> tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
}

// Causal with n != m (key j visible to query i iff j <= i).
func.func @softmax_causal_rect(%q: tensor<7x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x3xf32>) -> tensor<7x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] causal
      : tensor<7x4xf32>, tensor<5x4xf32>, tensor<5x3xf32> -> tensor<7x3xf32>
  return %o : tensor<7x3xf32>
}

// Non-local scaling form, causal.
func.func @count_causal(%q: tensor<6x4xf32>, %k: tensor<6x4xf32>, %v: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x3xf32> -> tensor<6x3xf32>
  return %o : tensor<6x3xf32>
}

// Linear attention, elu+1 on signed inputs (both branches of its derivative).
func.func @sum_elu_signed(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %half = arith.constant dense<-5.000000e-01> : tensor<1xf32>
  %qs = attn.add %q, %half : tensor<8x4xf32>, tensor<1xf32> -> tensor<8x4xf32>
  %ks = attn.add %k, %half : tensor<8x4xf32>, tensor<1xf32> -> tensor<8x4xf32>
  %o = attn.dot_product %qs, %ks, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
  return %o : tensor<8x3xf32>
}

// Causal linear attention with relu and eps.
func.func @sum_relu_causal(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-01] feature_map relu causal
      : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
  return %o : tensor<8x3xf32>
}

// Causal linear attention at n = 128: the chunked form (2 chunks of 64),
// differentiated through reverse scans; its arguments are over 256
// elements, so 32 sampled elements each.
func.func @sum_elu_causal_chunked(%q: tensor<2x128x4xf32>, %k: tensor<2x128x4xf32>, %v: tensor<2x128x3xf32>) -> tensor<2x128x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-01] feature_map elu_plus_one causal
      : tensor<2x128x4xf32>, tensor<2x128x4xf32>, tensor<2x128x3xf32> -> tensor<2x128x3xf32>
  return %o : tensor<2x128x3xf32>
}

// Causal linear attention at n that 64 does not divide: a whole chunk and a
// ragged last chunk (6 and 3 rows), differentiated through the head's
// reverse scans, the tail's causal scores and the slices' adjoints. Every
// argument is under 256 elements, so each element is checked; eps = 0 for
// the sum (elu+1 keeps the row sums > 0, and no row is padded).
func.func @count_causal_ragged(%q: tensor<70x3xf32>, %k: tensor<70x3xf32>, %v: tensor<70x2xf32>) -> tensor<70x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] scale 5.000000e-01 causal
      : tensor<70x3xf32>, tensor<70x3xf32>, tensor<70x2xf32> -> tensor<70x2xf32>
  return %o : tensor<70x2xf32>
}

func.func @sum_elu_causal_ragged(%q: tensor<67x3xf32>, %k: tensor<67x3xf32>, %v: tensor<67x3xf32>) -> tensor<67x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<67x3xf32>, tensor<67x3xf32>, tensor<67x3xf32> -> tensor<67x3xf32>
  return %o : tensor<67x3xf32>
}

// n = 200 = 3 * 64 + 8 with two heads and no normalization step; 32 sampled
// elements per argument.
func.func @none_causal_ragged_heads(%q: tensor<2x200x4xf32>, %k: tensor<2x200x4xf32>, %v: tensor<2x200x3xf32>) -> tensor<2x200x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 2.500000e-01 causal
      : tensor<2x200x4xf32>, tensor<2x200x4xf32>, tensor<2x200x3xf32> -> tensor<2x200x3xf32>
  return %o : tensor<2x200x3xf32>
}

// Causal with no normalization step (hidden entries still contribute 0).
func.func @none_causal(%q: tensor<7x4xf32>, %k: tensor<7x4xf32>, %v: tensor<7x3xf32>) -> tensor<7x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 5.000000e-01 causal
      : tensor<7x4xf32>, tensor<7x4xf32>, tensor<7x3xf32> -> tensor<7x3xf32>
  return %o : tensor<7x3xf32>
}

// EANet's double normalization written as a list, causal.
func.func @double_norm_causal(%q: tensor<6x4xf32>, %k: tensor<6x4xf32>, %v: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.000000e-09] causal
      : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x3xf32> -> tensor<6x3xf32>
  return %o : tensor<6x3xf32>
}

// A step over queries alone, and no normalization at all.
func.func @count_queries_then_none(%q: tensor<6x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x3xf32>) -> tensor<6x3xf32> {
  %a = attn.dot_product %q, %k, %v norm [count over queries] scale 5.000000e-01
      : tensor<6x4xf32>, tensor<5x4xf32>, tensor<5x3xf32> -> tensor<6x3xf32>
  %b = attn.dot_product %q, %k, %v norm [none over keys]
      : tensor<6x4xf32>, tensor<5x4xf32>, tensor<5x3xf32> -> tensor<6x3xf32>
  %o = attn.add %a, %b : tensor<6x3xf32>, tensor<6x3xf32> -> tensor<6x3xf32>
  return %o : tensor<6x3xf32>
}

func.func @external(%x: tensor<8x4xf32>, %mk: tensor<5x4xf32>, %mv: tensor<5x3xf32>) -> tensor<8x3xf32> {
  %o = attn.external %x, %mk, %mv : tensor<8x4xf32>, tensor<5x4xf32>, tensor<5x3xf32> -> tensor<8x3xf32>
  return %o : tensor<8x3xf32>
}

func.func @efficient_softmax(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32> -> tensor<2x8x3xf32>
  return %o : tensor<2x8x3xf32>
}

func.func @efficient_scaling(%q: tensor<8x4xf32>, %k: tensor<6x4xf32>, %v: tensor<6x3xf32>) -> tensor<8x3xf32> {
  %o = attn.efficient %q, %k, %v variant scaling
      : tensor<8x4xf32>, tensor<6x4xf32>, tensor<6x3xf32> -> tensor<8x3xf32>
  return %o : tensor<8x3xf32>
}

// Deformable DETR sampling, two levels; the locations span [-0.25, 1.25)
// so corners fall outside the levels too.
func.func @deformable(%value: tensor<1x18x2x3xf32>, %loc: tensor<1x3x2x2x2x2xf32>, %w: tensor<1x3x2x2x2xf32>) -> tensor<1x3x6xf32> {
  %s = arith.constant dense<1.500000e+00> : tensor<1xf32>
  %o0 = arith.constant dense<-2.500000e-01> : tensor<1xf32>
  %ls = attn.mul %loc, %s : tensor<1x3x2x2x2x2xf32>, tensor<1xf32> -> tensor<1x3x2x2x2x2xf32>
  %l = attn.add %ls, %o0 : tensor<1x3x2x2x2x2xf32>, tensor<1xf32> -> tensor<1x3x2x2x2x2xf32>
  %o = attn.deformable %value, %l, %w levels [3x4, 2x3]
      : tensor<1x18x2x3xf32>, tensor<1x3x2x2x2x2xf32>, tensor<1x3x2x2x2xf32> -> tensor<1x3x6xf32>
  return %o : tensor<1x3x6xf32>
}

// DAT-style sampling (align_corners) through the primitive bilinear_gather.
func.func @bilinear_align_corners(%value: tensor<1x18x2x3xf32>, %loc: tensor<1x3x2x2x2x2xf32>) -> tensor<1x3x2x2x2x3xf32> {
  %o = attn.bilinear_gather %value, %loc levels [3x4, 2x3] align_corners
      : tensor<1x18x2x3xf32>, tensor<1x3x2x2x2x2xf32> -> tensor<1x3x2x2x2x3xf32>
  return %o : tensor<1x3x2x2x2x3xf32>
}

// Every transposition of attn.matmul, with a broadcast batch.
func.func @matmuls(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<5x4xf32>) -> tensor<2x3x5xf32> {
  %ab = attn.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x5xf32> -> tensor<2x4x5xf32>
  %abc = attn.matmul %ab, %c transpose_lhs transpose_rhs : tensor<2x4x5xf32>, tensor<5x4xf32> -> tensor<2x5x5xf32>
  %t = attn.matmul %abc, %b transpose_rhs : tensor<2x5x5xf32>, tensor<3x5xf32> -> tensor<2x5x3xf32>
  %u = attn.matmul %t, %abc transpose_lhs : tensor<2x5x3xf32>, tensor<2x5x5xf32> -> tensor<2x3x5xf32>
  return %u : tensor<2x3x5xf32>
}

// Normalizations along every kind of dim, scale, masks, scans.
func.func @normalizations(%x: tensor<2x5x6xf32>) -> (tensor<2x5x6xf32>, tensor<2x5x6xf32>) {
  %m = attn.causal_mask %x : tensor<2x5x6xf32>
  %s = attn.normalize softmax %m dim 2 : tensor<2x5x6xf32>
  %c = attn.normalize count %s dim 1 : tensor<2x5x6xf32>
  %n = attn.normalize sum %x dim 1 eps 1.000000e-01 : tensor<2x5x6xf32>
  %z = attn.causal_mask %n fill 0.000000e+00 : tensor<2x5x6xf32>
  %p = attn.prefix_sum %z dim 2 : tensor<2x5x6xf32>
  %e = attn.prefix_sum %p dim 1 exclusive : tensor<2x5x6xf32>
  %r = attn.scale %e by -1.500000e+00 : tensor<2x5x6xf32>
  return %c, %r : tensor<2x5x6xf32>, tensor<2x5x6xf32>
}

// A softmax's weights from a given log-sum-exp, along a middle dim; the
// lse is shifted up by 2 so that x - lse <= 0, as a slice's log-sum-exp
// keeps it (random inputs in [0, 1)).
func.func @softmax_from_lse(%x: tensor<2x5x6xf32>, %lse: tensor<2x1x6xf32>) -> tensor<2x5x6xf32> {
  %two = arith.constant dense<2.000000e+00> : tensor<1xf32>
  %l = attn.add %lse, %two : tensor<2x1x6xf32>, tensor<1xf32> -> tensor<2x1x6xf32>
  %w = attn.softmax_from_lse %x, %l dim 1 : tensor<2x5x6xf32>, tensor<2x1x6xf32>
  return %w : tensor<2x5x6xf32>
}

// Broadcasting elementwise ops, reductions, a floor (no gradient), a
// reshape.
func.func @elementwise(%a: tensor<2x4x3xf32>, %b: tensor<4x1xf32>, %c: tensor<3xf32>) -> tensor<2x12xf32> {
  %m = attn.mul %a, %b : tensor<2x4x3xf32>, tensor<4x1xf32> -> tensor<2x4x3xf32>
  %d = attn.div %m, %c eps 2.500000e-01 : tensor<2x4x3xf32>, tensor<3xf32> -> tensor<2x4x3xf32>
  %r = attn.reduce_sum %d dim 1 : tensor<2x4x3xf32> -> tensor<2x1x3xf32>
  %f = attn.floor %a : tensor<2x4x3xf32>
  %s = attn.add %d, %r : tensor<2x4x3xf32>, tensor<2x1x3xf32> -> tensor<2x4x3xf32>
  %t = attn.add %s, %f : tensor<2x4x3xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  %o = tensor.collapse_shape %t [[0], [1, 2]] : tensor<2x4x3xf32> into tensor<2x12xf32>
  return %o : tensor<2x12xf32>
}

// Dynamic sizes: the gradient kernel checks them at run time.
func.func @dynamic_softmax(%q: tensor<2x?x4xf32>, %k: tensor<2x?x4xf32>, %v: tensor<2x?x3xf32>) -> tensor<2x?x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01
      : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32> -> tensor<2x?x3xf32>
  return %o : tensor<2x?x3xf32>
}

// The building blocks of the dynamic causal form and their adjoints: rows
// padded with zeros to a run-time multiple of 4 (the pad's adjoint: the
// first n rows), split into a run-time number of chunks (expand_shape; its
// adjoint a collapse, the collapse's an expand whose chunk count divides
// at run time), an exclusive scan over the chunks, the first n rows kept
// (extract_slice of a run-time size; adjoint: insert into zeros) and all
// but the first written over y's first rows (insert_slice of a run-time
// size; y keeps its last row's gradient).
func.func @chunked_rows_dynamic(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %chunks = arith.ceildivui %n, %c4 : index
  %rows = arith.muli %chunks, %c4 : index
  %high = arith.subi %rows, %n : index
  %zero = arith.constant 0.000000e+00 : f32
  %p = tensor.pad %x low[0, 0] high[%high, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<?x3xf32> to tensor<?x3xf32>
  %e = tensor.expand_shape %p [[0, 1], [2]] output_shape [%chunks, 4, 3]
      : tensor<?x3xf32> into tensor<?x4x3xf32>
  %s = attn.prefix_sum %e dim 0 exclusive : tensor<?x4x3xf32>
  %m = attn.mul %s, %e : tensor<?x4x3xf32>, tensor<?x4x3xf32> -> tensor<?x4x3xf32>
  %c = tensor.collapse_shape %m [[0, 1], [2]] : tensor<?x4x3xf32> into tensor<?x3xf32>
  %r = tensor.extract_slice %c[0, 0] [%n, 3] [1, 1] : tensor<?x3xf32> to tensor<?x3xf32>
  %rest = arith.subi %n, %c1 : index
  %tail = tensor.extract_slice %r[1, 0] [%rest, 3] [1, 1] : tensor<?x3xf32> to tensor<?x3xf32>
  %o = tensor.insert_slice %tail into %y[0, 0] [%rest, 3] [1, 1] : tensor<?x3xf32> into tensor<?x3xf32>
  return %o : tensor<?x3xf32>
}

// K and V shared by 3 query heads, with a feature map: the gradients of K
// are summed over the heads before the map's derivative (linear and fused
// softmax forms).
func.func @sum_elu_grouped(%q: tensor<2x3x5x4xf32>, %k: tensor<2x1x6x4xf32>, %v: tensor<2x1x6x3xf32>) -> tensor<2x3x5x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<2x3x5x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x3xf32> -> tensor<2x3x5x3xf32>
  return %o : tensor<2x3x5x3xf32>
}

func.func @softmax_elu_grouped(%q: tensor<2x3x5x4xf32>, %k: tensor<2x1x6x4xf32>, %v: tensor<2x1x6x3xf32>) -> tensor<2x3x5x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 5.000000e-01 feature_map elu_plus_one causal
      : tensor<2x3x5x4xf32>, tensor<2x1x6x4xf32>, tensor<2x1x6x3xf32> -> tensor<2x3x5x3xf32>
  return %o : tensor<2x3x5x3xf32>
}
