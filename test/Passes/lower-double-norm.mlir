// RUN: attn-opt %s -split-input-file --attn-lower-double-norm | FileCheck %s

// Attention whose normalization is a list (or a step over queries) lowered
// to primitives: scores, then one attn.normalize per step in list order
// (keys: the last dim of the scores; queries: the one before), then the
// product with V. Batch and head dims stay leading dims.

// External attention (EANet): softmax over the n positions (dim 0), then the
// sum over the S slots (dim 1) with eps 1e-9.
// CHECK-LABEL: func.func @external
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<256x64xf32>, %[[MK:[a-z0-9_]+]]: tensor<16x64xf32>, %[[MV:[a-z0-9_]+]]: tensor<16x32xf32>)
// CHECK-NEXT: %[[A:.+]] = attn.matmul %[[X]], %[[MK]] transpose_rhs : tensor<256x64xf32>, tensor<16x64xf32> -> tensor<256x16xf32>
// CHECK-NEXT: %[[COLS:.+]] = attn.normalize softmax %[[A]] dim 0 : tensor<256x16xf32>
// CHECK-NEXT: %[[ROWS:.+]] = attn.normalize sum %[[COLS]] dim 1 eps 1.000000e-09 : tensor<256x16xf32>
// CHECK-NEXT: %[[O:.+]] = attn.matmul %[[ROWS]], %[[MV]] : tensor<256x16xf32>, tensor<16x32xf32> -> tensor<256x32xf32>
// CHECK-NEXT: return %[[O]]
func.func @external(%x: tensor<256x64xf32>, %mk: tensor<16x64xf32>, %mv: tensor<16x32xf32>) -> tensor<256x32xf32> {
  %o = attn.external %x, %mk, %mv
      : tensor<256x64xf32>, tensor<16x64xf32>, tensor<16x32xf32> -> tensor<256x32xf32>
  return %o : tensor<256x32xf32>
}

// -----

// The canonical form of external attention, with batch and heads: the
// normalized dims are 2 (queries) and 3 (keys) of the 2x4x128x16 scores.
// CHECK-LABEL: func.func @double_norm_batch_heads
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x4x128x32xf32>, %[[K:[a-z0-9_]+]]: tensor<16x32xf32>, %[[V:[a-z0-9_]+]]: tensor<16x32xf32>)
// CHECK-NEXT: %[[S:.+]] = attn.matmul %[[Q]], %[[K]] transpose_rhs : tensor<2x4x128x32xf32>, tensor<16x32xf32> -> tensor<2x4x128x16xf32>
// CHECK-NEXT: %[[P1:.+]] = attn.normalize softmax %[[S]] dim 2 : tensor<2x4x128x16xf32>
// CHECK-NEXT: %[[P2:.+]] = attn.normalize sum %[[P1]] dim 3 eps 1.000000e-09 : tensor<2x4x128x16xf32>
// CHECK-NEXT: %[[O:.+]] = attn.matmul %[[P2]], %[[V]] : tensor<2x4x128x16xf32>, tensor<16x32xf32> -> tensor<2x4x128x32xf32>
// CHECK-NEXT: return %[[O]]
func.func @double_norm_batch_heads(%q: tensor<2x4x128x32xf32>, %k: tensor<16x32xf32>, %v: tensor<16x32xf32>) -> tensor<2x4x128x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.000000e-09]
      : tensor<2x4x128x32xf32>, tensor<16x32xf32>, tensor<16x32xf32> -> tensor<2x4x128x32xf32>
  return %o : tensor<2x4x128x32xf32>
}

// -----

// Everything at once: feature map on Q and K, scale, additive mask, causal.
// The causal mask hides entries before the first step and again (with
// -inf) before each softmax after it, so hidden entries take part in no
// step; the list order is kept, `none` steps are dropped.
// CHECK-LABEL: func.func @everything
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<3x9x5xf32>, %[[K:[a-z0-9_]+]]: tensor<3x9x5xf32>, %[[V:[a-z0-9_]+]]: tensor<3x9x4xf32>, %[[MASK:[a-z0-9_]+]]: tensor<9x9xf32>)
// CHECK-NEXT: %[[FQ:.+]] = attn.feature_map relu %[[Q]] : tensor<3x9x5xf32>
// CHECK-NEXT: %[[FK:.+]] = attn.feature_map relu %[[K]] : tensor<3x9x5xf32>
// CHECK-NEXT: %[[S:.+]] = attn.matmul %[[FQ]], %[[FK]] transpose_rhs : tensor<3x9x5xf32>, tensor<3x9x5xf32> -> tensor<3x9x9xf32>
// CHECK-NEXT: %[[SCALED:.+]] = attn.scale %[[S]] by 5.000000e-01 : tensor<3x9x9xf32>
// CHECK-NEXT: %[[MASKED:.+]] = attn.add %[[SCALED]], %[[MASK]] : tensor<3x9x9xf32>, tensor<9x9xf32> -> tensor<3x9x9xf32>
// CHECK-NEXT: %[[HIDDEN0:.+]] = attn.causal_mask %[[MASKED]] fill 0.000000e+00 : tensor<3x9x9xf32>
// CHECK-NEXT: %[[STEP0:.+]] = attn.normalize sum %[[HIDDEN0]] dim 1 eps 5.000000e-01 : tensor<3x9x9xf32>
// CHECK-NEXT: %[[HIDDEN1:.+]] = attn.causal_mask %[[STEP0]] : tensor<3x9x9xf32>
// CHECK-NEXT: %[[STEP1:.+]] = attn.normalize softmax %[[HIDDEN1]] dim 2 : tensor<3x9x9xf32>
// CHECK-NEXT: %[[STEP2:.+]] = attn.normalize count %[[STEP1]] dim 1 : tensor<3x9x9xf32>
// CHECK-NEXT: %[[O:.+]] = attn.matmul %[[STEP2]], %[[V]] : tensor<3x9x9xf32>, tensor<3x9x4xf32> -> tensor<3x9x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @everything(%q: tensor<3x9x5xf32>, %k: tensor<3x9x5xf32>, %v: tensor<3x9x4xf32>, %mask: tensor<9x9xf32>) -> tensor<3x9x4xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask
      norm [sum over queries eps 5.000000e-01, none over keys, softmax over keys, count over queries]
      scale 0.5 feature_map relu causal
      : tensor<3x9x5xf32>, tensor<3x9x5xf32>, tensor<3x9x4xf32>, tensor<9x9xf32> -> tensor<3x9x4xf32>
  return %o : tensor<3x9x4xf32>
}

// -----

// A causal list that starts with a softmax: the first mask is -inf.
// CHECK-LABEL: func.func @causal_softmax_first
// CHECK: %[[S:.+]] = attn.matmul
// CHECK-NEXT: %[[HIDDEN:.+]] = attn.causal_mask %[[S]] : tensor<6x8xf32>
// CHECK-NEXT: %[[P1:.+]] = attn.normalize softmax %[[HIDDEN]] dim 0 : tensor<6x8xf32>
// CHECK-NEXT: %[[P2:.+]] = attn.normalize sum %[[P1]] dim 1 : tensor<6x8xf32>
// CHECK-NEXT: attn.matmul %[[P2]], %{{.+}} : tensor<6x8xf32>, tensor<8x3xf32> -> tensor<6x3xf32>
func.func @causal_softmax_first(%q: tensor<6x5xf32>, %k: tensor<8x5xf32>, %v: tensor<8x3xf32>) -> tensor<6x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys] causal
      : tensor<6x5xf32>, tensor<8x5xf32>, tensor<8x3xf32> -> tensor<6x3xf32>
  return %o : tensor<6x3xf32>
}

// -----

// A causal sum over queries with eps 0 divides the columns of keys after
// every query by 0: they are masked again before the product.
// CHECK-LABEL: func.func @causal_sum_over_queries
// CHECK: %[[SUM:.+]] = attn.normalize sum %{{.+}} dim 0 : tensor<4x7xf32>
// CHECK-NEXT: %[[HIDDEN:.+]] = attn.causal_mask %[[SUM]] fill 0.000000e+00 : tensor<4x7xf32>
// CHECK-NEXT: attn.matmul %[[HIDDEN]], %{{.+}} : tensor<4x7xf32>, tensor<7x3xf32> -> tensor<4x3xf32>
func.func @causal_sum_over_queries(%q: tensor<4x5xf32>, %k: tensor<7x5xf32>, %v: tensor<7x3xf32>) -> tensor<4x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys, sum over queries] causal
      : tensor<4x5xf32>, tensor<7x5xf32>, tensor<7x3xf32> -> tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}

// -----

// One step over queries is lowered too (only a list or a queries step
// needs the whole score matrix); dynamic sizes are fine.
// CHECK-LABEL: func.func @single_step_over_queries_dynamic
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<?x5xf32>, %[[K:[a-z0-9_]+]]: tensor<?x5xf32>, %[[V:[a-z0-9_]+]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[S:.+]] = attn.matmul %[[Q]], %[[K]] transpose_rhs : tensor<?x5xf32>, tensor<?x5xf32> -> tensor<?x?xf32>
// CHECK-NEXT: %[[P:.+]] = attn.normalize softmax %[[S]] dim 0 : tensor<?x?xf32>
// CHECK-NEXT: %[[O:.+]] = attn.matmul %[[P]], %[[V]] : tensor<?x?xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @single_step_over_queries_dynamic(%q: tensor<?x5xf32>, %k: tensor<?x5xf32>, %v: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries]
      : tensor<?x5xf32>, tensor<?x5xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %o : tensor<?x4xf32>
}

// -----

// A result type less static than inferred keeps its type through a cast.
// CHECK-LABEL: func.func @declared_dynamic_result
// CHECK: %[[O:.+]] = attn.matmul %{{.+}}, %{{.+}} : tensor<7x7xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
// CHECK-NEXT: %[[CAST:.+]] = tensor.cast %[[O]] : tensor<7x4xf32> to tensor<?x4xf32>
// CHECK-NEXT: return %[[CAST]]
func.func @declared_dynamic_result(%q: tensor<7x5xf32>, %k: tensor<7x5xf32>, %v: tensor<7x4xf32>) -> tensor<?x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, count over keys]
      : tensor<7x5xf32>, tensor<7x5xf32>, tensor<7x4xf32> -> tensor<?x4xf32>
  return %o : tensor<?x4xf32>
}

// -----

// One step over keys (or only `none` steps) is left alone: the fused
// attention kernels never build the scores for it.
// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT: attn.dot_product %{{.+}} norm [softmax over keys] causal :
// CHECK-NEXT: attn.dot_product %{{.+}} norm [sum over keys eps 1.000000e-03] :
// CHECK-NEXT: attn.dot_product %{{.+}} norm [none over queries, count over keys] :
// CHECK-NEXT: attn.dot_product %{{.+}} norm [] :
// CHECK-NEXT: return
func.func @left_alone(%q: tensor<7x5xf32>, %k: tensor<7x5xf32>, %v: tensor<7x4xf32>) {
  %0 = attn.dot_product %q, %k, %v norm [softmax over keys] causal : tensor<7x5xf32>, tensor<7x5xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
  %1 = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-03] : tensor<7x5xf32>, tensor<7x5xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
  %2 = attn.dot_product %q, %k, %v norm [none over queries, count over keys] : tensor<7x5xf32>, tensor<7x5xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
  %3 = attn.dot_product %q, %k, %v norm [] : tensor<7x5xf32>, tensor<7x5xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
  return
}
