//===- AttnShapes.cpp - Shape rules of the attn ops -----------------------===//

#include "dialect/AttnShapes.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

static bool isDynamic(int64_t dim) { return ShapedType::isDynamic(dim); }

std::string mlir::attn::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t dim) {
        if (isDynamic(dim))
          os << '?';
        else
          os << dim;
      },
      "x");
  return text;
}

/// Merges two dims that must be equal; a dynamic dim takes the other's value.
unsigned mlir::attn::elementBytes(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (auto complex = dyn_cast<ComplexType>(element))
    return 2 * elementBytes(complex.getElementType());
  if (element.isIntOrFloat())
    return (element.getIntOrFloatBitWidth() + 7) / 8;
  return 8;
}

static std::optional<int64_t> unifyDims(int64_t lhs, int64_t rhs) {
  if (isDynamic(lhs))
    return rhs;
  if (isDynamic(rhs) || lhs == rhs)
    return lhs;
  return std::nullopt;
}

static std::string formatDim(int64_t dim) {
  return isDynamic(dim) ? std::string("?") : std::to_string(dim);
}

FailureOr<Shape> mlir::attn::broadcastShapes(ArrayRef<int64_t> lhs,
                                             ArrayRef<int64_t> rhs,
                                             StringRef what,
                                             EmitShapeError emitError) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Walk right-aligned: a missing leading dim acts as 1.
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l == 1) {
      result[i] = r;
    } else if (r == 1) {
      result[i] = l;
    } else if (std::optional<int64_t> dim = unifyDims(l, r)) {
      // ? against a static dim > 1 can only be that dim (or 1, checked at run
      // time); ? against ? stays ?.
      result[i] = *dim;
    } else {
      emitError() << "shapes of " << what << " (" << formatShape(lhs) << " and "
                  << formatShape(rhs) << ") do not broadcast";
      return failure();
    }
  }
  return result;
}

bool mlir::attn::areCompatibleShapes(ArrayRef<int64_t> lhs,
                                     ArrayRef<int64_t> rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip_equal(lhs, rhs))
    if (!unifyDims(l, r))
      return false;
  return true;
}

/// Checks that `shape` (named `name`) has rank >= `minRank`.
static LogicalResult checkMinRank(ArrayRef<int64_t> shape, StringRef name,
                                  size_t minRank, StringRef dimsMeaning,
                                  EmitShapeError emitError) {
  if (shape.size() >= minRank)
    return success();
  emitError() << name << " must have rank >= " << minRank << " " << dimsMeaning
              << ", got rank " << shape.size();
  return failure();
}

/// Checks that `shape` (named `name`) has exactly `rank` dims.
static LogicalResult checkRank(ArrayRef<int64_t> shape, StringRef name,
                               size_t rank, StringRef dimsMeaning,
                               EmitShapeError emitError) {
  if (shape.size() == rank)
    return success();
  emitError() << name << " must have rank " << rank << " " << dimsMeaning
              << ", got rank " << shape.size() << " (" << formatShape(shape)
              << ")";
  return failure();
}

/// Requires two dims to agree; `what` says what they count.
static FailureOr<int64_t> matchDims(int64_t lhs, StringRef lhsName, int64_t rhs,
                                    StringRef rhsName, StringRef what,
                                    EmitShapeError emitError) {
  if (std::optional<int64_t> dim = unifyDims(lhs, rhs))
    return *dim;
  emitError() << lhsName << " has " << lhs << " " << what << " but " << rhsName
              << " has " << rhs;
  return failure();
}

static ArrayRef<int64_t> leadingDims(ArrayRef<int64_t> shape) {
  return shape.drop_back(2);
}

FailureOr<Shape> mlir::attn::inferMatmulShape(ArrayRef<int64_t> lhs,
                                              ArrayRef<int64_t> rhs,
                                              bool transposeLhs,
                                              bool transposeRhs,
                                              EmitShapeError emitError) {
  if (failed(checkMinRank(lhs, "lhs", 2, "(rows, columns)", emitError)) ||
      failed(checkMinRank(rhs, "rhs", 2, "(rows, columns)", emitError)))
    return failure();
  size_t lr = lhs.size(), rr = rhs.size();
  int64_t rows = transposeLhs ? lhs[lr - 1] : lhs[lr - 2];
  int64_t lhsInner = transposeLhs ? lhs[lr - 2] : lhs[lr - 1];
  int64_t rhsInner = transposeRhs ? rhs[rr - 1] : rhs[rr - 2];
  int64_t cols = transposeRhs ? rhs[rr - 2] : rhs[rr - 1];
  if (!unifyDims(lhsInner, rhsInner)) {
    emitError() << "contraction dims differ: lhs " << formatShape(lhs)
                << (transposeLhs ? " (transposed)" : "") << " has " << lhsInner
                << ", rhs " << formatShape(rhs)
                << (transposeRhs ? " (transposed)" : "") << " has " << rhsInner;
    return failure();
  }
  FailureOr<Shape> batch =
      broadcastShapes(leadingDims(lhs), leadingDims(rhs),
                      "the leading dims of lhs and rhs", emitError);
  if (failed(batch))
    return failure();
  Shape result = std::move(*batch);
  result.push_back(rows);
  result.push_back(cols);
  return result;
}

FailureOr<Shape> mlir::attn::inferReduceSumShape(ArrayRef<int64_t> input,
                                                 int64_t dim,
                                                 EmitShapeError emitError) {
  if (dim < 0 || dim >= static_cast<int64_t>(input.size())) {
    emitError() << "dim " << dim << " is out of range for a tensor of rank "
                << input.size();
    return failure();
  }
  Shape result(input.begin(), input.end());
  result[dim] = 1;
  return result;
}

FailureOr<Shape> mlir::attn::inferAttentionShape(
    ArrayRef<int64_t> query, ArrayRef<int64_t> key, ArrayRef<int64_t> value,
    std::optional<ArrayRef<int64_t>> mask, const AttentionOperandNames &names,
    EmitShapeError emitError) {
  StringRef dims = "(..., positions, features)";
  if (failed(checkMinRank(query, names.query, 2, dims, emitError)) ||
      failed(checkMinRank(key, names.key, 2, dims, emitError)) ||
      failed(checkMinRank(value, names.value, 2, dims, emitError)))
    return failure();
  if (failed(matchDims(query.back(), names.query, key.back(), names.key,
                       "features", emitError)) ||
      failed(matchDims(key[key.size() - 2], names.key, value[value.size() - 2],
                       names.value, "positions", emitError)))
    return failure();

  std::string leadingWhat = ("the leading dims of " + names.query + ", " +
                             names.key + " and " + names.value)
                                .str();
  FailureOr<Shape> batch = broadcastShapes(leadingDims(query), leadingDims(key),
                                           leadingWhat, emitError);
  if (failed(batch))
    return failure();
  batch = broadcastShapes(*batch, leadingDims(value), leadingWhat, emitError);
  if (failed(batch))
    return failure();

  int64_t queries = query[query.size() - 2];
  int64_t keys = key[key.size() - 2];
  if (mask) {
    if (failed(checkMinRank(*mask, names.mask, 2, "(..., queries, keys)",
                            emitError)))
      return failure();
    size_t r = mask->size();
    if (!unifyDims((*mask)[r - 2], queries) ||
        !unifyDims((*mask)[r - 1], keys)) {
      emitError() << names.mask << " must be " << formatDim(queries) << "x"
                  << formatDim(keys) << " (queries x keys) in its last two "
                  << "dims, got " << formatShape(*mask);
      return failure();
    }
    batch = broadcastShapes(
        *batch, leadingDims(*mask),
        ("the leading dims of " + names.mask + " and the attention operands")
            .str(),
        emitError);
    if (failed(batch))
      return failure();
  }
  Shape result = std::move(*batch);
  result.push_back(queries);
  result.push_back(value.back());
  return result;
}

LogicalResult mlir::attn::verifyLevels(ArrayRef<int64_t> spatialShapes,
                                       EmitShapeError emitError) {
  if (spatialShapes.empty() || spatialShapes.size() % 2 != 0) {
    emitError() << "levels must list at least one HxW pair, got "
                << spatialShapes.size() << " sizes";
    return failure();
  }
  for (size_t l = 0; l < spatialShapes.size(); l += 2) {
    if (spatialShapes[l] <= 0 || spatialShapes[l + 1] <= 0) {
      emitError() << "level " << l / 2 << " has size " << spatialShapes[l]
                  << "x" << spatialShapes[l + 1]
                  << "; heights and widths must be positive";
      return failure();
    }
  }
  return success();
}

/// The number of pixels of all levels (levels already verified).
static FailureOr<int64_t> countPixels(ArrayRef<int64_t> spatialShapes,
                                      EmitShapeError emitError) {
  int64_t totalPixels = 0;
  for (size_t l = 0; l < spatialShapes.size(); l += 2) {
    if (spatialShapes[l] > (int64_t(1) << 31) / spatialShapes[l + 1] ||
        totalPixels > (int64_t(1) << 40)) {
      emitError() << "level sizes are too large";
      return failure();
    }
    totalPixels += spatialShapes[l] * spatialShapes[l + 1];
  }
  return totalPixels;
}

/// The checks bilinear_gather and deformable share; returns the value and
/// location shapes' agreed (N, Lq, M, L, P, D).
static FailureOr<Shape> inferSamplingDims(ArrayRef<int64_t> value,
                                          ArrayRef<int64_t> locations,
                                          ArrayRef<int64_t> spatialShapes,
                                          EmitShapeError emitError) {
  if (failed(verifyLevels(spatialShapes, emitError)) ||
      failed(checkRank(value, "value", 4, "(N, sum of H*W, heads, channels)",
                       emitError)) ||
      failed(checkRank(locations, "sampling locations", 6,
                       "(N, queries, heads, levels, points, 2)", emitError)))
    return failure();
  int64_t numLevels = spatialShapes.size() / 2;
  FailureOr<int64_t> totalPixels = countPixels(spatialShapes, emitError);
  if (failed(totalPixels))
    return failure();
  if (!unifyDims(value[1], *totalPixels)) {
    emitError() << "value has " << value[1] << " positions but the levels "
                << "add up to " << *totalPixels;
    return failure();
  }
  if (!unifyDims(locations[3], numLevels)) {
    emitError() << "sampling locations have " << locations[3]
                << " levels but `levels` lists " << numLevels;
    return failure();
  }
  if (!unifyDims(locations[5], 2)) {
    emitError() << "sampling locations must end in a dim of 2 (x, y), got "
                << locations[5];
    return failure();
  }
  FailureOr<int64_t> batch =
      matchDims(value[0], "value", locations[0], "sampling locations",
                "batches", emitError);
  if (failed(batch))
    return failure();
  FailureOr<int64_t> heads =
      matchDims(value[2], "value", locations[2], "sampling locations", "heads",
                emitError);
  if (failed(heads))
    return failure();
  return Shape{*batch, locations[1], *heads, numLevels, locations[4], value[3]};
}

FailureOr<Shape> mlir::attn::inferBilinearGatherShape(
    ArrayRef<int64_t> value, ArrayRef<int64_t> locations,
    ArrayRef<int64_t> spatialShapes, EmitShapeError emitError) {
  return inferSamplingDims(value, locations, spatialShapes, emitError);
}

FailureOr<Shape> mlir::attn::inferGatherPixelsShape(
    ArrayRef<int64_t> value, ArrayRef<int64_t> pixels,
    ArrayRef<int64_t> spatialShapes, EmitShapeError emitError) {
  return inferSamplingDims(value, pixels, spatialShapes, emitError);
}

FailureOr<Shape> mlir::attn::inferDeformableShape(
    ArrayRef<int64_t> value, ArrayRef<int64_t> locations,
    ArrayRef<int64_t> weights, ArrayRef<int64_t> spatialShapes,
    EmitShapeError emitError) {
  FailureOr<Shape> dims =
      inferSamplingDims(value, locations, spatialShapes, emitError);
  if (failed(dims) ||
      failed(checkRank(weights, "attention weights", 5,
                       "(N, queries, heads, levels, points)", emitError)))
    return failure();
  ArrayRef<int64_t> expected = ArrayRef<int64_t>(*dims).take_front(5);
  if (!areCompatibleShapes(weights, expected)) {
    emitError() << "attention weights must be " << formatShape(expected)
                << " to match the sampling locations, got "
                << formatShape(weights);
    return failure();
  }
  int64_t heads = (*dims)[2], channels = (*dims)[5];
  int64_t merged = isDynamic(heads) || isDynamic(channels)
                       ? ShapedType::kDynamic
                       : heads * channels;
  return Shape{(*dims)[0], (*dims)[1], merged};
}

FailureOr<Shape> mlir::attn::inferScatterPixelsShape(
    ArrayRef<int64_t> cotangent, ArrayRef<int64_t> pixels,
    ArrayRef<int64_t> spatialShapes, EmitShapeError emitError) {
  if (failed(verifyLevels(spatialShapes, emitError)) ||
      failed(checkRank(cotangent, "cotangent", 6,
                       "(N, queries, heads, levels, points, channels)",
                       emitError)) ||
      failed(checkRank(pixels, "pixels", 6,
                       "(N, queries, heads, levels, points, 2)", emitError)))
    return failure();
  FailureOr<int64_t> totalPixels = countPixels(spatialShapes, emitError);
  if (failed(totalPixels))
    return failure();
  int64_t numLevels = spatialShapes.size() / 2;
  if (!unifyDims(pixels[3], numLevels)) {
    emitError() << "pixels have " << pixels[3] << " levels but `levels` lists "
                << numLevels;
    return failure();
  }
  if (!unifyDims(pixels[5], 2)) {
    emitError() << "pixels must end in a dim of 2 (x, y), got " << pixels[5];
    return failure();
  }
  Shape samples(cotangent.take_front(5));
  if (!areCompatibleShapes(samples, pixels.take_front(5))) {
    emitError() << "cotangent " << formatShape(cotangent)
                << " and pixels " << formatShape(pixels)
                << " must agree in (N, queries, heads, levels, points)";
    return failure();
  }
  auto known = [](int64_t lhs, int64_t rhs) {
    return isDynamic(lhs) ? rhs : lhs;
  };
  return Shape{known(cotangent[0], pixels[0]), *totalPixels,
               known(cotangent[2], pixels[2]), cotangent[5]};
}

/// `from` must broadcast to `to`: the broadcast of the two is `to` itself.
static LogicalResult checkBroadcastsTo(ArrayRef<int64_t> from,
                                       ArrayRef<int64_t> to, StringRef what,
                                       EmitShapeError emitError) {
  FailureOr<Shape> joined = broadcastShapes(from, to, what, emitError);
  if (failed(joined))
    return failure();
  if (from.size() > to.size() || !areCompatibleShapes(*joined, to)) {
    emitError() << "shape " << formatShape(from) << " does not broadcast to "
                << formatShape(to) << " (" << what << ")";
    return failure();
  }
  return success();
}

FailureOr<Shape> mlir::attn::inferBroadcastShape(ArrayRef<int64_t> input,
                                                 ArrayRef<int64_t> like,
                                                 EmitShapeError emitError) {
  if (failed(checkBroadcastsTo(input, like, "input and like", emitError)))
    return failure();
  return Shape(like);
}

FailureOr<Shape> mlir::attn::inferUnbroadcastShape(ArrayRef<int64_t> input,
                                                   ArrayRef<int64_t> like,
                                                   EmitShapeError emitError) {
  if (failed(checkBroadcastsTo(like, input, "like and input", emitError)))
    return failure();
  return Shape(like);
}

Shape mlir::attn::inferRowStatisticsShape(ArrayRef<int64_t> result) {
  return Shape(result.begin(), result.end() - (result.empty() ? 0 : 1));
}

Shape mlir::attn::inferEfficientContextShape(ArrayRef<int64_t> result,
                                             int64_t dk) {
  Shape context(result.begin(), result.end());
  context[context.size() - 2] = dk;
  return context;
}

Shape mlir::attn::inferEfficientKeyLseShape(ArrayRef<int64_t> result,
                                            int64_t dk) {
  Shape lse(result.begin(), result.end());
  lse[lse.size() - 2] = 1;
  lse.back() = dk;
  return lse;
}

FailureOr<SmallVector<Shape, 3>> mlir::attn::inferAttentionGradShapes(
    ArrayRef<int64_t> query, ArrayRef<int64_t> key, ArrayRef<int64_t> value,
    ArrayRef<int64_t> cotangent, std::optional<ArrayRef<int64_t>> mask,
    std::optional<ArrayRef<int64_t>> lse,
    std::optional<ArrayRef<int64_t>> forwardOutput, EmitShapeError emitError) {
  FailureOr<Shape> output = inferAttentionShape(
      query, key, value, mask, AttentionOperandNames(), emitError);
  if (failed(output))
    return failure();
  if (!areCompatibleShapes(cotangent, *output)) {
    emitError() << "cotangent must have the attention's result shape "
                << formatShape(*output) << ", got " << formatShape(cotangent);
    return failure();
  }
  if (lse && !areCompatibleShapes(*lse, inferRowStatisticsShape(*output))) {
    emitError() << "lse must have one value per row of the attention's "
                << "result, shape "
                << formatShape(inferRowStatisticsShape(*output)) << ", got "
                << formatShape(*lse);
    return failure();
  }
  if (forwardOutput && !areCompatibleShapes(*forwardOutput, *output)) {
    emitError() << "output must have the attention's result shape "
                << formatShape(*output) << ", got "
                << formatShape(*forwardOutput);
    return failure();
  }
  Shape lead(output->begin(), output->end() - 2);
  auto withRows = [&](ArrayRef<int64_t> operand) {
    Shape shape = lead;
    shape.append(operand.end() - 2, operand.end());
    return shape;
  };
  return SmallVector<Shape, 3>{withRows(query), withRows(key),
                               withRows(value)};
}

FailureOr<SmallVector<Shape, 3>> mlir::attn::inferDeformableGradShapes(
    ArrayRef<int64_t> value, ArrayRef<int64_t> locations,
    ArrayRef<int64_t> weights, ArrayRef<int64_t> cotangent,
    ArrayRef<int64_t> spatialShapes, EmitShapeError emitError) {
  FailureOr<Shape> output = inferDeformableShape(value, locations, weights,
                                                 spatialShapes, emitError);
  if (failed(output))
    return failure();
  if (!areCompatibleShapes(cotangent, *output)) {
    emitError() << "cotangent must have the deformable attention's result "
                << "shape " << formatShape(*output) << ", got "
                << formatShape(cotangent);
    return failure();
  }
  // (N, Lq, M, L, P, D) as the operands agree on them; the weights and the
  // cotangent may know a dim the locations leave dynamic.
  Shape dims = *inferSamplingDims(value, locations, spatialShapes, emitError);
  for (size_t d = 0; d < 5; ++d)
    dims[d] = *unifyDims(dims[d], weights[d]);
  dims[0] = *unifyDims(dims[0], cotangent[0]);
  dims[1] = *unifyDims(dims[1], cotangent[1]);
  int64_t pixels = *countPixels(spatialShapes, emitError);
  Shape dValue{dims[0], pixels, dims[2], dims[5]};
  Shape dLocations(dims.begin(), dims.begin() + 5);
  dLocations.push_back(2);
  Shape dWeights(dims.begin(), dims.begin() + 5);
  return SmallVector<Shape, 3>{dValue, dLocations, dWeights};
}
