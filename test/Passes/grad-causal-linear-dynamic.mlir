// RUN: attn-opt %s --attn-grad | FileCheck %s
// RUN: attn-opt %s --attn-grad --attn-reassociate --canonicalize --cse | FileCheck %s --check-prefix=REASSOCIATED
// RUN: for n in 256 1024 4096; do attn-opt %s --attn-grad --attn-reassociate --canonicalize --cse --attn-cost=dynamic-size=$n -o /dev/null 2>&1 || exit 1; done | FileCheck %s --check-prefix=COST
//
// Causal linear attention at a dynamic n differentiates through reverse
// chunked scans too (issue 21, item 3): --attn-grad first rewrites it into
// the padded chunked form of --attn-reassociate (docs/reassociation.md:
// phi(Q), phi(K), V padded with zero rows to L = ceil(n / 64) * 64, whole
// chunks of 64, the first n rows kept), valid at every run-time n, so it
// needs no run-time choice. The adjoint of the row slice writes dO into L
// rows of zeros, the chunk reshapes' adjoints reshape back (a run-time
// chunk count), the prefix sums' are suffix sums, and each pad's adjoint
// takes the first n rows back. No n x n (? x ?) tensor is built.

// CHECK-LABEL: func.func @causal_linear_grad
// CHECK-NOT: ?x?x
// The forward: zero rows appended, chunks of 64, the 64 x 64 causal scores
// of each chunk, the chunk states' exclusive prefix sum.
// CHECK: %[[QP:.+]] = tensor.pad %{{.+}} low[0, 0, 0] high[0, %{{.+}}, 0]
// CHECK: %[[QC:.+]] = tensor.expand_shape %[[QP]] {{\[\[}}0], [1, 2], [3]] output_shape [4, %[[CHUNKS:.+]], 64, 32] : tensor<4x?x32xf32> into tensor<4x?x64x32xf32>
// CHECK: attn.causal_mask %{{.+}} fill 0.000000e+00 : tensor<4x?x64x64xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 1 exclusive : tensor<4x?x32x32xf32>
// CHECK: %[[NUM:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [4, %[[N:.+]], 32] [1, 1, 1] : tensor<4x?x32xf32> to tensor<4x?x32xf32>
// The backward: dO into L rows of zeros, the suffix sums of the same scans.
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [4, %[[N]], 32] [1, 1, 1] : tensor<4x?x32xf32> into tensor<4x?x32xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 1 reverse : tensor<4x?x32xf32>
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0], [1, 2], [3]] output_shape [4, %{{.+}}, 64, 32] : tensor<4x?x32xf32> into tensor<4x?x64x32xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 1 exclusive reverse : tensor<4x?x32x32xf32>
// CHECK: attn.causal_mask %{{.+}} fill 0.000000e+00 : tensor<4x?x64x64xf32>
// The pads' adjoints: the first n rows of each padded operand's adjoint.
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0] [4, %{{.+}}, 32] [1, 1, 1] : tensor<4x?x32xf32> to tensor<4x?x32xf32>
// CHECK-NOT: ?x?x
// CHECK: return

// After --attn-reassociate the gradient has no run-time choice (no
// attention op is left in it) and still no n x n tensor.
// REASSOCIATED-LABEL: func.func @causal_linear_grad
// REASSOCIATED-NOT: scf.if
// REASSOCIATED-NOT: ?x?x
// REASSOCIATED: return

// Its cost at n = 256, 1024 and 4096 (attn-cost=dynamic-size=N): MACs and
// floats grow 4x for each 4x of n. The quadratic gradient this replaces
// (before issue 21, item 3) needed 41943040, 671088640 and 10737418240 MACs
// (docs/training.md).
// COST: remark: total of @causal_linear_grad at dynamic size 256: macs = 18874368, flops = {{[0-9]+}} (2 x macs + {{[0-9]+}} elementwise), floats = 1394688
// COST: remark: total of @causal_linear_grad at dynamic size 1024: macs = 75497472, flops = {{[0-9]+}} (2 x macs + {{[0-9]+}} elementwise), floats = 5578752
// COST: remark: total of @causal_linear_grad at dynamic size 4096: macs = 301989888, flops = {{[0-9]+}} (2 x macs + {{[0-9]+}} elementwise), floats = 22315008
func.func @causal_linear(%q: tensor<4x?x32xf32>, %k: tensor<4x?x32xf32>, %v: tensor<4x?x32xf32>) -> tensor<4x?x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<4x?x32xf32>, tensor<4x?x32xf32>, tensor<4x?x32xf32> -> tensor<4x?x32xf32>
  return %o : tensor<4x?x32xf32>
}
