//===- LowerDoubleNorm.cpp - --attn-lower-double-norm ---------------------===//
//
// Lowers attention whose normalization is not one step over keys (double
// normalization such as EANet's [softmax over queries, sum over keys eps], or
// any step over queries) to primitive ops: the score matrix, then one
// attn.normalize per step in list order, then the product with V. These
// steps need the whole score matrix (a step over queries normalizes each key
// column over all queries), so the lowered form materializes it, exactly as
// the semantics (design §3) state it. docs/lowering.md shows the IR.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERDOUBLENORMPASS
#include "passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What both attn.dot_product and attn.external compute.
struct AttentionSpec {
  Value query, key, value, mask;
  SmallVector<NormStepAttr> steps; ///< without `none` steps
  double scale = 1.0;
  FeatureMap featureMap = FeatureMap::identity;
  bool causal = false;
};

/// Why `spec` is left alone, or an empty string if it is lowered.
std::string whyNotLowered(const AttentionSpec &spec) {
  bool overQueries = llvm::any_of(spec.steps, [](NormStepAttr step) {
    return step.getAxis() == NormAxis::queries;
  });
  if (spec.steps.size() > 1 || overQueries)
    return "";
  return "a single normalization step over keys (or none) is not a double "
         "normalization; the fused attention kernels handle it without the "
         "n x m score matrix";
}

/// Emits the primitive form of `spec` and returns its result, cast to
/// `resultType` when that is more (or less) static than the inferred type;
/// `firstStep` (if given) gets the attn.normalize of the first step.
Value buildLowered(OpBuilder &b, Location loc, const AttentionSpec &spec,
                   Type resultType, NormalizeOp *firstStep = nullptr) {
  Value q = spec.query, k = spec.key;
  if (spec.featureMap != FeatureMap::identity) {
    q = FeatureMapOp::create(b, loc, spec.featureMap, q);
    k = FeatureMapOp::create(b, loc, spec.featureMap, k);
  }
  Value scores = MatmulOp::create(b, loc, q, k, /*transposeLhs=*/false,
                                  /*transposeRhs=*/true);
  if (spec.scale != 1.0)
    scores = ScaleOp::create(b, loc, scores, llvm::APFloat(spec.scale));
  if (spec.mask)
    scores = AddOp::create(b, loc, scores, spec.mask);
  int64_t rank = cast<RankedTensorType>(scores.getType()).getRank();
  // With no step, hidden entries must still contribute 0.
  if (spec.causal && spec.steps.empty())
    scores = CausalMaskOp::create(b, loc, scores, llvm::APFloat(0.0));
  // Hidden entries take part in no step: -inf makes a softmax ignore them
  // (and leaves them 0); 0 keeps them out of a sum. A step leaves them 0,
  // except a sum over queries with eps = 0 of a column that is all hidden
  // (a key after every query): 0 / 0. So the mask comes before the first
  // step, each softmax, and whatever follows such a sum.
  bool hiddenAreZero = false;
  for (NormStepAttr step : spec.steps) {
    bool softmax = step.getKind() == NormKind::softmax;
    if (spec.causal && (!hiddenAreZero || softmax))
      scores = CausalMaskOp::create(
          b, loc, scores,
          llvm::APFloat(softmax ? -std::numeric_limits<double>::infinity()
                                : 0.0));
    int64_t dim = step.getAxis() == NormAxis::keys ? rank - 1 : rank - 2;
    auto normalize =
        NormalizeOp::create(b, loc, step.getKind(), scores, dim, step.getEps());
    if (firstStep && !*firstStep)
      *firstStep = normalize;
    scores = normalize;
    hiddenAreZero = step.getKind() != NormKind::sum ||
                    step.getAxis() == NormAxis::keys || !step.getEps().isZero();
  }
  if (spec.causal && !spec.steps.empty() && !hiddenAreZero)
    scores = CausalMaskOp::create(b, loc, scores, llvm::APFloat(0.0));
  Value result = MatmulOp::create(b, loc, scores, spec.value);
  if (result.getType() != resultType)
    result = tensor::CastOp::create(b, loc, resultType, result);
  return result;
}

SmallVector<NormStepAttr> effectiveSteps(ArrayAttr norm) {
  SmallVector<NormStepAttr> steps;
  for (Attribute attr : norm)
    if (cast<NormStepAttr>(attr).getKind() != NormKind::none)
      steps.push_back(cast<NormStepAttr>(attr));
  return steps;
}

/// What attn.dot_product `op` computes.
AttentionSpec specOf(DotProductAttentionOp op) {
  AttentionSpec spec;
  spec.query = op.getQuery();
  spec.key = op.getKey();
  spec.value = op.getValue();
  spec.mask = op.getMask();
  spec.steps = effectiveSteps(op.getNorm());
  spec.scale = op.getScale().convertToDouble();
  spec.featureMap = op.getFeatureMap();
  spec.causal = op.getCausal();
  return spec;
}

/// EANet: A = X Mk^T, softmax over the n positions, sum over the S slots.
AttentionSpec specOf(ExternalAttentionOp op) {
  MLIRContext *context = op.getContext();
  AttentionSpec spec;
  spec.query = op.getInput();
  spec.key = op.getMemoryKey();
  spec.value = op.getMemoryValue();
  spec.steps = {
      NormStepAttr::get(context, NormKind::softmax, NormAxis::queries,
                        llvm::APFloat(0.0)),
      NormStepAttr::get(context, NormKind::sum, NormAxis::keys, op.getEps())};
  return spec;
}

struct LowerDotProduct : OpRewritePattern<DotProductAttentionOp> {
  LowerDotProduct(MLIRContext *context,
                  std::function<bool(DotProductAttentionOp)> lowerAlso)
      : OpRewritePattern(context), lowerAlso(std::move(lowerAlso)) {}
  /// Which ops with one step over keys (or none) to lower too.
  std::function<bool(DotProductAttentionOp)> lowerAlso;

  LogicalResult matchAndRewrite(DotProductAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (std::string blocker = reducedPrecisionBlocker(op); !blocker.empty())
      return rewriter.notifyMatchFailure(op, blocker);
    if (op.getLse())
      return rewriter.notifyMatchFailure(
          op, "it returns its row log-sum-exp (`with_lse`), which the "
              "primitive form does not compute");
    AttentionSpec spec = specOf(op);
    std::string whyNot = lowerAlso && lowerAlso(op) ? "" : whyNotLowered(spec);
    if (!whyNot.empty())
      return rewriter.notifyMatchFailure(op, whyNot);
    rewriter.replaceOp(op, buildLowered(rewriter, op.getLoc(), spec,
                                        op.getResult().getType()));
    return success();
  }
};

struct LowerExternal : OpRewritePattern<ExternalAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ExternalAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (std::string blocker = reducedPrecisionBlocker(op); !blocker.empty())
      return rewriter.notifyMatchFailure(op, blocker);
    rewriter.replaceOp(
        op, buildLowered(rewriter, op.getLoc(), specOf(op), op.getType()));
    return success();
  }
};

struct AttnLowerDoubleNormPass
    : mlir::attn::impl::AttnLowerDoubleNormPassBase<AttnLowerDoubleNormPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLowerDoubleNormPatterns(patterns);
    // One sweep: the lowered ops are primitives that no pattern matches,
    // and unlike the greedy driver the walk neither folds nor erases the
    // ops it does not lower (they stay as written).
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

bool mlir::attn::isDoubleNormalization(DotProductAttentionOp op) {
  return !op.getLse() && whyNotLowered(specOf(op)).empty();
}

FailureOr<DoubleNormForm> mlir::attn::buildDoubleNormForm(OpBuilder &b,
                                                          Operation *op,
                                                          std::string &whyNot) {
  AttentionSpec spec;
  Type resultType;
  if (auto external = dyn_cast<ExternalAttentionOp>(op)) {
    spec = specOf(external);
    resultType = external.getType();
  } else if (auto attention = dyn_cast<DotProductAttentionOp>(op)) {
    if (attention.getLse()) {
      whyNot = "it returns its row log-sum-exp (`with_lse`)";
      return failure();
    }
    spec = specOf(attention);
    whyNot = whyNotLowered(spec);
    if (!whyNot.empty())
      return failure();
    resultType = attention.getResult().getType();
  } else {
    whyNot = "not attn.external or attn.dot_product";
    return failure();
  }
  if (whyNot = reducedPrecisionBlocker(op); !whyNot.empty())
    return failure();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  DoubleNormForm form;
  form.result =
      buildLowered(b, op->getLoc(), spec, resultType, &form.firstStep);
  return form;
}

void mlir::attn::populateLowerDoubleNormPatterns(
    RewritePatternSet &patterns,
    std::function<bool(DotProductAttentionOp)> lowerAlso) {
  patterns.add<LowerDotProduct>(patterns.getContext(), std::move(lowerAlso));
  patterns.add<LowerExternal>(patterns.getContext());
}
