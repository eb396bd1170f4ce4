// RUN: attn-opt %s --attn-reassociate=force | FileCheck %s
// RUN: attn-opt %s --attn-reassociate | FileCheck %s --check-prefix=CHOICE
// RUN: attn-opt %s --attn-reassociate=explain -verify-diagnostics -o /dev/null
// RUN: for n in 1 63 64 65 200; do attn-run %s --verify-rewrites "attn-reassociate{force=true}" --dynamic-size $n --random 5 || exit 1; done | FileCheck %s --check-prefix=VERIFY

// Causal linear attention at a dynamic n (issue 21, item 3). Key j is
// visible to query i only if j <= i, so positions appended after the last
// real one change no real row: phi(Q), phi(K) and V are padded with zero
// rows (tensor.pad, after the feature map) to L = ceil(max(n, m) / C) * C
// positions, the whole-chunk form runs on them (expand_shape into a
// run-time number of chunks), and the first n rows of the numerator (and of
// the key prefix sums of a `sum` step) are kept (extract_slice of a
// run-time size) before the division. That is exact at every run-time n and
// m, n != m included, and costs L * C * (dk + dv) + 2 * L * dk * dv MACs
// (linear in n) instead of n * m * (dk + dv).

// n = m dynamic, [sum over keys] with scale and elu+1: the whole form.
// CHECK-LABEL: func.func @sum_elu
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<?x16xf32>, %[[K:[a-z0-9_]+]]: tensor<?x16xf32>, %[[V:[a-z0-9_]+]]: tensor<?x8xf32>)
// CHECK-NEXT: %[[PQ:.+]] = attn.feature_map elu_plus_one %[[Q]]
// CHECK-NEXT: %[[SQ:.+]] = attn.scale %[[PQ]] by 5.000000e-01
// CHECK-NEXT: %[[PK:.+]] = attn.feature_map elu_plus_one %[[K]]
// L = ceil(max(n, m) / 64) * 64:
// CHECK: %[[N:.+]] = tensor.dim %[[Q]], %{{.+}} : tensor<?x16xf32>
// CHECK: %[[M:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x16xf32>
// CHECK-NEXT: %[[MAX:.+]] = arith.maxui %[[N]], %[[M]] : index
// CHECK-NEXT: %[[C64:.+]] = arith.constant 64 : index
// CHECK-NEXT: %[[CHUNKS:.+]] = arith.ceildivui %[[MAX]], %[[C64]] : index
// CHECK: %[[L:.+]] = arith.muli %[[CHUNKS]], %{{.+}} : index
// Q padded by L - n rows, K and V by L - m, with zeros:
// CHECK-NEXT: %[[QHIGH:.+]] = arith.subi %[[L]], %[[N]] : index
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[QP:.+]] = tensor.pad %[[SQ]] low[0, 0] high[%[[QHIGH]], 0] {
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK-NEXT: } : tensor<?x16xf32> to tensor<?x16xf32>
// CHECK-NEXT: %[[KHIGH:.+]] = arith.subi %[[L]], %[[M]] : index
// CHECK: %[[KP:.+]] = tensor.pad %[[PK]] low[0, 0] high[%[[KHIGH]], 0] {
// CHECK: %[[VP:.+]] = tensor.pad %[[V]] low[0, 0] high[%{{.+}}, 0] {
// The whole-chunk form on L rows, in a run-time number of chunks:
// CHECK: %[[QC:.+]] = tensor.expand_shape %[[QP]] {{\[\[}}0, 1], [2]] output_shape [%[[CHUNKS]], 64, 16] : tensor<?x16xf32> into tensor<?x64x16xf32>
// CHECK-NEXT: %[[KC:.+]] = tensor.expand_shape %[[KP]] {{\[\[}}0, 1], [2]] output_shape [%[[CHUNKS]], 64, 16]
// CHECK-NEXT: %[[VC:.+]] = tensor.expand_shape %[[VP]] {{\[\[}}0, 1], [2]] output_shape [%[[CHUNKS]], 64, 8]
// CHECK-NEXT: %[[INTRA:.+]] = attn.dot_product %[[QC]], %[[KC]], %[[VC]] norm [] causal : tensor<?x64x16xf32>, tensor<?x64x16xf32>, tensor<?x64x8xf32> -> tensor<?x64x8xf32>
// CHECK-NEXT: %[[STATES:.+]] = attn.matmul %[[KC]], %[[VC]] transpose_lhs : tensor<?x64x16xf32>, tensor<?x64x8xf32> -> tensor<?x16x8xf32>
// CHECK-NEXT: %[[EARLIER:.+]] = attn.prefix_sum %[[STATES]] dim 0 exclusive : tensor<?x16x8xf32>
// CHECK-NEXT: %[[INTER:.+]] = attn.matmul %[[QC]], %[[EARLIER]]
// CHECK-NEXT: %[[SUM:.+]] = attn.add %[[INTRA]], %[[INTER]]
// CHECK-NEXT: %[[WHOLE:.+]] = tensor.collapse_shape %[[SUM]] {{\[\[}}0, 1], [2]] : tensor<?x64x8xf32> into tensor<?x8xf32>
// The first n rows of the numerator and of the key prefix sums:
// CHECK-NEXT: %[[NUM:.+]] = tensor.extract_slice %[[WHOLE]][0, 0] [%[[N]], 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
// CHECK-NEXT: %[[KPREFIX:.+]] = attn.prefix_sum %[[KP]] dim 0 : tensor<?x16xf32>
// CHECK-NEXT: %[[KROWS:.+]] = tensor.extract_slice %[[KPREFIX]][0, 0] [%[[N]], 16] [1, 1]
// CHECK-NEXT: %[[PRODUCTS:.+]] = attn.mul %[[SQ]], %[[KROWS]]
// CHECK-NEXT: %[[DEN:.+]] = attn.reduce_sum %[[PRODUCTS]] dim 1 : tensor<?x16xf32> -> tensor<?x1xf32>
// CHECK-NEXT: %[[O:.+]] = attn.div %[[NUM]], %[[DEN]] eps 1.000000e-03
// CHECK-NEXT: return %[[O]]
// The run-time choice compares the chunked form's MACs,
// L * 64 * (16 + 8) + 2 * L * 16 * 8 = chunks * (98304 + 2 * 8192), with
// the quadratic n * m * 24.
// CHOICE-LABEL: func.func @sum_elu
// CHOICE: %[[N:.+]] = tensor.dim %arg0
// CHOICE: %[[M:.+]] = tensor.dim %arg1
// CHOICE: %[[NM:.+]] = arith.muli %[[N]], %[[M]] : index
// CHOICE: %[[QUAD:.+]] = arith.muli %[[NM]], %{{.+}} : index
// CHOICE: %[[MAX:.+]] = arith.maxui %[[N]], %[[M]] : index
// CHOICE: %[[CHUNKS:.+]] = arith.ceildivui %[[MAX]]
// CHOICE: %[[CHEAPER:.+]] = arith.cmpi ult, %{{.+}}, %[[QUAD]] : index
// CHOICE-NEXT: scf.if %[[CHEAPER]] -> (tensor<?x8xf32>) {
// CHOICE: tensor.pad
// CHOICE: } else {
// CHOICE-NEXT: attn.dot_product %arg0, %arg1, %arg2 norm [sum over keys eps 1.000000e-03] scale 5.000000e-01 feature_map elu_plus_one causal
func.func @sum_elu(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-remark @+1 {{attn-reassociate: dynamic sizes: emitted phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1) with causal prefix sums in chunks of 64 (Q, K and V padded with zero rows to a run-time multiple of 64 positions: linear in n) and the quadratic form, chosen at run time by their MACs}}
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.0e-3] scale 0.5 feature_map elu_plus_one causal
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// n != m: 100 queries (static) and m keys (dynamic). Q is padded by L - 100
// rows and K, V by L - m; the first 100 rows are kept, a static slice. A
// real query i sees the keys j <= i only, whatever m is (j < m when m <= i).
// CHECK-LABEL: func.func @none_static_queries
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<100x16xf32>, %[[K:[a-z0-9_]+]]: tensor<?x16xf32>, %[[V:[a-z0-9_]+]]: tensor<?x8xf32>)
// CHECK-NEXT: %[[SQ:.+]] = attn.scale %[[Q]]
// CHECK: %[[M:.+]] = tensor.dim %[[K]]
// CHECK: %[[MAX:.+]] = arith.maxui %{{.+}}, %[[M]] : index
// CHECK: tensor.pad %[[SQ]] low[0, 0] high[%{{.+}}, 0]
// CHECK: } : tensor<100x16xf32> to tensor<?x16xf32>
// CHECK: tensor.pad %[[K]] low[0, 0] high[%{{.+}}, 0]
// CHECK: tensor.pad %[[V]] low[0, 0] high[%{{.+}}, 0]
// CHECK: %[[WHOLE:.+]] = tensor.collapse_shape
// CHECK-NEXT: %[[O:.+]] = tensor.extract_slice %[[WHOLE]][0, 0] [100, 8] [1, 1] : tensor<?x8xf32> to tensor<100x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @none_static_queries(%q: tensor<100x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x8xf32>) -> tensor<100x8xf32> {
  // expected-remark @+1 {{attn-reassociate: dynamic sizes: emitted Q (K^T V) with causal prefix sums in chunks of 64 (Q, K and V padded with zero rows to a run-time multiple of 64 positions: linear in n) and the quadratic form}}
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 0.25 causal
      : tensor<100x16xf32>, tensor<?x16xf32>, tensor<?x8xf32> -> tensor<100x8xf32>
  return %o : tensor<100x8xf32>
}

// n queries (dynamic, batch 2) and 70 keys: with n > 70 the queries past
// the last key see padded keys, which are zero after the feature map (the
// pad follows it: elu+1 maps 0 to 1), so they add nothing to numerator or
// row sums.
// CHECK-LABEL: func.func @sum_static_keys
// CHECK: %[[PK:.+]] = attn.feature_map elu_plus_one %arg1 : tensor<70x16xf32>
// CHECK: tensor.pad %[[PK]] low[0, 0] high[%{{.+}}, 0]
// CHECK: } : tensor<70x16xf32> to tensor<?x16xf32>
// CHECK: attn.dot_product %{{.+}}, %{{.+}}, %{{.+}} norm [] causal : tensor<2x?x64x16xf32>, tensor<?x64x16xf32>, tensor<?x64x8xf32> -> tensor<2x?x64x8xf32>
// CHECK: attn.div
// CHECK-NEXT: return
func.func @sum_static_keys(%q: tensor<2x?x16xf32>, %k: tensor<70x16xf32>, %v: tensor<70x8xf32>) -> tensor<2x?x8xf32> {
  // expected-remark @+1 {{with causal prefix sums in chunks of 64 (Q, K and V padded}}
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<2x?x16xf32>, tensor<70x16xf32>, tensor<70x8xf32> -> tensor<2x?x8xf32>
  return %o : tensor<2x?x8xf32>
}

// Grouped heads: K and V shared by 4 query heads (head dim 1), so their
// chunk states are built once per batch and broadcast over the heads.
// CHECK-LABEL: func.func @none_grouped_heads
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] output_shape [2, 4, %[[CHUNKS:.+]], 64, 16] : tensor<2x4x?x16xf32> into tensor<2x4x?x64x16xf32>
// CHECK: attn.matmul %{{.+}}, %{{.+}} transpose_lhs : tensor<2x1x?x64x16xf32>, tensor<2x1x?x64x8xf32> -> tensor<2x1x?x16x8xf32>
// CHECK-NEXT: attn.prefix_sum %{{.+}} dim 2 exclusive : tensor<2x1x?x16x8xf32>
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0] [2, 4, %{{.+}}, 8] [1, 1, 1, 1] : tensor<2x4x?x8xf32> to tensor<2x4x?x8xf32>
func.func @none_grouped_heads(%q: tensor<2x4x?x16xf32>, %k: tensor<2x1x?x16xf32>, %v: tensor<2x1x?x8xf32>) -> tensor<2x4x?x8xf32> {
  // expected-remark @+1 {{with causal prefix sums in chunks of 64 (Q, K and V padded}}
  %o = attn.dot_product %q, %k, %v norm [] causal
      : tensor<2x4x?x16xf32>, tensor<2x1x?x16xf32>, tensor<2x1x?x8xf32> -> tensor<2x4x?x8xf32>
  return %o : tensor<2x4x?x8xf32>
}

// Each function, at n (and m) = 1, 63, 64, 65 and 200, before and after on
// the reference runtime: exact (rel. err <= 1e-5, else exit 1).
// VERIFY-COUNT-20: verify-rewrites: @{{[a-z_]+}} max abs err = {{.*}}, max rel err = {{.*}} (exact)
