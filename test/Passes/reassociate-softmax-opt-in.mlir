// RUN: attn-opt %s --attn-reassociate | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-reassociate=allow-softmax-approximation 2>/dev/null | FileCheck %s --check-prefix=OPTIN
// RUN: attn-opt %s --attn-reassociate=allow-softmax-approximation --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: attn-opt %s --attn-reassociate 2>/dev/null | FileCheck %s --check-prefix=ATTR
// RUN: attn-run %s --verify-rewrites "attn-reassociate{allow-softmax-approximation=true}" --random 3 2>/dev/null | FileCheck %s --check-prefix=VERIFY

// Softmax over keys does not factor. Without an opt-in nothing changes; with
// the pass option (every op) or the op attribute attn.allow_approximation
// (that op), the op becomes Shen et al.'s softmax efficient attention
// sigma_row(scale Q) (sigma_col(K)^T V), a different function: the result op
// carries attn.approximation and a remark is emitted. --verify-rewrites
// reports its measured error as approximate (and does not fail on it).

// DEFAULT-LABEL: func.func @softmax
// DEFAULT-NEXT: attn.dot_product
// DEFAULT-NOT: attn.approximation
// OPTIN-LABEL: func.func @softmax
// OPTIN-SAME: (%[[Q:[a-z0-9_]+]]: tensor<256x32xf32>, %[[K:[a-z0-9_]+]]: tensor<256x32xf32>, %[[V:[a-z0-9_]+]]: tensor<256x64xf32>)
// OPTIN-NEXT: %[[SQ:.+]] = attn.scale %[[Q]] by 1.250000e-01 : tensor<256x32xf32>
// OPTIN-NEXT: %[[ROW:.+]] = attn.normalize softmax %[[SQ]] dim 1 : tensor<256x32xf32>
// OPTIN-NEXT: %[[COL:.+]] = attn.normalize softmax %[[K]] dim 0 : tensor<256x32xf32>
// OPTIN-NEXT: %[[CTX:.+]] = attn.matmul %[[COL]], %[[V]] transpose_lhs : tensor<256x32xf32>, tensor<256x64xf32> -> tensor<32x64xf32>
// OPTIN-NEXT: %[[O:.+]] = attn.matmul %[[ROW]], %[[CTX]] {attn.approximation = "softmax efficient attention (Shen et al.)"} : tensor<256x32xf32>, tensor<32x64xf32> -> tensor<256x64xf32>
// OPTIN-NEXT: return %[[O]]
// ATTR-LABEL: func.func @softmax
// ATTR-NEXT: attn.dot_product
// The remark is emitted whether or not `explain` is set: an approximation is
// never silent.
// REMARK: reassociate-softmax-opt-in.mlir:[[@LINE+3]]:8: remark: attn-reassociate: softmax attention replaced by the softmax efficient-attention approximation sigma_row(Q) (sigma_col(K)^T V) (Shen et al.), a different function, because allow-softmax-approximation is set; attn-run --verify-rewrites measures the error (1048576 MACs and 34816 floats instead of 6291456 MACs and 81920 floats)
// VERIFY: verify-rewrites: @softmax max abs err = {{[0-9.e+-]+}}, max rel err = {{[0-9.e+-]+}} (approximate: softmax efficient attention (Shen et al.))
func.func @softmax(%q: tensor<256x32xf32>, %k: tensor<256x32xf32>, %v: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %o : tensor<256x64xf32>
}

// The op attribute opts in this op only, also without the pass option.
// DEFAULT-LABEL: func.func @softmax_op_opt_in
// DEFAULT-NOT: attn.dot_product
// DEFAULT: attn.matmul {{.*}}{attn.approximation = "softmax efficient attention (Shen et al.)"}
// ATTR-LABEL: func.func @softmax_op_opt_in
// ATTR: attn.normalize softmax
// ATTR: attn.matmul {{.*}}{attn.approximation = "softmax efficient attention (Shen et al.)"}
// REMARK: reassociate-softmax-opt-in.mlir:[[@LINE+3]]:8: remark: {{.*}} because the op has attn.allow_approximation
// VERIFY: verify-rewrites: @softmax_op_opt_in {{.*}} (approximate: softmax efficient attention (Shen et al.))
func.func @softmax_op_opt_in(%q: tensor<256x32xf32>, %k: tensor<256x32xf32>, %v: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] {attn.allow_approximation}
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %o : tensor<256x64xf32>
}

// Even with the opt-in, the approximation is cost-driven: at n = m = 16 the
// quadratic form is cheaper, and nothing changes.
// OPTIN-LABEL: func.func @softmax_small
// OPTIN-NEXT: attn.dot_product
// REMARK-NOT: remark
// VERIFY: verify-rewrites: @softmax_small max abs err = 0, max rel err = 0 (unchanged)
func.func @softmax_small(%q: tensor<16x32xf32>, %k: tensor<16x32xf32>, %v: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
  return %o : tensor<16x64xf32>
}
