//===- LowerDeformable.cpp - --attn-lower-deformable ----------------------===//
//
// Lowers multi-scale deformable attention (attn.deformable) to primitive ops
// that keep the batch and head dims: pixel coordinates, floor and fraction,
// the gathers of the 4 corners with their bilinear weights, and the weighted
// sums over points and levels. The semantics are design §3: pixel
// (x W - 0.5, y H - 0.5), or (x (W - 1), y (H - 1)) with align_corners;
// corners outside the level contribute 0. docs/lowering.md shows the IR.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERDEFORMABLEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A dense constant of `shape` holding `values` (row-major).
Value denseConstant(PatternRewriter &b, Location loc, ArrayRef<int64_t> shape,
                    Type elementType, ArrayRef<double> values) {
  SmallVector<APFloat> data;
  for (double value : values)
    data.push_back(FloatAttr::get(elementType, value).getValue());
  auto type = RankedTensorType::get(shape, elementType);
  return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, data));
}

/// x[..., component : component + 1] of a (..., 2) tensor.
Value lastDimSlice(PatternRewriter &b, Location loc, Value x,
                   int64_t component) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(shape.size(), b.getIndexAttr(1));
  for (int64_t size : shape)
    sizes.push_back(b.getIndexAttr(size));
  offsets.back() = b.getIndexAttr(component);
  sizes.back() = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
}

/// 1 - x, as primitives: (-1) x + 1.
Value oneMinus(PatternRewriter &b, Location loc, Value x, Value one) {
  Value negated = ScaleOp::create(b, loc, x, llvm::APFloat(-1.0));
  return AddOp::create(b, loc, negated, one);
}

/// Steps 1-3 of the lowering: the bilinear samples (N, Lq, M, L, P, D) of
/// `value` at `locations`, as attn.bilinear_gather defines them.
Value buildBilinearSamples(PatternRewriter &b, Location loc, Value value,
                           Value locations, DenseI64ArrayAttr levelsAttr,
                           bool alignCorners) {
  auto locType = cast<RankedTensorType>(locations.getType());
  Type elementType = locType.getElementType();
  ArrayRef<int64_t> levels = levelsAttr.asArrayRef();
  int64_t numLevels = levels.size() / 2;

  // 1. Pixel coordinates: loc (x, y) * size_l (+ offset), size_l a (L, 1, 2)
  //    constant that broadcasts over (N, Lq, M, L, P, 2).
  SmallVector<double> sizes;
  for (int64_t l = 0; l < numLevels; ++l) {
    double height = levels[2 * l], width = levels[2 * l + 1];
    sizes.push_back(alignCorners ? width - 1.0 : width);
    sizes.push_back(alignCorners ? height - 1.0 : height);
  }
  Value levelSizes =
      denseConstant(b, loc, {numLevels, 1, 2}, elementType, sizes);
  Value pixels = MulOp::create(b, loc, locations, levelSizes);
  if (!alignCorners) {
    Value half = denseConstant(b, loc, {1}, elementType, {-0.5});
    pixels = AddOp::create(b, loc, pixels, half);
  }

  // 2. Floor and fraction; fx, fy (N, Lq, M, L, P, 1) and 1 - fx, 1 - fy.
  Value base = FloorOp::create(b, loc, pixels);
  Value fraction = AddOp::create(
      b, loc, pixels, ScaleOp::create(b, loc, base, llvm::APFloat(-1.0)));
  Value one = denseConstant(b, loc, {1}, elementType, {1.0});
  Value fx = lastDimSlice(b, loc, fraction, 0);
  Value fy = lastDimSlice(b, loc, fraction, 1);
  Value weightX[2] = {oneMinus(b, loc, fx, one), fx};
  Value weightY[2] = {oneMinus(b, loc, fy, one), fy};

  // 3. The four corners: gathered value vectors (0 outside the level)
  //    times their bilinear weights, summed.
  Value samples;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      Value corner = base;
      if (dx || dy)
        corner = AddOp::create(b, loc, base,
                               denseConstant(b, loc, {2}, elementType,
                                             {double(dx), double(dy)}));
      Value gathered =
          GatherPixelsOp::create(b, loc, value, corner, levelsAttr);
      Value weight = MulOp::create(b, loc, weightX[dx], weightY[dy]);
      Value term = MulOp::create(b, loc, gathered, weight);
      samples =
          samples ? AddOp::create(b, loc, samples, term).getResult() : term;
    }
  return samples;
}

bool allStatic(Operation *op) {
  auto isStatic = [](Type type) {
    return cast<RankedTensorType>(type).hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

constexpr const char *kDynamicSizes =
    "dynamic sizes: the lowering reshapes the attention weights with "
    "tensor.expand_shape, which the evaluator and codegen support for "
    "static shapes only";

struct LowerDeformableOp : OpRewritePattern<DeformableAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DeformableAttentionOp op,
                                PatternRewriter &b) const override {
    if (std::string blocker = reducedPrecisionBlocker(op); !blocker.empty())
      return b.notifyMatchFailure(op, blocker);
    if (!allStatic(op))
      return b.notifyMatchFailure(op, kDynamicSizes);
    Location loc = op.getLoc();
    Type elementType =
        cast<RankedTensorType>(op.getType()).getElementType();
    Value samples = buildBilinearSamples(
        b, loc, op.getValue(), op.getSamplingLocations(),
        op.getSpatialShapesAttr(), op.getAlignCorners());

    // 4. Times the attention weights (N, Lq, M, L, P, 1), summed over points
    //    (dim 4) and levels (dim 3), reshaped to (N, Lq, M*D).
    Value weights = op.getAttentionWeights();
    auto weightsType = cast<RankedTensorType>(weights.getType());
    SmallVector<int64_t> expanded(weightsType.getShape());
    expanded.push_back(1);
    Value weightColumn = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(expanded, elementType), weights,
        SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3}, {4, 5}});
    Value weighted = MulOp::create(b, loc, samples, weightColumn);
    Value perLevel = ReduceSumOp::create(b, loc, weighted, 4);
    Value perHead = ReduceSumOp::create(b, loc, perLevel, 3);
    Value result = tensor::CollapseShapeOp::create(
        b, loc, perHead,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4, 5}});
    b.replaceOp(op, result);
    return success();
  }
};

/// attn.bilinear_gather as steps 1-3 (only for --attn-grad: the gathers
/// and weights have gradient rules, the fused sampler has none).
struct LowerBilinearGather : OpRewritePattern<BilinearGatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BilinearGatherOp op,
                                PatternRewriter &b) const override {
    if (std::string blocker = reducedPrecisionBlocker(op); !blocker.empty())
      return b.notifyMatchFailure(op, blocker);
    if (!allStatic(op))
      return b.notifyMatchFailure(op, "dynamic sizes: the lowering's level "
                                      "constants need static shapes");
    b.replaceOp(op, buildBilinearSamples(b, op.getLoc(), op.getValue(),
                                         op.getLocations(),
                                         op.getSpatialShapesAttr(),
                                         op.getAlignCorners()));
    return success();
  }
};

struct AttnLowerDeformablePass
    : mlir::attn::impl::AttnLowerDeformablePassBase<AttnLowerDeformablePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLowerDeformablePatterns(patterns, /*bilinearGather=*/false);
    // One sweep: the lowered ops are primitives that no pattern matches,
    // and unlike the greedy driver the walk neither folds nor erases the
    // ops it does not lower (they stay as written).
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::attn::populateLowerDeformablePatterns(RewritePatternSet &patterns,
                                                 bool bilinearGather,
                                                 bool deformable) {
  if (deformable)
    patterns.add<LowerDeformableOp>(patterns.getContext());
  if (bilinearGather)
    patterns.add<LowerBilinearGather>(patterns.getContext());
}
