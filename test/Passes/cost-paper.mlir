// RUN: attn-opt %s --attn-cost -split-input-file --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | grep "remark: total of" | FileCheck %s

// The resource figures of Shen et al., "Efficient Attention: Attention with
// Linear Complexities" (WACV 2021), Table 1 and Section 3.3, reproduced by
// --attn-cost on the non-local block and the efficient-attention module at
// the paper's sizes: d = 64 channels (dk = d/2 for queries and keys, dv = d),
// on a 256x256 map (n = 65536) and a 64x64 map (n = 4096).
//
// The model counts as memory X (argument), Q, K, V (projections), the n x n
// scores or the dk x dv context, and the output; normalizations and the
// residual add work in place; the projection weights ({attn.weight}) are
// reported apart.
//
//                    MACs                   floats
//   non-local        2 d^2 n + 1.5 d n^2    4 d n + n^2
//   efficient        3 d^2 n                4 d n + d^2 / 2
//
// FLOPs: Table 1 gives (4 d^2 + d) n + 3 d n^2 for non-local, which is
// 2 x MACs + d n (the residual add). --attn-cost also counts the
// normalization's elementwise work, so its flops are 2 x MACs + E with
// E = d n (residual) + normalization: 4 n^2 for [softmax over keys] (max,
// exp, sum, divide per score), 4 x 2 (n dk) for the two softmaxes of
// efficient attention (over Q and K, n x 32 each).
//
// Ratios (comments only; the numbers themselves are checked):
//   n = 65536: MACs 412853731328 / 805306368 = 512.67 (513x computation),
//              floats 4311744512 / 16779264 = 256.97 (257x memory)
//   n = 4096:  MACs 1644167168 / 50331648 = 32.67 (33x),
//              floats 17825792 / 1050624 = 16.97 (17x)

// Non-local block, 256x256 map: n = 65536, d = 64.
//   MACs   = 2*64^2*65536 + 1.5*64*65536^2
//          = 536870912 + 412316860416 = 412853731328
//   floats = 4*64*65536 + 65536^2 = 16777216 + 4294967296 = 4311744512
//            (x 4 bytes = 17246978048 = 17.25 GB)
//   E      = 4*65536^2 + 64*65536 = 17179869184 + 4194304 = 17184063488
//   flops  = 2*412853731328 + 17184063488 = 842891526144
//            (paper: (4*64^2 + 64)*65536 + 3*64*65536^2 = 825711656960
//             = 2 x MACs + d n)
//   weights = 64*32 + 64*32 + 64*64 = 8192
// CHECK-LABEL: remark: total of @nonlocal_n65536:
// CHECK-SAME: macs = 412853731328, flops = 842891526144 (2 x macs + 17184063488 elementwise), floats = 4311744512 (17.25 GB), weights = 8192 floats (not in floats)
func.func @nonlocal_n65536(%x: tensor<65536x64xf32>,
                           %wq: tensor<64x32xf32> {attn.weight},
                           %wk: tensor<64x32xf32> {attn.weight},
                           %wv: tensor<64x64xf32> {attn.weight}) -> tensor<65536x64xf32> {
  %q = attn.matmul %x, %wq : tensor<65536x64xf32>, tensor<64x32xf32> -> tensor<65536x32xf32>
  %k = attn.matmul %x, %wk : tensor<65536x64xf32>, tensor<64x32xf32> -> tensor<65536x32xf32>
  %v = attn.matmul %x, %wv : tensor<65536x64xf32>, tensor<64x64xf32> -> tensor<65536x64xf32>
  %y = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<65536x32xf32>, tensor<65536x32xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  %out = attn.add %y, %x : tensor<65536x64xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  return %out : tensor<65536x64xf32>
}

// -----

// Efficient attention (softmax variant), 256x256 map: n = 65536, d = 64.
//   MACs   = 3*64^2*65536 = 805306368
//            (projections 536870912 + context (dk dv)(n + n) = 268435456)
//   floats = 4*64*65536 + 64^2/2 = 16777216 + 2048 = 16779264
//            (x 4 bytes = 67117056 = 0.07 GB)
//   E      = 4*(65536*32 + 65536*32) + 64*65536 = 16777216 + 4194304 = 20971520
//   flops  = 2*805306368 + 20971520 = 1631584256
// CHECK-LABEL: remark: total of @efficient_n65536:
// CHECK-SAME: macs = 805306368, flops = 1631584256 (2 x macs + 20971520 elementwise), floats = 16779264 (0.07 GB), weights = 8192 floats (not in floats)
func.func @efficient_n65536(%x: tensor<65536x64xf32>,
                            %wq: tensor<64x32xf32> {attn.weight},
                            %wk: tensor<64x32xf32> {attn.weight},
                            %wv: tensor<64x64xf32> {attn.weight}) -> tensor<65536x64xf32> {
  %q = attn.matmul %x, %wq : tensor<65536x64xf32>, tensor<64x32xf32> -> tensor<65536x32xf32>
  %k = attn.matmul %x, %wk : tensor<65536x64xf32>, tensor<64x32xf32> -> tensor<65536x32xf32>
  %v = attn.matmul %x, %wv : tensor<65536x64xf32>, tensor<64x64xf32> -> tensor<65536x64xf32>
  %e = attn.efficient %q, %k, %v variant softmax
      : tensor<65536x32xf32>, tensor<65536x32xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  %out = attn.add %e, %x : tensor<65536x64xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  return %out : tensor<65536x64xf32>
}

// -----

// Non-local block, 64x64 map: n = 4096, d = 64.
//   MACs   = 2*64^2*4096 + 1.5*64*4096^2 = 33554432 + 1610612736 = 1644167168
//   floats = 4*64*4096 + 4096^2 = 1048576 + 16777216 = 17825792 (0.07 GB)
//   E      = 4*4096^2 + 64*4096 = 67108864 + 262144 = 67371008
//   flops  = 2*1644167168 + 67371008 = 3355705344
//            (paper: (4*64^2 + 64)*4096 + 3*64*4096^2 = 3288596480)
// CHECK-LABEL: remark: total of @nonlocal_n4096:
// CHECK-SAME: macs = 1644167168, flops = 3355705344 (2 x macs + 67371008 elementwise), floats = 17825792 (0.07 GB), weights = 8192 floats (not in floats)
func.func @nonlocal_n4096(%x: tensor<4096x64xf32>,
                          %wq: tensor<64x32xf32> {attn.weight},
                          %wk: tensor<64x32xf32> {attn.weight},
                          %wv: tensor<64x64xf32> {attn.weight}) -> tensor<4096x64xf32> {
  %q = attn.matmul %x, %wq : tensor<4096x64xf32>, tensor<64x32xf32> -> tensor<4096x32xf32>
  %k = attn.matmul %x, %wk : tensor<4096x64xf32>, tensor<64x32xf32> -> tensor<4096x32xf32>
  %v = attn.matmul %x, %wv : tensor<4096x64xf32>, tensor<64x64xf32> -> tensor<4096x64xf32>
  %y = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<4096x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  %out = attn.add %y, %x : tensor<4096x64xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %out : tensor<4096x64xf32>
}

// -----

// Efficient attention (softmax variant), 64x64 map: n = 4096, d = 64.
//   MACs   = 3*64^2*4096 = 50331648
//   floats = 4*64*4096 + 64^2/2 = 1048576 + 2048 = 1050624 (0.00 GB)
//   E      = 4*(4096*32 + 4096*32) + 64*4096 = 1048576 + 262144 = 1310720
//   flops  = 2*50331648 + 1310720 = 101974016
// CHECK-LABEL: remark: total of @efficient_n4096:
// CHECK-SAME: macs = 50331648, flops = 101974016 (2 x macs + 1310720 elementwise), floats = 1050624 (0.00 GB), weights = 8192 floats (not in floats)
func.func @efficient_n4096(%x: tensor<4096x64xf32>,
                           %wq: tensor<64x32xf32> {attn.weight},
                           %wk: tensor<64x32xf32> {attn.weight},
                           %wv: tensor<64x64xf32> {attn.weight}) -> tensor<4096x64xf32> {
  %q = attn.matmul %x, %wq : tensor<4096x64xf32>, tensor<64x32xf32> -> tensor<4096x32xf32>
  %k = attn.matmul %x, %wk : tensor<4096x64xf32>, tensor<64x32xf32> -> tensor<4096x32xf32>
  %v = attn.matmul %x, %wv : tensor<4096x64xf32>, tensor<64x64xf32> -> tensor<4096x64xf32>
  %e = attn.efficient %q, %k, %v variant softmax
      : tensor<4096x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  %out = attn.add %e, %x : tensor<4096x64xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %out : tensor<4096x64xf32>
}

// -----

// The scaling forms have the same MACs and floats (the normalization is
// elementwise work only): non-local [count over keys], E = n^2 + d n; and
// efficient scaling, E = (n dk + n dk) + d n.
//   non-local, n = 65536: E = 65536^2 + 64*65536 = 4299161600,
//     flops = 825707462656 + 4299161600 = 830006624256
// CHECK-LABEL: remark: total of @nonlocal_scaling_n65536:
// CHECK-SAME: macs = 412853731328, flops = 830006624256 (2 x macs + 4299161600 elementwise), floats = 4311744512 (17.25 GB)
func.func @nonlocal_scaling_n65536(%x: tensor<65536x64xf32>,
                                   %wq: tensor<64x32xf32> {attn.weight},
                                   %wk: tensor<64x32xf32> {attn.weight},
                                   %wv: tensor<64x64xf32> {attn.weight}) -> tensor<65536x64xf32> {
  %q = attn.matmul %x, %wq : tensor<65536x64xf32>, tensor<64x32xf32> -> tensor<65536x32xf32>
  %k = attn.matmul %x, %wk : tensor<65536x64xf32>, tensor<64x32xf32> -> tensor<65536x32xf32>
  %v = attn.matmul %x, %wv : tensor<65536x64xf32>, tensor<64x64xf32> -> tensor<65536x64xf32>
  %y = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<65536x32xf32>, tensor<65536x32xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  %out = attn.add %y, %x : tensor<65536x64xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  return %out : tensor<65536x64xf32>
}

// -----

//   efficient scaling, n = 65536: E = 2*65536*32 + 64*65536 = 8388608,
//     flops = 1610612736 + 8388608 = 1619001344
// CHECK-LABEL: remark: total of @efficient_scaling_n65536:
// CHECK-SAME: macs = 805306368, flops = 1619001344 (2 x macs + 8388608 elementwise), floats = 16779264 (0.07 GB)
func.func @efficient_scaling_n65536(%x: tensor<65536x64xf32>,
                                    %wq: tensor<64x32xf32> {attn.weight},
                                    %wk: tensor<64x32xf32> {attn.weight},
                                    %wv: tensor<64x64xf32> {attn.weight}) -> tensor<65536x64xf32> {
  %q = attn.matmul %x, %wq : tensor<65536x64xf32>, tensor<64x32xf32> -> tensor<65536x32xf32>
  %k = attn.matmul %x, %wk : tensor<65536x64xf32>, tensor<64x32xf32> -> tensor<65536x32xf32>
  %v = attn.matmul %x, %wv : tensor<65536x64xf32>, tensor<64x64xf32> -> tensor<65536x64xf32>
  %e = attn.efficient %q, %k, %v variant scaling
      : tensor<65536x32xf32>, tensor<65536x32xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  %out = attn.add %e, %x : tensor<65536x64xf32>, tensor<65536x64xf32> -> tensor<65536x64xf32>
  return %out : tensor<65536x64xf32>
}
