//===- AttnOps.td - Operations of the attn dialect ---------*- tablegen -*-===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "dialect/AttnAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// f32 first; f64 so the reference runtime can run specs in double; bf16 and
// f16 as storage types with f32 arithmetic (docs/precision.md): products
// accumulate in f32, softmax statistics and normalization sums are f32, and
// a result is rounded to its declared element type once.
def Attn_FloatTensor : RankedTensorOf<[F32, F64, BF16, F16]>;

// Ops whose result shape is computed by a rule in AttnShapes.h. The rule runs
// in inferReturnTypes (builders and verification share it); results may be
// more or less static than inferred, but never contradict it. Operands share
// one element type, which is the inferred result's; a result may declare
// another of bf16, f16 and f32 when the operands have one of them (bf16 Q/K/V
// with an f32 result), never f64 with another type.
class Attn_InferredShapeOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, traits # [Pure,
        DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let extraClassDeclaration = [{
    static bool isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                        ::mlir::TypeRange actual);
  }];
}

// Elementwise-like ops: one tensor in, the same type out.
class Attn_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, traits # [Pure, SameOperandsAndResultType]> {
  let results = (outs Attn_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// High-level attention ops
//===----------------------------------------------------------------------===//

def Attn_DotProductAttentionOp : Attn_InferredShapeOp<"dot_product"> {
  let summary = "dot-product attention O = rho(scale * phi(Q) phi(K)^T + mask) V";
  let description = [{
    Query (..., n, dk), key (..., m, dk), value (..., m, dv) and an optional
    additive mask (..., n, m); leading dims broadcast (numpy rules, so a
    rank-2 key/value is shared by every batch and head). Result (..., n, dv).

    `norm` is the ordered list of normalization steps rho applied to the
    scores; `scale` multiplies the scores (default 1); `feature_map` phi is
    applied to Q and K first (default identity); `causal` hides key j from
    query i unless j <= i. Hidden entries take part in no step (a softmax
    over only hidden entries gives 0), nor in the product with V: a NaN or
    inf in a hidden key or value does not reach the row; `count` divides by
    the full axis length. A -inf mask entry makes its score -inf whatever
    Q and K give (NaN and inf included): weight 0 in a softmax, though its
    value row still enters as 0 * v (NaN for a NaN or infinite v). Softmax
    steps follow the dialect's rule for NaN and Inf.

    `with_lse` adds a second result, the row log-sum-exp of the scores
    S = scale * phi(Q) phi(K)^T + mask, lse_i = log sum_j exp(S_ij) over the
    visible keys (computed as max + log(sum exp(S - max)) from the softmax's
    own row statistics), so that P = exp(S - lse). It needs the norm list to
    be one softmax over keys (besides `none` steps). Its shape is the
    result's without the last dim, (..., n); its element type is the
    accumulator's: f64 for f64 operands, else f32 (docs/precision.md). A
    row with no visible key gets +inf, so exp(S - lse) is 0 there as its
    output row is. `--attn-grad=save-statistics=1` makes the forward return
    it and the gradient's `attn.attention_grad` take it.

    The discardable unit attribute `attn.allow_bf16_products` opts a
    softmax over keys on bf16 Q, K and V into the rounding PyTorch's bf16
    kernels do: the weights exp(S - max) are rounded to bf16 (and summed as
    rounded) before the product with V, which then runs on bf16
    dot-product instructions. An exception to the dialect's rounding rule
    that adds at most u (max V - min V) / (1 - u) per output, u = 2^-8
    (docs/precision.md); code generation uses it where products pair up
    (CPUs whose `vdpbf16ps` outruns the f32 FMA, Zen 4 and Zen 5;
    `precision.bf16Pairs`), m is static and even, the op has no `with_lse`, and
    `attn-compile --remark-schedule` says where and why not. The reference
    runtime computes the unrounded weights. On the linear forms
    (`--attn-reassociate`) the attribute goes to their `attn.matmul`s:
    phi(Q), phi(K) and the context phi(K)^T V may be rounded, which adds at
    most ((1 + u)^3 - 1) max |V| per output with phi > 0 (the
    denominators phi(Q) phi(K)^T 1 are not rounded).

    ```mlir
    // Standard scaled dot-product attention.
    %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125
        : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>
        -> tensor<8x128x64xf32>
    // Non-local block, scaling form: rho(Y) = Y / m.
    %o = attn.dot_product %q, %k, %v norm [count over keys] : ...
    // Linear attention with the elu+1 feature map.
    %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one : ...
    // EANet double normalization.
    %o = attn.dot_product %x, %mk, %mv
        norm [softmax over queries, sum over keys eps 1.000000e-09] : ...
    // Softmax attention that also returns its row log-sum-exp.
    %o, %lse = attn.dot_product %q, %k, %v norm [softmax over keys]
        scale 0.125 with_lse
        : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>
        -> tensor<8x128x64xf32>, tensor<8x128xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$query,
    Attn_FloatTensor:$key,
    Attn_FloatTensor:$value,
    Optional<Attn_FloatTensor>:$mask,
    Attn_NormListAttr:$norm,
    DefaultValuedAttr<F64Attr, "1.0">:$scale,
    DefaultValuedAttr<Attn_FeatureMap, "::mlir::attn::FeatureMap::identity">:$feature_map,
    UnitAttr:$causal,
    UnitAttr:$with_lse
  );
  let results = (outs
    Attn_FloatTensor:$result,
    Optional<Attn_FloatTensor>:$lse
  );
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? `norm` custom<NormList>($norm)
    (`scale` $scale^)? (`feature_map` $feature_map^)? (`causal` $causal^)?
    (`with_lse` $with_lse^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    (`,` type($mask)^)? `->` type($result) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Attn_EfficientAttentionOp : Attn_InferredShapeOp<"efficient"> {
  let summary = "efficient attention E = rho_q(Q) (rho_k(K)^T V) (Shen et al.)";
  let description = [{
    Query (..., n, dk), key (..., m, dk), value (..., m, dv) -> (..., n, dv);
    leading dims broadcast. `softmax`: rho_q is a softmax of each query over
    its dk features and rho_k a softmax of each key feature over the m
    positions (an approximation of softmax attention, a different function).
    `scaling`: rho_q = rho_k = x / sqrt(n), n the number of queries (equal to
    non-local attention with `count over keys` when n = m). Both softmaxes
    follow the dialect's rule for NaN and Inf: a NaN or +inf in a key
    feature's positions makes that feature's context row NaN, so every
    output; an all -inf one gives it 0.

    The discardable unit attribute `attn.allow_bf16_products` opts the
    softmax variant on bf16 Q, K and V into the rounding PyTorch's bf16
    matmuls do: both softmaxes' weights (summed as rounded) and the
    normalized context are rounded to bf16 before their products, which
    then run on bf16 dot-product instructions. It adds at most
    (2 (max V - min V) + max |V|) u / (1 - u) per output, u = 2^-8
    (docs/precision.md); code generation uses it where products pair up
    (Zen 4 and Zen 5 targets; `precision.bf16Pairs`), dk is static and even and
    the positions run in chunks, and `attn-compile --remark-schedule` says
    where and why not. The reference runtime computes the unrounded values.

    `with_context` (softmax variant, f32 or f64, query, key and value with
    the same leading dims) adds two results, what the gradient needs
    besides the inputs (`--attn-grad=save-statistics=1` saves them,
    docs/training.md): the normalized context softmax_positions(K)^T V,
    shape (..., dk, dv), and the key softmax's log-sum-exp per feature,
    lse_d = log sum_j exp(K[j, d]) over the m positions, shape (..., 1, dk)
    (+inf for an all -inf feature, NaN for one with a NaN or +inf, so
    `attn.softmax_from_lse` gives the softmax's weights from it, 0 and NaN
    included): dk x (dv + 1) values against the n x dk weights an autograd
    tape keeps.

    ```mlir
    %e = attn.efficient %q, %k, %v variant softmax
        : tensor<4096x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32>
        -> tensor<4096x64xf32>
    %e2, %c, %lse = attn.efficient %q, %k, %v variant softmax with_context
        : tensor<4096x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32>
        -> tensor<4096x64xf32>, tensor<32x64xf32>, tensor<1x32xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$query,
    Attn_FloatTensor:$key,
    Attn_FloatTensor:$value,
    Attn_EfficientVariant:$variant,
    UnitAttr:$with_context
  );
  let results = (outs
    Attn_FloatTensor:$result,
    Variadic<Attn_FloatTensor>:$saved
  );
  let assemblyFormat = [{
    $query `,` $key `,` $value `variant` $variant
    (`with_context` $with_context^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($result)
    (`,` type($saved)^)?
  }];
  let extraClassDeclaration = [{
    static bool isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                        ::mlir::TypeRange actual);
    /// `with_context`'s results (null without it).
    ::mlir::Value getNormalizedContext() {
      return getSaved().empty() ? ::mlir::Value() : getSaved()[0];
    }
    ::mlir::Value getKeyLse() {
      return getSaved().size() < 2 ? ::mlir::Value() : getSaved()[1];
    }
  }];
}

def Attn_ExternalAttentionOp : Attn_InferredShapeOp<"external"> {
  let summary = "external attention with two learned memories (EANet)";
  let description = [{
    Input (..., n, d), memory_key (..., S, d), memory_value (..., S, dv)
    -> (..., n, dv). A = X Mk^T; A <- softmax over the n positions (per slot);
    A <- A / (eps + sum over the S slots) (per position); O = A Mv.
    `eps` defaults to 1e-9 as in EANet. Canonicalizes to `attn.dot_product`
    with `norm [softmax over queries, sum over keys eps ...]`.

    ```mlir
    %o = attn.external %x, %mk, %mv
        : tensor<4096x512xf32>, tensor<64x512xf32>, tensor<64x512xf32>
        -> tensor<4096x512xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$input,
    Attn_FloatTensor:$memory_key,
    Attn_FloatTensor:$memory_value,
    DefaultValuedAttr<F64Attr, "1.0e-9">:$eps
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $memory_key `,` $memory_value (`eps` $eps^)? attr-dict
    `:` type($input) `,` type($memory_key) `,` type($memory_value)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Attn_DeformableAttentionOp : Attn_InferredShapeOp<"deformable"> {
  let summary = "multi-scale deformable attention (Deformable DETR)";
  let description = [{
    value (N, sum H_l W_l, M, D) with levels stored row-major (h, w) one
    after another; sampling_locations (N, Lq, M, L, P, 2) as (x, y) in
    [0, 1]; attention_weights (N, Lq, M, L, P); result (N, Lq, M*D),
    head-major. Each sample is bilinear at pixel (x W - 0.5, y H - 0.5)
    (`align_corners`: (x (W-1), y (H-1))); corners outside a level, and
    samples at a location that is not finite, contribute exactly 0 (not 0
    times a value or weight: a NaN or inf there does not reach the result).
    `levels` lists H x W of each level.

    ```mlir
    %o = attn.deformable %value, %loc, %w levels [32x32, 16x16]
        : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>,
          tensor<1x100x8x2x4xf32> -> tensor<1x100x256xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$value,
    Attn_FloatTensor:$sampling_locations,
    Attn_FloatTensor:$attention_weights,
    DenseI64ArrayAttr:$spatial_shapes,
    UnitAttr:$align_corners
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $value `,` $sampling_locations `,` $attention_weights
    `levels` custom<Levels>($spatial_shapes) (`align_corners` $align_corners^)?
    attr-dict `:` type($value) `,` type($sampling_locations) `,`
    type($attention_weights) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Primitive ops: each maps to one Halide Func
//===----------------------------------------------------------------------===//

def Attn_MatmulOp : Attn_InferredShapeOp<"matmul"> {
  let summary = "batched matrix product over the last two dims";
  let description = [{
    lhs (..., M, K) (`transpose_lhs`: (..., K, M)), rhs (..., K, N)
    (`transpose_rhs`: (..., N, K)) -> (..., M, N); leading dims broadcast.

    Products of two stored bf16 operands are exact in f32, so on targets
    whose `vdpbf16ps` outruns the f32 FMA (Zen 4, Zen 5; `precision.bf16Pairs`) they reduce
    K in pairs (`vdpbf16ps`) when K is static and even and N > 1. The
    discardable unit attribute `attn.allow_bf16_products` lets the product
    round computed (f32) operands to bf16 first, as PyTorch's bf16 matmuls
    do: it adds at most ((1 + u)^2 - 1) sum_k |lhs| |rhs| per output,
    u = 2^-8 (docs/precision.md). `--attn-reassociate` puts it on the
    products of an `attn.dot_product` that has it. `attn-compile
    --remark-schedule` says where it is used and why not. The reference
    runtime computes the unrounded product.

    ```mlir
    %s = attn.matmul %q, %k transpose_rhs
        : tensor<2x128x64xf32>, tensor<2x128x64xf32> -> tensor<2x128x128xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$lhs,
    Attn_FloatTensor:$rhs,
    UnitAttr:$transpose_lhs,
    UnitAttr:$transpose_rhs
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasCanonicalizer = 1;
}

def Attn_NormalizeOp : Attn_UnaryOp<"normalize"> {
  let summary = "normalize every slice along one dim (softmax, sum, count)";
  let description = [{
    `softmax`: exp(x - max) / sum(exp(x - max)), where a slice with a NaN
    or +inf is all NaN, -inf entries weigh 0 and an all -inf slice gives 0;
    `sum`: x / (eps + sum(x)); `count`: x / (length of the dim); `none`: x
    (folds away). `dim` is a non-negative dim index.

    ```mlir
    %p = attn.normalize softmax %s dim 1 : tensor<128x128xf32>
    %a = attn.normalize sum %s dim 1 eps 1.000000e-09 : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins
    Attn_NormKind:$kind,
    Attn_FloatTensor:$input,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
    DefaultValuedAttr<F64Attr, "0.0">:$eps
  );
  let assemblyFormat = [{
    $kind $input `dim` $dim (`eps` $eps^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Attn_ScaleOp : Attn_UnaryOp<"scale"> {
  let summary = "multiply every element by a constant";
  let description = [{
    ```mlir
    %s2 = attn.scale %s by 1.250000e-01 : tensor<128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, F64Attr:$factor);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($input)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Attn_FeatureMapOp : Attn_UnaryOp<"feature_map"> {
  let summary = "elementwise feature map (elu+1, relu, identity)";
  let description = [{
    elu+1: x + 1 if x > 0, else exp(x); relu: max(x, 0). A NaN stays NaN.

    ```mlir
    %phi = attn.feature_map elu_plus_one %q : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Attn_FeatureMap:$kind, Attn_FloatTensor:$input);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Attn_PrefixSumOp : Attn_UnaryOp<"prefix_sum"> {
  let summary = "inclusive or exclusive prefix sum along one dim";
  let description = [{
    out[.., i, ..] = sum over j <= i of in[.., j, ..] along `dim`; with
    `exclusive`, the sum over j < i (so out[.., 0, ..] = 0). With `reverse`
    the scan runs from the end: the sum over j >= i (j > i when exclusive),
    a suffix sum, which is the adjoint of the forward scan (`--attn-grad`).
    The scan behind exact causal linear attention: `--attn-reassociate` sums
    per-chunk states with the exclusive form.

    ```mlir
    %c = attn.prefix_sum %kv dim 0 : tensor<128x32x64xf32>
    %e = attn.prefix_sum %states dim 1 exclusive : tensor<4x8x32x64xf32>
    %s = attn.prefix_sum %d dim 0 reverse : tensor<128x32x64xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$input,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
    UnitAttr:$exclusive,
    UnitAttr:$reverse
  );
  let assemblyFormat = [{
    $input `dim` $dim (`exclusive` $exclusive^)? (`reverse` $reverse^)?
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Attn_CausalMaskOp : Attn_UnaryOp<"causal_mask"> {
  let summary = "replace the scores of keys after their query by a fill value";
  let description = [{
    In the last two dims (i, j), entries with j > i become `fill`: -inf (the
    default) before a softmax, 0 before sum or count.

    ```mlir
    %m = attn.causal_mask %s : tensor<128x128xf32>
    %z = attn.causal_mask %s fill 0.000000e+00 : tensor<128x128xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$input,
    DefaultValuedAttr<F64Attr, "-std::numeric_limits<double>::infinity()">:$fill
  );
  let assemblyFormat = "$input (`fill` $fill^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Attn_AddOp : Attn_InferredShapeOp<"add"> {
  let summary = "elementwise sum with numpy broadcasting";
  let description = [{
    ```mlir
    %y = attn.add %o, %x : tensor<1024x64xf32>, tensor<1024x64xf32> -> tensor<1024x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$lhs, Attn_FloatTensor:$rhs);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Attn_MulOp : Attn_InferredShapeOp<"mul"> {
  let summary = "elementwise product with numpy broadcasting";
  let description = [{
    out = lhs * rhs elementwise; shapes broadcast as in `attn.add`
    (right-aligned, a dim of 1 or a missing dim stretches).

    ```mlir
    %p = attn.mul %q, %ksum : tensor<128x32xf32>, tensor<1x32xf32> -> tensor<128x32xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$lhs, Attn_FloatTensor:$rhs);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Attn_DivOp : Attn_InferredShapeOp<"div"> {
  let summary = "elementwise lhs / (rhs + eps) with numpy broadcasting";
  let description = [{
    out = lhs / (rhs + eps) elementwise; shapes broadcast as in `attn.add`.
    `eps` is finite and >= 0 (default 0, then printed not at all). The
    denominator of linear attention: numerator (..., n, dv) divided by the
    row sums (..., n, 1).

    ```mlir
    %o = attn.div %num, %den eps 5.000000e-01
        : tensor<128x64xf32>, tensor<128x1xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$lhs,
    Attn_FloatTensor:$rhs,
    DefaultValuedAttr<F64Attr, "0.0">:$eps
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`eps` $eps^)? attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attn_ReduceSumOp : Attn_InferredShapeOp<"reduce_sum"> {
  let summary = "sum along one dim, keeping the dim with size 1";
  let description = [{
    out[.., 0, ..] = sum over i of in[.., i, ..] along `dim`; the result has
    the input's rank with dim `dim` of size 1 (so it broadcasts back against
    the input). `dim` is a non-negative dim index.

    ```mlir
    %s = attn.reduce_sum %k dim 0 : tensor<128x32xf32> -> tensor<1x32xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$input,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$dim
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim attr-dict `:` type($input) `->` type($result)
  }];
  let hasCanonicalizer = 1;
}

def Attn_BilinearGatherOp : Attn_InferredShapeOp<"bilinear_gather"> {
  let summary = "bilinear samples of a multi-level feature map";
  let description = [{
    value (N, sum H_l W_l, M, D), locations (N, Lq, M, L, P, 2) ->
    (N, Lq, M, L, P, D): the sample of level l at each (x, y), with the
    sampling rule of `attn.deformable` (corners outside a level give 0).

    ```mlir
    %s = attn.bilinear_gather %value, %loc levels [32x32, 16x16]
        : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>
        -> tensor<1x100x8x2x4x32xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$value,
    Attn_FloatTensor:$locations,
    DenseI64ArrayAttr:$spatial_shapes,
    UnitAttr:$align_corners
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $value `,` $locations `levels` custom<Levels>($spatial_shapes)
    (`align_corners` $align_corners^)? attr-dict
    `:` type($value) `,` type($locations) `->` type($result)
  }];
}

def Attn_FloorOp : Attn_UnaryOp<"floor"> {
  let summary = "elementwise floor (round toward -inf)";
  let description = [{
    out = floor(in) elementwise; infinities and NaN stay as they are. The
    integer part of a sampling pixel in `--attn-lower-deformable` (its
    fraction is `in - floor(in)`).

    ```mlir
    %base = attn.floor %pixel : tensor<1x100x8x4x4x2xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attn_GatherPixelsOp : Attn_InferredShapeOp<"gather_pixels"> {
  let summary = "value vectors at integer pixels of a multi-level feature map";
  let description = [{
    value (N, sum H_l W_l, M, D) with levels stored row-major (h, w) one
    after another, as in `attn.deformable`; pixels (N, Lq, M, L, P, 2) as
    (x, y) pixel coordinates of level l -> (N, Lq, M, L, P, D):

        out[n, q, h, l, p, :] = value[n, start_l + y W_l + x, h, :]
            if 0 <= x < W_l and 0 <= y < H_l, else 0

    with (x, y) rounded down to integers first (they are meant to be
    integer-valued, e.g. the result of `attn.floor` plus a corner offset); a
    coordinate that is not finite also gives 0. The corner gather of
    `--attn-lower-deformable`: a corner outside its level contributes 0.

    ```mlir
    %g = attn.gather_pixels %value, %corner levels [32x32, 16x16]
        : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>
        -> tensor<1x100x8x2x4x32xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$value,
    Attn_FloatTensor:$pixels,
    DenseI64ArrayAttr:$spatial_shapes
  );
  let results = (outs Attn_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $value `,` $pixels `levels` custom<Levels>($spatial_shapes) attr-dict
    `:` type($value) `,` type($pixels) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Primitive ops of gradients (--attn-grad)
//===----------------------------------------------------------------------===//

def Attn_FeatureMapGradOp : Attn_Op<"feature_map_grad",
    [Pure, SameOperandsAndResultType]> {
  let summary = "cotangent times the derivative of a feature map";
  let description = [{
    out = cotangent * phi'(input) elementwise, the adjoint of
    `attn.feature_map`: phi' is 1 for `identity`; for `elu_plus_one`
    (phi(x) = x + 1 if x > 0, else exp(x)) it is 1 if x > 0, else exp(x);
    for `relu` it is 1 if x > 0, else 0 (0 at x = 0, as in PyTorch), and
    there the cotangent stops: out = cotangent if x > 0, else 0 (a NaN or
    infinite cotangent too), NaN for a NaN x.

    ```mlir
    %dq = attn.feature_map_grad elu_plus_one %q, %dphi : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins
    Attn_FeatureMap:$kind,
    Attn_FloatTensor:$input,
    Attn_FloatTensor:$cotangent
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $input `,` $cotangent attr-dict `:` type($input)
  }];
}

def Attn_SoftmaxFromLseOp : Attn_Op<"softmax_from_lse",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "a softmax's weights from its saved log-sum-exp";
  let description = [{
    out = exp(input - lse), lse broadcast along `dim`: the weights of
    `attn.normalize softmax` along `dim` when lse is each slice's
    log-sum-exp, as `attn.efficient ... with_context` saves it for the
    softmax over positions (+inf for an all -inf slice, whose weights are
    then 0; NaN for a slice with a NaN or +inf, whose weights are then
    NaN). No max and no sum: a gradient that takes the forward's
    statistics needs no pass over the slice for them. lse has the input's
    shape with size 1 at `dim`; f32 or f64, the types a forward saves
    statistics in. An lse below an entry of its slice (never a slice's
    log-sum-exp) is outside the op's domain: code generation's exp is fitted
    for arguments up to 0 (less exact above, not defined above 88).

    ```mlir
    %rk = attn.softmax_from_lse %k, %lse dim 0
        : tensor<4096x32xf32>, tensor<1x32xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$input,
    Attn_FloatTensor:$lse,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$dim
  );
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $lse `dim` $dim attr-dict `:` type($input) `,` type($lse)
  }];
  let hasVerifier = 1;
}

def Attn_BroadcastOp : Attn_InferredShapeOp<"broadcast"> {
  let summary = "broadcast a tensor to the shape of another";
  let description = [{
    out has the shape of `like`; out[idx] = input[idx'] where idx' takes the
    trailing dims of idx (right-aligned) and 0 in every dim where the input
    has size 1 (numpy broadcasting). Only the shape of `like` is read. The
    adjoint of `attn.reduce_sum` and of `attn.unbroadcast`.

    ```mlir
    %b = attn.broadcast %rowsum like %scores
        : tensor<8x128x1xf32>, tensor<8x128x128xf32> -> tensor<8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$like);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `like` $like attr-dict `:` type($input) `,` type($like)
    `->` type($result)
  }];
}

def Attn_UnbroadcastOp : Attn_InferredShapeOp<"unbroadcast"> {
  let summary = "sum a tensor over the dims in which another was broadcast";
  let description = [{
    The adjoint of numpy broadcasting: `like` (shape B) broadcasts to the
    shape A of `input`; out has shape B and is the sum of input over the
    leading dims that B lacks and over every dim where B has size 1 and A
    does not. Only the shape of `like` is read. A dynamic dim of `like`
    that is 1 at run time is summed over as well.

    ```mlir
    %dmask = attn.unbroadcast %dscores like %mask
        : tensor<8x128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$like);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `like` $like attr-dict `:` type($input) `,` type($like)
    `->` type($result)
  }];
}

def Attn_ScatterPixelsOp : Attn_InferredShapeOp<"scatter_pixels"> {
  let summary = "add vectors into integer pixels of a multi-level feature map";
  let description = [{
    The adjoint of `attn.gather_pixels`: cotangent (N, Lq, M, L, P, D) and
    pixels (N, Lq, M, L, P, 2) -> (N, sum H_l W_l, M, D), zero except

        out[n, start_l + y W_l + x, h, :] += cotangent[n, q, h, l, p, :]

    for every (q, l, p) whose pixel (x, y), rounded down, lies inside level
    l (0 <= x < W_l, 0 <= y < H_l). Pixels outside their level, or not
    finite, add nothing.

    ```mlir
    %dv = attn.scatter_pixels %dcorner, %corner levels [32x32, 16x16]
        : tensor<1x100x8x2x4x32xf32>, tensor<1x100x8x2x4x2xf32>
        -> tensor<1x1280x8x32xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$cotangent,
    Attn_FloatTensor:$pixels,
    DenseI64ArrayAttr:$spatial_shapes
  );
  let results = (outs Attn_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $cotangent `,` $pixels `levels` custom<Levels>($spatial_shapes) attr-dict
    `:` type($cotangent) `,` type($pixels) `->` type($result)
  }];
}

def Attn_AttentionGradOp : Attn_Op<"attention_grad",
    [Pure, AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "gradients of softmax attention over keys (fused, FlashAttention-2 style)";
  let description = [{
    The adjoint of `attn.dot_product %q, %k, %v [mask %m] norm [softmax
    over keys] scale s [causal]` (identity feature map) with respect to Q,
    K and V: given the cotangent dO of its result O, with S = s Q K^T + mask
    (keys after their query hidden when `causal`, entries whose mask is -inf
    hidden as in the forward), P = softmax(S) over keys and
    D_i = sum_j P_ij dP_ij = rowsum(dO * O)_i,

        dV = P^T dO,   dP = dO V^T,   dS = P * (dP - D),
        dQ = s dS K,   dK = s dS^T Q.

    Query (..., n, dk), key (..., m, dk), value (..., m, dv), cotangent
    (..., n, dv): the leading dims broadcast as for `attn.dot_product`, and
    every result has the broadcast leading dims (dquery (..., n, dk), dkey
    (..., m, dk), dvalue (..., m, dv)); `attn.unbroadcast` sums them down to
    an operand's own. A row with no visible key has P = 0 and gets zeros.
    P follows the softmax rule of the forward (a row with a NaN or +inf
    score is NaN, -inf scores weigh 0, an all -inf row is 0); the formulas
    above are then IEEE arithmetic over every (i, j), hidden ones with
    P = 0, so a NaN or inf reaches the gradients through 0 * NaN there.

    Code generation recomputes P from the row statistics one block of rows
    (for dQ) or of keys (for dK and dV) at a time, so no n x m matrix is
    ever stored (docs/training.md). `--attn-grad` emits this op for softmax
    attention whose mask, if any, needs no gradient (built from constants
    and `attn.no_grad` arguments only): the mask's own gradient would be
    dS, an n x m matrix.

    The optional `mask` operand is the forward's additive mask, (..., n, m)
    with leading dims that broadcast with the others.

    The optional `lse` operand is the row log-sum-exp that the forward
    `attn.dot_product ... with_lse` returned, shape (..., n) over the
    broadcast leading dims, f32 (f64 for f64 operands): the row pass then
    takes P = exp(S - lse) from it instead of reducing the row max and exp
    sum again (it still computes D and dQ).
    `--attn-grad=save-statistics=1` passes it.

    The optional `output` operand (only with `lse`) is the forward's result
    O, the cotangent's shape and the operands' element type: D is then
    rowsum(dO * O) as given, and code generation runs one pass over key
    blocks that also accumulates dQ (FlashAttention-2's loop: five products
    instead of seven, no row pass). `--attn-grad=save-statistics=1` passes
    it for f32 and f64 attention (docs/training.md).

    ```mlir
    %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %do scale 0.125
        : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>,
          tensor<8x128x64xf32>
        -> tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>
    // With the forward's saved row log-sum-exp.
    %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %do lse %lse scale 0.125
        : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>,
          tensor<8x128x64xf32>, tensor<8x128xf32>
        -> tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>
    // With the forward's log-sum-exp and output (D = rowsum(dO * O)).
    %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %do lse %lse output %o
        scale 0.125
        : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>,
          tensor<8x128x64xf32>, tensor<8x128xf32>, tensor<8x128x64xf32>
        -> tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>
    // With an additive mask (a padding mask: no gradient of its own).
    %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %do mask %m scale 0.125
        : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>,
          tensor<8x128x64xf32>, tensor<128x128xf32>
        -> tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$query,
    Attn_FloatTensor:$key,
    Attn_FloatTensor:$value,
    Attn_FloatTensor:$cotangent,
    Optional<Attn_FloatTensor>:$mask,
    Optional<Attn_FloatTensor>:$lse,
    Optional<Attn_FloatTensor>:$output,
    DefaultValuedAttr<F64Attr, "1.0">:$scale,
    UnitAttr:$causal
  );
  let results = (outs
    Attn_FloatTensor:$dquery,
    Attn_FloatTensor:$dkey,
    Attn_FloatTensor:$dvalue
  );
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $cotangent (`mask` $mask^)? (`lse` $lse^)?
    (`output` $output^)? (`scale` $scale^)? (`causal` $causal^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($cotangent) ``
    custom<OptionalOperandTypes>(ref($mask), type($mask), ref($lse),
                                 type($lse), ref($output), type($output))
    `->` type($dquery) `,` type($dkey) `,` type($dvalue)
  }];
  let extraClassDeclaration = [{
    static bool isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                        ::mlir::TypeRange actual);
  }];
  let hasVerifier = 1;
}

def Attn_DeformableGradOp : Attn_Op<"deformable_grad",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "gradients of multi-scale deformable attention (fused)";
  let description = [{
    The adjoint of `attn.deformable %value, %loc, %w levels [...]
    [align_corners]`: given the cotangent g (N, Lq, M*D) of its result,
    for every sample (n, q, h, l, p) with attention weight a, bilinear
    fractions (fx, fy) of its pixel in level l (design §3) and corners
    c = (cx, cy) with weights wx_c wy_c (wx = 1 - fx or fx, wy likewise),
    value rows v_c and dot_c = <v_c, g[n, q, h*D : (h+1)*D]> (0 for a corner
    outside the level):

        dvalue[v_c]        += a wx_c wy_c g            (corners inside only)
        dweights           = sum_c wx_c wy_c dot_c      (= <sample, g>)
        dlocations (x, y)  = a (sx sum_c dwx_c wy_c dot_c,
                                sy sum_c wx_c dwy_c dot_c)

    with dwx_c = -1 for the left corners and +1 for the right ones (dwy_c
    likewise), sx = W_l and sy = H_l (W_l - 1 and H_l - 1 with
    `align_corners`): PyTorch grid_sample's backward with zeros padding.
    The floor passes no gradient (on a cell boundary the derivative is the
    one of the cell to the right and below); a location that is not finite
    or lies outside its level gets 0 and adds nothing, as does a corner
    outside the level (whatever its value row or a hold). Results have the
    operands' shapes.

    `--attn-grad` emits this op for `attn.deformable`. Code generation
    computes the location and weight gradients per (query, head) from one
    dot product over the D channels per corner, and the value gradient as a
    scatter in parallel over (batch, head), which own disjoint value rows
    (docs/training.md).

    ```mlir
    %dv, %dloc, %dw = attn.deformable_grad %value, %loc, %w, %do
        levels [32x32, 16x16]
        : tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>,
          tensor<1x100x8x2x4xf32>, tensor<1x100x256xf32>
        -> tensor<1x1280x8x32xf32>, tensor<1x100x8x2x4x2xf32>,
           tensor<1x100x8x2x4xf32>
    ```
  }];
  let arguments = (ins
    Attn_FloatTensor:$value,
    Attn_FloatTensor:$sampling_locations,
    Attn_FloatTensor:$attention_weights,
    Attn_FloatTensor:$cotangent,
    DenseI64ArrayAttr:$spatial_shapes,
    UnitAttr:$align_corners
  );
  let results = (outs
    Attn_FloatTensor:$dvalue,
    Attn_FloatTensor:$dsampling_locations,
    Attn_FloatTensor:$dattention_weights
  );
  let assemblyFormat = [{
    $value `,` $sampling_locations `,` $attention_weights `,` $cotangent
    `levels` custom<Levels>($spatial_shapes) (`align_corners` $align_corners^)?
    attr-dict `:` type($value) `,` type($sampling_locations) `,`
    type($attention_weights) `,` type($cotangent) `->` type($dvalue) `,`
    type($dsampling_locations) `,` type($dattention_weights)
  }];
  let extraClassDeclaration = [{
    static bool isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                        ::mlir::TypeRange actual);
  }];
}

#endif // ATTN_OPS_TD
