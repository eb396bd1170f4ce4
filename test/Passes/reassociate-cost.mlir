// RUN: attn-opt %s --attn-cost --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: attn-opt %s --attn-reassociate | attn-opt --attn-cost --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: attn-opt %s --attn-reassociate=force | attn-opt --attn-cost --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCE

// --attn-cost before and after --attn-reassociate shows the saving. The
// non-local block in scaling form (examples/nonlocal_scaling.mlir, d = 64,
// n = 256) costs 2 d^2 n + 1.5 d n^2 = 8388608 MACs and 4 d n + n^2 = 131072
// floats; after the rewrite it costs exactly what Shen et al. (Table 1) give
// for efficient attention: 3 d^2 n = 3145728 MACs and 4 d n + d^2 / 2 = 67584
// floats.

// BEFORE: remark: total of @nonlocal_scaling: macs = 8388608, {{.*}}, floats = 131072
// AFTER: remark: total of @nonlocal_scaling: macs = 3145728, {{.*}}, floats = 67584
func.func @nonlocal_scaling(%x: tensor<256x64xf32>,
                            %wq: tensor<64x32xf32> {attn.weight},
                            %wk: tensor<64x32xf32> {attn.weight},
                            %wv: tensor<64x64xf32> {attn.weight}) -> tensor<256x64xf32> {
  %q = attn.matmul %x, %wq : tensor<256x64xf32>, tensor<64x32xf32> -> tensor<256x32xf32>
  %k = attn.matmul %x, %wk : tensor<256x64xf32>, tensor<64x32xf32> -> tensor<256x32xf32>
  %v = attn.matmul %x, %wv : tensor<256x64xf32>, tensor<64x64xf32> -> tensor<256x64xf32>
  %y = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  %out = attn.add %y, %x : tensor<256x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %out : tensor<256x64xf32>
}

// Linear attention, 4 heads, n = 256, dk = dv = 32: 4 n^2 (dk + dv) =
// 16777216 MACs before; 4 (2 n dk dv + n dk) = 2129920 after.
// BEFORE: remark: total of @linear_attention: macs = 16777216, {{.*}}, floats = 393216
// AFTER: remark: total of @linear_attention: macs = 2129920, {{.*}}, floats = 136320
func.func @linear_attention(%q: tensor<4x256x32xf32>, %k: tensor<4x256x32xf32>,
                            %v: tensor<4x256x32xf32>) -> tensor<4x256x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<4x256x32xf32>, tensor<4x256x32xf32>, tensor<4x256x32xf32> -> tensor<4x256x32xf32>
  return %o : tensor<4x256x32xf32>
}

// Small sizes: the linear form would cost more (8 * 8 * 128 = 8192 MACs
// against 16 * 64 * 64 = 65536), so the pass keeps the quadratic form and the
// cost does not change; `force` rewrites anyway and the cost goes up.
// BEFORE: remark: total of @small: macs = 8192,
// AFTER: remark: total of @small: macs = 8192,
// FORCE: remark: total of @small: macs = 65536,
func.func @small(%q: tensor<8x64xf32>, %k: tensor<8x64xf32>, %v: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  return %o : tensor<8x64xf32>
}

// Causal [count over keys] at n that chunks of 64 do not divide, dk = dv =
// 32: n^2 (dk + dv) MACs before. After, with H = 64 floor(n/64) head rows
// and r = n - H tail rows: H 64 (dk + dv) (causal chunks) + 2 H dk dv (chunk
// states and their prefix sums times Q) + r^2 (dk + dv) (the ragged chunk) +
// r dk dv (the tail times the head's state), linear in n:
//   n = 4100 = 64 * 64 + 4:  1075840000 -> 16777216 + 8388608 + 1024 + 4096
//                                          = 25170944
//   n = 8196 = 128 * 64 + 4: 4299162624 -> 33554432 + 16777216 + 1024 + 4096
//                                          = 50336768
// Doubling n doubles the rewritten cost (the quadratic one quadruples).
// BEFORE: remark: total of @causal_ragged_4100: macs = 1075840000,
// AFTER: remark: total of @causal_ragged_4100: macs = 25170944,
func.func @causal_ragged_4100(%q: tensor<4100x32xf32>, %k: tensor<4100x32xf32>,
                              %v: tensor<4100x32xf32>) -> tensor<4100x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<4100x32xf32>, tensor<4100x32xf32>, tensor<4100x32xf32> -> tensor<4100x32xf32>
  return %o : tensor<4100x32xf32>
}

// BEFORE: remark: total of @causal_ragged_8196: macs = 4299162624,
// AFTER: remark: total of @causal_ragged_8196: macs = 50336768,
func.func @causal_ragged_8196(%q: tensor<8196x32xf32>, %k: tensor<8196x32xf32>,
                              %v: tensor<8196x32xf32>) -> tensor<8196x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<8196x32xf32>, tensor<8196x32xf32>, tensor<8196x32xf32> -> tensor<8196x32xf32>
  return %o : tensor<8196x32xf32>
}
