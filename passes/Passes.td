//===- Passes.td - attn passes -----------------------------*- tablegen -*-===//

#ifndef ATTN_PASSES_TD
#define ATTN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnCostPass : Pass<"attn-cost", "mlir::ModuleOp"> {
  let summary = "Report multiply-accumulates, FLOPs and memory of every attn op";
  let description = [{
    An analysis: the IR is left unchanged. Each attn op gets a remark

        cost: macs = M, flops = F, floats = N

    and each function and the module a total. MACs count the
    multiply-accumulates of contractions (matmuls, attention products,
    bilinear sampling); FLOPs are 2 x MACs plus the elementwise arithmetic
    (normalizations, scales, adds, feature maps); floats are the tensor
    elements the op materializes in its textbook form. Memory follows the
    model of Shen et al. (Table 1): function arguments are counted once,
    except those marked `{attn.weight}` (parameters, reported apart);
    elementwise ops work in place when their input has no other user;
    attention ops count their internal scores (n x m) or context (dk x dv)
    plus their output. See docs/cost-model.md.

    Ops with dynamic sizes are not counted, unless `dynamic-size` gives every
    `?` dim of the arguments a size: then each function is costed as it runs
    at that size (its ops' sizes follow from the arguments; an scf.if counts
    the branch that runs).
  }];
  let options = [
    Option<"dynamicSize", "dynamic-size", "int64_t", /*default=*/"-1",
           "Cost each function with every `?` dim of its arguments of this "
           "size (-1: ops with dynamic sizes are not counted)">,
  ];
}

def AttnWidenToF32Pass : Pass<"attn-widen-to-f32", "mlir::ModuleOp"> {
  let summary = "Compute attn ops on bf16 and f16 tensors in f32";
  let description = [{
    bf16 and f16 are storage types (docs/precision.md): products accumulate
    in f32, softmax statistics and normalization sums are f32, and a result
    is rounded to its declared element type once. This pass writes that
    rule into the IR. Each attn op with a bf16 or f16 operand or result
    becomes the same op on f32 tensors: its 16-bit operands are widened with
    `arith.extf` (exact) and each 16-bit result is rounded with
    `arith.truncf` (to nearest even), so

        %o = attn.dot_product %q, %k, %v ... : tensor<..xbf16>, ... -> tensor<..xbf16>

    becomes `arith.extf` of %q, %k and %v, the f32 `attn.dot_product` and
    `arith.truncf` of its result. Later passes (reassociation, gradients,
    lowerings) then build their intermediates in f32, and code generation
    sees 16-bit values only in loads and stores. Ops on f32 and f64 are
    left alone; running it twice changes nothing.

    First in `attn-default-pipeline`; attn-compile and attn-run run it
    before code generation in any case (also with --no-default-pipeline or
    --pass-pipeline), and `--attn-grad` runs it on the functions it
    differentiates.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def AttnReassociatePass : Pass<"attn-reassociate", "mlir::ModuleOp"> {
  let summary = "Compute K^T V first where that is exact and cheaper";
  let description = [{
    Rewrites `attn.dot_product` ops from (phi(Q) phi(K)^T) V, with its n x m
    score matrix, to primitive ops that compute phi(K)^T V (dk x dv) first:

    - no normalization, `count` steps and the scale: a constant factor,
      phi(Q) (phi(K)^T V) * c;
    - one `sum over keys` step (linear attention): numerator and
      denominator both factored, phi(Q)(phi(K)^T V) / (phi(Q)(phi(K)^T 1) + eps);
    - `causal`: the exact chunked prefix-sum form (chunks of `chunk-size`
      positions: causal attention inside a chunk, an exclusive prefix sum of
      per-chunk states phi(K_c)^T V_c across chunks), when n = m is static
      and at least the chunk size; a ragged last chunk (n not a multiple of
      it) is causal attention inside it plus phi(Q_tail) times the sum of
      all earlier chunk states. With dynamic sizes, phi(Q), phi(K) and V
      are padded with zero rows to a run-time multiple of the chunk
      (L = ceil(max(n, m) / C) * C) and the first n rows kept: exact at
      every n and m, since no real query sees a padded key that is not 0;
    - leading (batch, head) dims and cross attention (n != m) as they come.

    These rewrites are exact up to float reassociation. `softmax over keys`
    does not factor; it is left alone unless the user opts in
    (`allow-softmax-approximation`, or the unit attribute
    `attn.allow_approximation` on the op). Then it becomes Shen et al.'s
    softmax efficient attention sigma_row(scale phi(Q)) (sigma_col(phi(K))^T V),
    a different function: the result op carries
    `attn.approximation = "softmax efficient attention (Shen et al.)"` and a
    remark says so. Additive masks, softmax or sum over queries, double
    normalization and counts over dynamic axes block the rewrite.

    The rewrite is cost-driven (passes/CostModel.h): with static sizes it
    happens only when the linear form needs fewer MACs; with dynamic sizes
    both forms are emitted under an `scf.if` on the same MAC formulas
    evaluated on `tensor.dim` values. `force` rewrites whenever it is
    possible (tests). `explain` emits one remark per op saying what was done
    or why not. See docs/reassociation.md.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per attn.dot_product: rewritten or why not">,
    Option<"force", "force", "bool", /*default=*/"false",
           "Rewrite whenever possible, whatever the cost (for tests)">,
    Option<"allowSoftmaxApproximation", "allow-softmax-approximation", "bool",
           /*default=*/"false",
           "Replace softmax-over-keys attention by the softmax efficient "
           "attention approximation (a different function)">,
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"64",
           "Positions per chunk of the causal prefix-sum form (> 0)">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect"
  ];
}

def AttnLowerDeformablePass : Pass<"attn-lower-deformable", "mlir::ModuleOp"> {
  let summary = "Lower multi-scale deformable attention to gathers and sums";
  let description = [{
    Rewrites each `attn.deformable` (value (N, Lv, M, D), locations
    (N, Lq, M, L, P, 2), weights (N, Lq, M, L, P)) into primitive ops that
    keep the batch and head dims:

    1. pixel = loc * size_l + offset, with per-level constants
       (size_l = (W_l, H_l), offset = -0.5; with `align_corners`
       size_l = (W_l - 1, H_l - 1) and no offset);
    2. base = floor(pixel) (`attn.floor`), frac = pixel - base, and the
       fractions fx, fy as `tensor.extract_slice`s;
    3. for each corner (dx, dy) in {0, 1}^2: the corner pixel base + (dx, dy),
       its value vectors from its level (`attn.gather_pixels`, 0 outside the
       level) and its bilinear weight (dx ? fx : 1 - fx) (dy ? fy : 1 - fy);
    4. the sum of weight x value over the corners, times the attention
       weight, summed over points and then levels (`attn.reduce_sum`) and
       reshaped to (N, Lq, M*D).

    Exact: the lowered IR computes the same function as the fused op up to
    float reassociation (except that a non-finite location gives NaN instead
    of 0). Static shapes only: ops with dynamic sizes are left alone. Not in
    `attn-default-pipeline`: the fused op is the fast codegen path; the
    lowering is for inspection, verification and targets without a fused
    kernel. See docs/lowering.md.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::tensor::TensorDialect"
  ];
}

def AttnLowerDoubleNormPass : Pass<"attn-lower-double-norm", "mlir::ModuleOp"> {
  let summary = "Lower attention with normalization lists to primitive steps";
  let description = [{
    Rewrites each `attn.dot_product` whose normalization list has more than
    one step or a step over queries (and each `attn.external`, whose list is
    [softmax over queries, sum over keys eps]) into primitive ops:
    `attn.feature_map` of Q and K (if any), the scores
    `attn.matmul Q, K transpose_rhs`, `attn.scale`, the additive mask
    (`attn.add`), then one `attn.normalize` per step in list order (dim -1 of
    the scores for a step over keys, dim -2 over queries, with its eps), and
    `attn.matmul` with V. Leading (batch, head) dims are kept. With `causal`,
    an `attn.causal_mask` comes before the first step (fill 0) and before
    every softmax (fill -inf), so hidden entries take part in no step; and
    after a sum over queries with eps 0, whose all-hidden columns are 0 / 0.

    Attention with a single step over keys (or none) is left alone: its fused
    kernels never build the n x m scores. Not in `attn-default-pipeline`
    (the fused op is the fast codegen path). Exact. See docs/lowering.md.
  }];
  // tensor.cast when the declared result type is more or less static.
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def AttnGradPass : Pass<"attn-grad", "mlir::ModuleOp"> {
  let summary = "Add the reverse-mode gradient @f_grad of every function @f";
  let description = [{
    For each `func.func @f(args) -> results` adds

        func.func @f_grad(args..., dResults...) -> dArgs...

    whose extra arguments are one cotangent per result (dO, with the
    result's type) and whose results are the gradients of f's arguments in
    order, each with its argument's type. An argument marked
    `{attn.no_grad}` gets no result. `@f_grad` carries
    `attn.gradient_of = @f`; functions that carry it are not differentiated
    again, and an existing `@f_grad` is an error.

    The gradient is attn IR (design §7): the body recomputes f's forward in
    primitive form (`attn.dot_product`, `attn.external`, `attn.efficient`
    and `attn.bilinear_gather` are lowered to primitives as
    --attn-lower-double-norm and --attn-lower-deformable lower them),
    then applies each primitive's adjoint rule in reverse order:
    products give dA = dC B^T and dB = A^T dC (`attn.matmul` with
    transposes), a softmax y gives y (dy - sum(dy y)), `sum` and `count`
    their quotient rules, broadcasting its `attn.unbroadcast`, a reduction
    its `attn.broadcast`, a feature map `attn.feature_map_grad`, a prefix
    sum the reverse (suffix) sum, a causal mask a causal mask of 0, a pixel
    gather `attn.scatter_pixels`, and reshapes and slices their inverses.
    Floors and constants pass no gradient. Softmax attention over keys
    whose mask (if any) needs no gradient (it is computed from constants
    and `{attn.no_grad}` arguments only) is not lowered: its gradient is
    one `attn.attention_grad` with the same mask, which stores no n x m
    matrix; a mask that needs a gradient keeps the primitive form, whose
    dS is that gradient. Attention with no mask, no causal flag and one `none`, `count over keys` or `sum over keys` step
    is not lowered: its gradient is written as attention ops over the
    transposed roles (dQ from dO, V, phi(K); dK from V, dO, phi(Q); dV from
    phi(K), phi(Q), dO), which --attn-reassociate makes linear in n as it
    does the forward. Causal attention with such a step (static n = m of
    at least 64, or dynamic sizes) is first rewritten into the exact
    chunked prefix-sum form of --attn-reassociate (chunks of 64, the last
    one ragged when 64 does not divide a static n; with dynamic sizes the
    positions padded to a run-time multiple of 64), so its gradient runs
    through reverse (suffix) scans of the chunk states and stays linear in
    n. `attn.deformable` is not
    lowered either: its gradient is one `attn.deformable_grad` (static or
    dynamic sizes; with `primitive-deformable`, the adjoints of its
    primitive form instead, static sizes only). Every pass
    and code generator applies to the result; dead forward ops are
    removed. An argument that reaches no result gets zeros. Ops without a
    rule
    (`scf.if` from --attn-reassociate, `attn.bilinear_gather` with dynamic
    sizes) are errors naming the op. See docs/training.md.

    With `save-statistics`, the forward saves what the fused softmax
    backward needs: every `attn.dot_product` of @f that the gradient
    differentiates with `attn.attention_grad` (softmax over keys, with a
    mask that needs no gradient or none)
    gets `with_lse`, and @f returns, after its own results, the row
    log-sum-exp of each, in the order of the ops in @f's body (f32, f64 for
    f64 operands; the attention's result shape without its last dim). @f_grad
    takes them as arguments after the cotangents, in the same order, and
    passes each to its `attn.attention_grad` as `lse`, so the backward does
    not recompute the row max and exp sum. After the lse of an op comes its
    output O, which its `attn.attention_grad` takes as
    `output` (D = rowsum(dO O), and the one-pass backward). The extra
    results of @f and arguments of @f_grad carry the attribute
    `attn.saved_statistics = "lse"` or `"output"`. Each `attn.efficient`
    of the softmax variant on f32 or f64 operands with the same leading
    dims gets `with_context` instead, and @f returns its normalized
    context softmax_positions(K)^T V (dk x dv per problem, `"context"`) and
    the key softmax's log-sum-exp per feature ((..., 1, dk), `"key_lse"`):
    @f_grad multiplies with the context rather than recomputing it, four
    products instead of five, and takes softmax_positions(K) as
    exp(K - lse) (`attn.softmax_from_lse`) without a pass over K for its
    max and sum. Linear attention (`attn.dot_product`, not causal, no
    mask, no `count` step, f32 or f64, static sizes, the same leading dims)
    that --attn-reassociate would rewrite to phi(Q) (phi(K)^T V) is
    computed by @f in that form, and @f returns its context phi(K)^T V
    (`"context"`) and, with a `sum` step, its key sums phi(K)^T 1 as a row
    (..., 1, dk) (`"key_sums"`), both unscaled: @f_grad multiplies with
    them rather than recomputing them, one product over the keys fewer.
    The saved values come in the order of their ops in @f's body. bf16
    and f16 ops are first computed in f32 in @f too (--attn-widen-to-f32's
    rewrite), so they save the same values, in f32: O unrounded.
  }];
  let options = [
    ListOption<"funcs", "funcs", "std::string",
               "Differentiate only these functions (default: every one)">,
    Option<"primitiveDeformable", "primitive-deformable", "bool",
           /*default=*/"false",
           "Differentiate attn.deformable in its primitive form (gathers, "
           "scatter_pixels and the bilinear weights' rules; static sizes "
           "only) instead of one attn.deformable_grad">,
    Option<"saveStatistics", "save-statistics", "bool", /*default=*/"false",
           "Make @f also return the row log-sum-exp of each softmax "
           "attention that @f_grad differentiates with attn.attention_grad "
           "(and the context and key log-sum-exp of each softmax "
           "attn.efficient, the context of each linear attention computed "
           "in its linear form), "
           "and @f_grad take them (after the cotangents) instead of "
           "recomputing them">
  ];
  // attn too: a function without attn ops still gets some (the zeros of an
  // unused argument, the sum of two cotangents).
  let dependentDialects = [
    "mlir::attn::AttnDialect",
    "mlir::arith::ArithDialect",
    "mlir::tensor::TensorDialect"
  ];
}

#endif // ATTN_PASSES_TD
