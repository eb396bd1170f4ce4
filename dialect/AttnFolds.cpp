//===- AttnFolds.cpp - Folds and canonicalization patterns of attn --------===//

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

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

/// A contraction over positions Y = A^T B whose rhs B also has its sums
/// over the same positions taken (reduce_sum B over dim rank - 2) and whose
/// lhs A has not: Y is computed as its twin (B^T A), read by every user
/// with the transpose flag flipped. The codegen computes a product and the
/// column sums of its lhs in one pass over the positions (linear
/// attention's phi(K)^T V with phi(K)^T 1); the twin makes the gradient's
/// V^T phi(K) such a pair. Exact: the same products, summed in the same
/// order.
struct ContractWithColumnSums : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool hasColumnSums(Value x, Operation *in) {
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    return llvm::any_of(x.getUsers(), [&](Operation *user) {
      auto sum = dyn_cast<ReduceSumOp>(user);
      return sum && sum.getInput() == x &&
             static_cast<int64_t>(sum.getDim()) == rank - 2 &&
             sum->getBlock() == in->getBlock();
    });
  }

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getTransposeLhs() || op.getTransposeRhs() ||
        op.getLhs() == op.getRhs())
      return rewriter.notifyMatchFailure(op, "not a contraction A^T B");
    if (!hasColumnSums(op.getRhs(), op) || hasColumnSums(op.getLhs(), op))
      return rewriter.notifyMatchFailure(
          op, "the rhs has no column sums, or the lhs has them too");
    if (op->use_empty() || !llvm::all_of(op->getUsers(), [](Operation *user) {
          return isa<MatmulOp>(user);
        }))
      return rewriter.notifyMatchFailure(
          op, "a user is not a product (it cannot read the transpose)");
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> shape(type.getShape());
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    auto twin = MatmulOp::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(shape, type.getElementType(), type.getEncoding()),
        op.getRhs(), op.getLhs(), /*transposeLhs=*/true,
        /*transposeRhs=*/false);
    // A user may read Y twice: collect the users before changing uses.
    llvm::SetVector<Operation *> users(op->user_begin(), op->user_end());
    for (Operation *user : users) {
      auto product = cast<MatmulOp>(user);
      rewriter.modifyOpInPlace(product, [&] {
        if (product.getLhs() == op.getResult()) {
          product.getLhsMutable().assign(twin);
          product.setTransposeLhs(!product.getTransposeLhs());
        }
        if (product.getRhs() == op.getResult()) {
          product.getRhsMutable().assign(twin);
          product.setTransposeRhs(!product.getTransposeRhs());
        }
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// A sum over positions of a product's rows times another matrix,
/// reduce_sum(P o Y, dim 0) with P = X op(W), when the contraction of Y
/// and X over the same positions is computed earlier in the block: by
/// sum_n sum_e X[n,e] W[j,e] Y[n,j] = sum_e W[j,e] (Y^T X)[j,e], the sum
/// is one over W o (Y^T X), dk x dv values instead of n x dk. Gradients
/// make it (efficient attention's column-softmax backward, whose
/// sum_n dK'[n,j] softmax(K)[n,j] is the trace of dC^T C), and P is then
/// left with its other use alone. Exact in real arithmetic; the sum runs
/// in another order.
struct SumOfProductFromContraction : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;

  /// An earlier attn.matmul lhs^T rhs (a contraction over dim 0 of both).
  static MatmulOp earlierContraction(Value lhs, Value rhs, Operation *before) {
    for (Operation *user : lhs.getUsers()) {
      auto product = dyn_cast<MatmulOp>(user);
      if (product && product.getLhs() == lhs && product.getRhs() == rhs &&
          product.getTransposeLhs() && !product.getTransposeRhs() &&
          product->getBlock() == before->getBlock() &&
          product->isBeforeInBlock(before))
        return product;
    }
    return {};
  }

  LogicalResult matchAndRewrite(ReduceSumOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    if (op.getDim() != 0 || resultType.getRank() != 2 ||
        !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(
          op, "not a sum over dim 0 of a static matrix");
    auto mul = op.getInput().getDefiningOp<MulOp>();
    if (!mul || mul.getLhs().getType() != mul.getRhs().getType() ||
        mul.getLhs().getType() != op.getInput().getType())
      return rewriter.notifyMatchFailure(
          op, "input is not an attn.mul of two operands of its shape");
    for (auto [productValue, other] : {std::pair(mul.getLhs(), mul.getRhs()),
                                       std::pair(mul.getRhs(), mul.getLhs())}) {
      auto product = productValue.getDefiningOp<MatmulOp>();
      if (!product || product.getTransposeLhs())
        continue;
      Value x = product.getLhs(), w = product.getRhs();
      Location loc = op.getLoc();
      if (!product.getTransposeRhs()) {
        // P = X W, W e x j: sum over dim 0 of W o (X^T Y).
        MatmulOp contraction = earlierContraction(x, other, op);
        if (!contraction || contraction.getType() != w.getType())
          continue;
        Value weighted = MulOp::create(rewriter, loc, w.getType(), w,
                                       contraction.getResult());
        rewriter.replaceOpWithNewOp<ReduceSumOp>(op, resultType, weighted, 0);
        return success();
      }
      // P = X W^T, W j x e: sum over dim 1 of W o (Y^T X), j x 1,
      // reshaped to 1 x j.
      MatmulOp contraction = earlierContraction(other, x, op);
      if (!contraction || contraction.getType() != w.getType())
        continue;
      auto wType = cast<RankedTensorType>(w.getType());
      Value weighted =
          MulOp::create(rewriter, loc, wType, w, contraction.getResult());
      auto columnType = RankedTensorType::get({wType.getDimSize(0), 1},
                                              wType.getElementType());
      Value column =
          ReduceSumOp::create(rewriter, loc, columnType, weighted, 1);
      SmallVector<ReassociationIndices> both = {{0, 1}};
      Value flat = tensor::CollapseShapeOp::create(rewriter, loc, column, both);
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, resultType, flat,
                                                         both);
      return success();
    }
    return rewriter.notifyMatchFailure(
        op, "no product operand whose contraction with the other operand "
            "is computed earlier");
  }
};

} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<UseTransposedTwin, ContractWithColumnSums>(context);
}

void ReduceSumOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<SumOfProductFromContraction>(context);
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
