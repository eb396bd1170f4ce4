// External attention (EANet) cases for codegen (external-*.test): every
// kernel is checked against the reference runtime with attn-run --check.

// n = 257 (not a multiple of any vector width or chunk), d = 20 and
// dv = 24 (not multiples of 16), S = 7 slots.
func.func @eanet_n257(%x: tensor<257x20xf32>, %mk: tensor<7x20xf32>,
                      %mv: tensor<7x24xf32>) -> tensor<257x24xf32> {
  %o = attn.external %x, %mk, %mv
      : tensor<257x20xf32>, tensor<7x20xf32>, tensor<7x24xf32> -> tensor<257x24xf32>
  return %o : tensor<257x24xf32>
}

// Batch 2 sharing rank-2 memories, n = 1000 (several rfactor chunks of the
// column softmax plus a partial one), d = 40, S = 64.
func.func @eanet_n1000(%x: tensor<2x1000x40xf32>, %mk: tensor<64x40xf32>,
                       %mv: tensor<64x40xf32>) -> tensor<2x1000x40xf32> {
  %o = attn.external %x, %mk, %mv eps 1.000000e-06
      : tensor<2x1000x40xf32>, tensor<64x40xf32>, tensor<64x40xf32> -> tensor<2x1000x40xf32>
  return %o : tensor<2x1000x40xf32>
}

// Dynamic n (the schedules without static extents).
func.func @eanet_dynamic(%x: tensor<?x20xf32>, %mk: tensor<7x20xf32>,
                         %mv: tensor<7x20xf32>) -> tensor<?x20xf32> {
  %o = attn.external %x, %mk, %mv
      : tensor<?x20xf32>, tensor<7x20xf32>, tensor<7x20xf32> -> tensor<?x20xf32>
  return %o : tensor<?x20xf32>
}

// EANet's double normalization with a causal mask (attn.external has no
// mask; its canonical form attn.dot_product takes one): n = 257 queries,
// m = 9 keys, causal hides key j from queries i < j.
func.func @double_norm_causal(%q: tensor<257x20xf32>, %k: tensor<9x20xf32>,
                              %v: tensor<9x20xf32>) -> tensor<257x20xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.000000e-09] causal
      : tensor<257x20xf32>, tensor<9x20xf32>, tensor<9x20xf32> -> tensor<257x20xf32>
  return %o : tensor<257x20xf32>
}

// f64, n = 257.
func.func @eanet_n257_f64(%x: tensor<257x20xf64>, %mk: tensor<7x20xf64>,
                          %mv: tensor<7x24xf64>) -> tensor<257x24xf64> {
  %o = attn.external %x, %mk, %mv
      : tensor<257x20xf64>, tensor<7x20xf64>, tensor<7x24xf64> -> tensor<257x24xf64>
  return %o : tensor<257x24xf64>
}

// A last step that is a softmax over keys after a step over queries: its
// row max (lane maxima, then their max) is computed per row block of the
// final product. Batch 2, n = 100, m = 96 keys (six 16-lane groups).
func.func @softmax_both_axes(%q: tensor<2x100x16xf32>, %k: tensor<2x96x16xf32>,
                             %v: tensor<2x96x24xf32>) -> tensor<2x100x24xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, softmax over keys] scale 2.500000e-01
      : tensor<2x100x16xf32>, tensor<2x96x16xf32>, tensor<2x96x24xf32> -> tensor<2x100x24xf32>
  return %o : tensor<2x100x24xf32>
}
