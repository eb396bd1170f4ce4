//===- AttnFolds.cpp - Folds and canonicalization patterns of attn --------===//

#include "dialect/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Folds: ops that leave their input unchanged
//===----------------------------------------------------------------------===//

OpFoldResult NormalizeOp::fold(FoldAdaptor) {
  if (getKind() == NormKind::none)
    return getInput();
  return {};
}

OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getFactor().isExactlyValue(1.0))
    return getInput();
  return {};
}

OpFoldResult FeatureMapOp::fold(FoldAdaptor) {
  if (getKind() == FeatureMap::identity)
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Canonicalization patterns
//===----------------------------------------------------------------------===//

namespace {

/// scale(scale(x, a), b) -> scale(x, a * b): one pass over the data.
struct MergeNestedScales : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<ScaleOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "input is not an attn.scale");
    double factor = inner.getFactor().convertToDouble() *
                    outer.getFactor().convertToDouble();
    if (!std::isfinite(factor))
      return rewriter.notifyMatchFailure(outer,
                                         "the merged factor would overflow");
    rewriter.replaceOpWithNewOp<ScaleOp>(outer, inner.getInput(),
                                         rewriter.getF64FloatAttr(factor));
    return success();
  }
};

/// Drops `none` steps from a dot_product's normalization list: they do
/// nothing, and a shorter list keeps later pattern matches simple.
struct DropNoneNormSteps : OpRewritePattern<DotProductAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotProductAttentionOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Attribute> kept;
    for (Attribute step : op.getNorm())
      if (cast<NormStepAttr>(step).getKind() != NormKind::none)
        kept.push_back(step);
    if (kept.size() == op.getNorm().size())
      return rewriter.notifyMatchFailure(op, "no 'none' step to drop");
    rewriter.modifyOpInPlace(
        op, [&]() { op.setNormAttr(rewriter.getArrayAttr(kept)); });
    return success();
  }
};

/// attn.external is dot-product attention with Q = X, K = Mk, V = Mv, scale
/// 1 and EANet's double normalization; rewriting it lets every later pass
/// handle one op.
struct ExternalToDotProduct : OpRewritePattern<ExternalAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExternalAttentionOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *context = op.getContext();
    ArrayAttr norm = rewriter.getArrayAttr(
        {NormStepAttr::get(context, NormKind::softmax, NormAxis::queries,
                           llvm::APFloat(0.0)),
         NormStepAttr::get(context, NormKind::sum, NormAxis::keys,
                           op.getEps())});
    auto dotProduct = DotProductAttentionOp::create(
        rewriter, op.getLoc(), op.getType(), op.getInput(), op.getMemoryKey(),
        op.getMemoryValue(), /*mask=*/Value(), norm,
        /*scale=*/llvm::APFloat(1.0));
    rewriter.replaceOp(op, dotProduct.getResult());
    return success();
  }
};

/// A product operand Y = op(A) op(B) whose transpose X = op(B)^T op(A)^T is
/// computed earlier in the block: the product reads X with its transpose
/// flag flipped, and Y is left dead. Gradients make such twins (linear
/// attention's phi(K)^T V and V^T phi(K)); each is a pass over n rows.
struct UseTransposedTwin : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The earlier product that is `value`'s transpose, if any.
  static MatmulOp earlierTwin(Value value) {
    auto product = value.getDefiningOp<MatmulOp>();
    if (!product)
      return {};
    auto type = cast<RankedTensorType>(product.getType());
    for (Operation *user : product.getRhs().getUsers()) {
      auto twin = dyn_cast<MatmulOp>(user);
      if (!twin || twin == product || twin.getLhs() != product.getRhs() ||
          twin.getRhs() != product.getLhs() ||
          twin.getTransposeLhs() == product.getTransposeRhs() ||
          twin.getTransposeRhs() == product.getTransposeLhs() ||
          twin->getBlock() != product->getBlock() ||
          !twin->isBeforeInBlock(product))
        continue;
      auto twinType = cast<RankedTensorType>(twin.getType());
      SmallVector<int64_t> transposed(twinType.getShape());
      std::swap(transposed[transposed.size() - 1],
                transposed[transposed.size() - 2]);
      if (twinType.getElementType() == type.getElementType() &&
          ArrayRef<int64_t>(transposed) == type.getShape())
        return twin;
    }
    return {};
  }

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    MatmulOp lhsTwin = earlierTwin(op.getLhs());
    MatmulOp rhsTwin = earlierTwin(op.getRhs());
    if (!lhsTwin && !rhsTwin)
      return rewriter.notifyMatchFailure(
          op, "no operand is the transpose of an earlier product");
    Value lhs = lhsTwin ? lhsTwin.getResult() : op.getLhs();
    Value rhs = rhsTwin ? rhsTwin.getResult() : op.getRhs();
    bool transposeLhs = op.getTransposeLhs() != static_cast<bool>(lhsTwin);
    bool transposeRhs = op.getTransposeRhs() != static_cast<bool>(rhsTwin);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), lhs, rhs,
                                          transposeLhs, transposeRhs);
    return success();
  }
};

} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<UseTransposedTwin>(context);
}

void ScaleOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add<MergeNestedScales>(context);
}

void DotProductAttentionOp::getCanonicalizationPatterns(
    RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<DropNoneNormSteps>(context);
}

void ExternalAttentionOp::getCanonicalizationPatterns(
    RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ExternalToDotProduct>(context);
}
