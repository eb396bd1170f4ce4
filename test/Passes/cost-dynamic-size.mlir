// RUN: attn-opt %s --attn-cost -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: attn-opt %s --attn-cost=dynamic-size=8 -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIZE8
// RUN: attn-opt %s --attn-reassociate --attn-cost=dynamic-size=4 -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHOICE4
// RUN: attn-opt %s --attn-reassociate --attn-cost=dynamic-size=300 -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHOICE300
// RUN: not attn-opt %s --attn-cost=dynamic-size=-2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=INVALID

// --attn-cost=dynamic-size=N costs each function as it runs when every `?`
// dim of its arguments is N: the sizes of its ops follow from the
// arguments (the size arithmetic folded, the ops' shape rules applied in
// order), and an scf.if counts only the branch its condition picks. Without
// it, ops with dynamic sizes are not counted.

// UNKNOWN: remark: cost: unknown, the op has dynamic sizes
// UNKNOWN: remark: total of @linear: macs = 0, {{.*}}; 4 ops or arguments with dynamic sizes not counted

// n = m = 8, dk = 16, dv = 32: the quadratic op, 8 * 8 * (16 + 32) MACs,
// 2 x MACs + 2 * 64 (sum) + 256 (relu of Q and K) FLOPs.
// SIZE8: remark: cost: macs = 3072, flops = 6528, floats = 320
// SIZE8: remark: total of @linear at dynamic size 8: macs = 3072,

// After --attn-reassociate both forms are in the IR under an scf.if on their
// MACs. At n = 4 the quadratic branch runs (4 * 4 * 48 = 768 MACs), at
// n = 300 the linear one (300 * 16 * 32 * 2 + 300 * 16 = 312000), and only
// that branch is counted.
// CHOICE4: remark: cost: macs = 768,
// CHOICE4-NOT: remark: cost:
// CHOICE4: remark: total of @linear at dynamic size 4: macs = 768,
// CHOICE300: remark: total of @linear at dynamic size 300: macs = 312000,

// INVALID: error: attn-cost: dynamic-size must be >= 0 (or -1: none), got -2
func.func @linear(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map relu
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x32xf32> -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}
