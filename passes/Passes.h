//===- Passes.h - attn passes ------------------------------------*- C++
//-*-===//
#ifndef ATTN_PASSES_PASSES_H
#define ATTN_PASSES_PASSES_H

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace mlir::attn {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The rewrites of --attn-lower-double-norm; attention with a single step
/// over keys (or none) is lowered too where `lowerAlso` says so (--attn-grad
/// lowers what it has no attention-level rule for).
void populateLowerDoubleNormPatterns(
    RewritePatternSet &patterns,
    std::function<bool(DotProductAttentionOp)> lowerAlso = nullptr);

/// The rewrite of --attn-lower-deformable (unless `deformable` is false);
/// with `bilinearGather`, attn.bilinear_gather becomes its corner gathers
/// too (for --attn-grad, which keeps attn.deformable for its fused
/// gradient unless asked for the primitive form).
void populateLowerDeformablePatterns(RewritePatternSet &patterns,
                                     bool bilinearGather,
                                     bool deformable = true);

/// The exact chunked prefix-sum form of causal attention that
/// --attn-reassociate builds (chunks of `chunkSize` positions), whatever its
/// cost; fails, saying why in `whyNot`, where that form does not exist
/// (softmax, masks, dynamic sizes, n != m) or is the quadratic form itself
/// (n < chunkSize: one ragged chunk). A chunkSize that does not divide n
/// leaves a ragged last chunk.
FailureOr<Value> buildChunkedCausalAttention(OpBuilder &b,
                                             DotProductAttentionOp op,
                                             int64_t chunkSize,
                                             std::string &whyNot);

/// Non-causal linear attention in its linear form phi(Q) (phi(K)^T V), with
/// the values a gradient can take from the forward instead of recomputing
/// them.
struct LinearAttentionForm {
  Value result;
  /// phi(K)^T V, (..., dk, dv), unscaled.
  Value context;
  /// phi(K)^T 1 as a row, (..., 1, dk), unscaled; null without a `sum` step.
  Value keySums;
};

/// The form --attn-reassociate rewrites non-causal linear attention `op`
/// to, built before `op` (which stays), whatever its cost (the caller
/// decides whether it pays, with the formulas of CostModel.h); fails,
/// saying why in `whyNot`, where that form does not exist (causal,
/// softmax, masks, dynamic counts).
FailureOr<LinearAttentionForm>
buildLinearAttentionForm(OpBuilder &b, DotProductAttentionOp op,
                         std::string &whyNot);

/// Double-normalized attention in primitive form: the scores, one
/// attn.normalize per step, the product with V.
struct DoubleNormForm {
  Value result;
  /// The attn.normalize of the first step: its result is the weights a
  /// gradient can take from the forward instead of recomputing the scores.
  NormalizeOp firstStep;
};

/// Whether --attn-lower-double-norm rewrites `op`: steps over queries or
/// more than one step, and no row log-sum-exp result.
bool isDoubleNormalization(DotProductAttentionOp op);

/// The form --attn-lower-double-norm rewrites `op` to (attn.external, or
/// attn.dot_product with steps over queries or more than one step), built
/// before `op` (which stays); fails, saying why in `whyNot`, for any other
/// op.
FailureOr<DoubleNormForm> buildDoubleNormForm(OpBuilder &b, Operation *op,
                                              std::string &whyNot);

/// The rewrite of --attn-widen-to-f32 on the ops under `root`: each attn op
/// with bf16 or f16 operands or results computes in f32, between one
/// arith.extf per 16-bit value it reads and arith.truncf of its results.
void widenToF32(Operation *root);

/// Why a rewrite of `op` waits for --attn-widen-to-f32, or "" when `op` has
/// no bf16 or f16 operand or result. Rewrites build their intermediates in
/// the operands' type, so on 16-bit ops they would round values the fused op
/// keeps in f32 (docs/precision.md); after the widening they see f32 ops.
std::string reducedPrecisionBlocker(Operation *op);

/// The dialects specs are written in: attn, arith, func, scf and tensor.
/// attn-opt, attn-lsp-server and api's spec loader register exactly these.
void insertSpecDialects(DialectRegistry &registry);

/// Adds the passes of `attn-default-pipeline` to `pm`.
void buildDefaultPipeline(OpPassManager &pm);

/// Registers the named pipelines (`attn-default-pipeline`).
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PASSES_PASSES_H
