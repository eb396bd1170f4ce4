//===- Reassociate.cpp - --attn-reassociate: K^T V first ------------------===//
//
// Rewrites attn.dot_product from (phi(Q) phi(K)^T) V, with its n x m scores,
// to primitive ops that compute the dk x dv context phi(K)^T V first, where
// the algebra allows it exactly (design §4) and the cost model says it pays.
// docs/reassociation.md explains the algebra, the decision and the options.
//
//===----------------------------------------------------------------------===//

#include "passes/CostModel.h"
#include "passes/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/ScopeExit.h"

#include <string>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNREASSOCIATEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Unit attribute on attn.dot_product: the user accepts the softmax
/// efficient-attention approximation for this op.
constexpr llvm::StringLiteral kAllowApproximationAttr =
    "attn.allow_approximation";
constexpr llvm::StringLiteral kAllowBf16ProductsAttr =
    "attn.allow_bf16_products";
/// String attribute the pass puts on the op that yields an approximation.
constexpr llvm::StringLiteral kApproximationAttr = "attn.approximation";
constexpr llvm::StringLiteral kSoftmaxApproximation =
    "softmax efficient attention (Shen et al.)";

/// How one op is rewritten; filled by analyze().
struct Plan {
  bool softmaxApproximation = false;
  /// Multiplies the scores before the `sum` step (the op's scale and the
  /// counts listed before it); with no `sum` step, all constant factors.
  double preFactor = 1.0;
  /// Counts listed after the `sum` step.
  double postFactor = 1.0;
  /// eps of the one `sum over keys` step, if there is one.
  std::optional<double> sumEps;
  bool causal = false;
  /// Causal forms: the chunk C, and with static sizes the number of
  /// positions n (= m).
  int64_t chunk = 0;
  int64_t positions = 0;
  /// Causal forms with a dynamic size: positions padded with zero rows to a
  /// run-time multiple of C (buildCausal).
  bool padded = false;
  /// Why the approximation was allowed (for the remark).
  std::string optInSource;
};

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

int64_t rankOf(Value value) { return shapeOf(value).size(); }

std::string describeStep(NormStepAttr step) {
  return (stringifyNormKind(step.getKind()) + " over " +
          stringifyNormAxis(step.getAxis()))
      .str();
}

/// Decides whether `op` can be rewritten and how; otherwise returns the
/// reason in `whyNot`.
FailureOr<Plan> analyze(DotProductAttentionOp op, bool allowApproximation,
                        int64_t chunkSize, std::string &whyNot) {
  auto block = [&](const llvm::Twine &reason) -> FailureOr<Plan> {
    whyNot = reason.str();
    return failure();
  };
  if (std::string blocker = reducedPrecisionBlocker(op); !blocker.empty())
    return block(blocker);
  if (op.getLse())
    return block("it returns its row log-sum-exp (`with_lse`), which no "
                 "reassociated form computes");
  if (op.getMask())
    return block("an additive mask changes the scores before the "
                 "normalization, so they do not factor through K^T V");

  ArrayRef<int64_t> q = shapeOf(op.getQuery()), k = shapeOf(op.getKey());
  int64_t n = q[q.size() - 2], m = k[k.size() - 2];

  SmallVector<NormStepAttr> steps;
  for (Attribute attr : op.getNorm())
    if (cast<NormStepAttr>(attr).getKind() != NormKind::none)
      steps.push_back(cast<NormStepAttr>(attr));
  bool hasSoftmax = llvm::any_of(steps, [](NormStepAttr step) {
    return step.getKind() == NormKind::softmax;
  });
  if (hasSoftmax && steps.size() > 1) {
    std::string list;
    for (NormStepAttr step : steps)
      list += (list.empty() ? "" : ", ") + describeStep(step);
    return block("double normalization [" + list +
                 "]: a softmax combined with another step is not a scalar "
                 "factor per query row");
  }

  Plan plan;
  plan.causal = op.getCausal();
  plan.preFactor = op.getScale().convertToDouble();
  for (NormStepAttr step : steps) {
    switch (step.getKind()) {
    case NormKind::none:
      break;
    case NormKind::count: {
      bool keys = step.getAxis() == NormAxis::keys;
      int64_t length = keys ? m : n;
      if (ShapedType::isDynamic(length))
        return block("'" + describeStep(step) + "' divides by the number of " +
                     (keys ? "keys" : "queries") +
                     ", which is dynamic here, so the factor is not a "
                     "constant");
      if (length == 0)
        return block("'" + describeStep(step) + "' divides by an empty axis");
      (plan.sumEps ? plan.postFactor : plan.preFactor) /= double(length);
      break;
    }
    case NormKind::sum:
      if (step.getAxis() == NormAxis::queries)
        return block("'sum over queries' divides each key column by its own "
                     "sum: not a scalar factor per query row");
      if (plan.sumEps)
        return block("double normalization: a second 'sum over keys' divides "
                     "by sums of already normalized rows");
      plan.sumEps = step.getEpsValue();
      break;
    case NormKind::softmax:
      if (step.getAxis() == NormAxis::queries)
        return block("'softmax over queries' normalizes each key column by "
                     "a sum of exponentials over all queries: not a scalar "
                     "factor per query row");
      if (op->hasAttr(kAllowApproximationAttr))
        plan.optInSource = "the op has attn.allow_approximation";
      else if (allowApproximation)
        plan.optInSource = "allow-softmax-approximation is set";
      else
        return block("'softmax over keys' does not factor: exp(q.k) is not a "
                     "product of a function of q and one of k. Opt in to the "
                     "softmax efficient-attention approximation (a different "
                     "function) with allow-softmax-approximation or the "
                     "attn.allow_approximation attribute");
      if (plan.causal)
        return block("causal softmax attention has no efficient-attention "
                     "form, even as an approximation");
      plan.softmaxApproximation = true;
      return plan;
    }
  }

  if (plan.causal) {
    plan.chunk = chunkSize;
    auto isStatic = [](Value value) {
      return cast<RankedTensorType>(value.getType()).hasStaticShape();
    };
    // Padding to a run-time multiple of C is exact at every n and m
    // (buildCausal), so dynamic sizes need no n = m nor n >= C.
    if (!isStatic(op.getQuery()) || !isStatic(op.getKey()) ||
        !isStatic(op.getValue())) {
      plan.padded = true;
      return plan;
    }
    if (n != m)
      return block("causal cross attention (n = " + llvm::Twine(n) +
                   " queries, m = " + llvm::Twine(m) +
                   " keys): the chunked form needs n = m");
    if (n < chunkSize)
      return block("causal attention: n = " + llvm::Twine(n) +
                   " is less than chunk-size " + llvm::Twine(chunkSize) +
                   ": a single (ragged) chunk, whose causal form is the "
                   "quadratic one");
    plan.positions = n;
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Sizes as index values
//===----------------------------------------------------------------------===//

/// An index value under construction: + and * emit arith ops, so the MAC
/// formulas of CostModel.h can be instantiated on it. Static sizes stay
/// constants and fold, so only the dynamic part of a formula becomes IR.
struct IndexExpr {
  OpBuilder *builder;
  Location loc;
  Value value;                   ///< set when the size is dynamic
  std::optional<uint64_t> known; ///< set when the size is static

  Value materialize() const {
    if (value)
      return value;
    return arith::ConstantIndexOp::create(*builder, loc, int64_t(*known));
  }
  /// l `Op` r: `fold`ed when both are known; a side that is its identity
  /// (leftIdentity for l, rightIdentity for r) gives the other; else an
  /// arith op.
  template <typename Op, typename Fold>
  static IndexExpr combine(IndexExpr l, IndexExpr r, Fold fold,
                           std::optional<uint64_t> leftIdentity,
                           std::optional<uint64_t> rightIdentity) {
    if (l.known && r.known)
      return {l.builder, l.loc, Value(), fold(*l.known, *r.known)};
    if (leftIdentity && l.known == leftIdentity)
      return r;
    if (rightIdentity && r.known == rightIdentity)
      return l;
    return {l.builder, l.loc,
            Op::create(*l.builder, l.loc, l.materialize(), r.materialize()),
            std::nullopt};
  }
  friend IndexExpr operator+(IndexExpr l, IndexExpr r) {
    return combine<arith::AddIOp>(
        l, r, [](uint64_t a, uint64_t b) { return a + b; }, 0, 0);
  }
  friend IndexExpr operator*(IndexExpr l, IndexExpr r) {
    return combine<arith::MulIOp>(
        l, r, [](uint64_t a, uint64_t b) { return a * b; }, 1, 1);
  }
  /// l - r, l >= r.
  friend IndexExpr operator-(IndexExpr l, IndexExpr r) {
    return combine<arith::SubIOp>(
        l, r, [](uint64_t a, uint64_t b) { return a - b; }, std::nullopt, 0);
  }
  friend IndexExpr max(IndexExpr l, IndexExpr r) {
    if (l.value && l.value == r.value)
      return l;
    return combine<arith::MaxUIOp>(
        l, r, [](uint64_t a, uint64_t b) { return std::max(a, b); }, 0, 0);
  }
  /// The size two broadcast dims agree on: 1 stretches, so it is the max.
  friend IndexExpr broadcastMax(IndexExpr l, IndexExpr r) {
    return combine<arith::MaxUIOp>(
        l, r, [](uint64_t a, uint64_t b) { return std::max(a, b); }, 1, 1);
  }
  /// ceil(this / divisor), divisor > 0.
  IndexExpr ceilDiv(uint64_t divisor) const {
    return combine<arith::CeilDivUIOp>(
        *this, {builder, loc, Value(), divisor},
        [](uint64_t a, uint64_t b) { return a / b + (a % b != 0); },
        std::nullopt, 1);
  }
  /// A static size as an attribute, a dynamic one as its value.
  OpFoldResult foldResult() const {
    if (value)
      return value;
    return builder->getIndexAttr(int64_t(*known));
  }
};

struct SizeBuilder {
  OpBuilder &b;
  Location loc;

  IndexExpr constant(uint64_t size) { return {&b, loc, Value(), size}; }
  /// Dim `index` of `tensor`, a constant when static.
  IndexExpr dim(Value tensor, int64_t index) {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(index))
      return constant(type.getDimSize(index));
    return {&b, loc, tensor::DimOp::create(b, loc, tensor, index),
            std::nullopt};
  }
  /// Product of the numpy broadcast of the leading dims of `tensors`.
  IndexExpr batch(ArrayRef<Value> tensors) {
    int64_t rank = 0;
    for (Value t : tensors)
      rank = std::max(rank, rankOf(t) - 2);
    IndexExpr product = constant(1);
    for (int64_t i = 0; i < rank; ++i) {
      IndexExpr size = constant(1);
      for (Value t : tensors) {
        int64_t offset = rank - (rankOf(t) - 2);
        if (i >= offset)
          size = broadcastMax(size, dim(t, i - offset));
      }
      product = product * size;
    }
    return product;
  }
};

//===----------------------------------------------------------------------===//
// Building the linear forms
//===----------------------------------------------------------------------===//

Value mapFeatures(OpBuilder &b, Location loc, Value x, FeatureMap map) {
  if (map == FeatureMap::identity)
    return x;
  return FeatureMapOp::create(b, loc, map, x);
}

Value scaleBy(OpBuilder &b, Location loc, Value x, double factor) {
  if (factor == 1.0)
    return x;
  return ScaleOp::create(b, loc, x, llvm::APFloat(factor));
}

Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
             bool transposeLhs = false, bool transposeRhs = false) {
  return MatmulOp::create(b, loc, lhs, rhs, transposeLhs, transposeRhs);
}

/// (..., n, d) -> (..., chunks, C, d) with n = chunks * C; `chunks` is an
/// index value when n is dynamic.
Value splitIntoChunks(OpBuilder &b, Location loc, Value x, int64_t chunk,
                      OpFoldResult chunks) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - 2; ++i)
    groups.push_back({i});
  groups.push_back({rank - 2, rank - 1});
  groups.push_back({rank});
  SmallVector<OpFoldResult> shape;
  for (int64_t i = 0; i < rank - 2; ++i)
    shape.push_back(tensor::getMixedSize(b, loc, x, i));
  shape.append({chunks, b.getIndexAttr(chunk),
                tensor::getMixedSize(b, loc, x, rank - 1)});
  auto [staticShape, dynamicSizes] = decomposeMixedValues(shape);
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(staticShape, type.getElementType()), x,
      groups, shape);
}

/// (..., n/C, C, d) -> (..., n, d).
Value mergeChunks(OpBuilder &b, Location loc, Value x) {
  int64_t rank = rankOf(x);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank - 3; ++i)
    groups.push_back({i});
  groups.push_back({rank - 3, rank - 2});
  groups.push_back({rank - 1});
  return tensor::CollapseShapeOp::create(b, loc, x, groups);
}

/// phi(Q) (phi(K)^T V) * c, or with a sum step
/// (phi(Q) (phi(K)^T V) * c) / (phi(Q) (phi(K)^T 1) * c + eps) * c'; the
/// unscaled context phi(K)^T V and key sums phi(K)^T 1 (none without a sum
/// step) come with it.
LinearAttentionForm buildLinearForm(OpBuilder &b, Location loc,
                                    DotProductAttentionOp op,
                                    const Plan &plan) {
  Value q = mapFeatures(b, loc, op.getQuery(), op.getFeatureMap());
  Value k = mapFeatures(b, loc, op.getKey(), op.getFeatureMap());
  // The factors go on the small dk x dv context (and dk key sums).
  Value context = matmul(b, loc, k, op.getValue(), /*transposeLhs=*/true);
  if (!plan.sumEps)
    return {matmul(b, loc, q,
                   scaleBy(b, loc, context, plan.preFactor * plan.postFactor)),
            context, Value()};
  Value keySums = ReduceSumOp::create(b, loc, k, rankOf(k) - 2);
  Value numerator = matmul(b, loc, q, scaleBy(b, loc, context, plan.preFactor));
  Value denominator =
      matmul(b, loc, q, scaleBy(b, loc, keySums, plan.preFactor),
             /*transposeLhs=*/false, /*transposeRhs=*/true);
  Value ratio = DivOp::create(b, loc, numerator, denominator,
                              llvm::APFloat(*plan.sumEps));
  return {scaleBy(b, loc, ratio, plan.postFactor), context, keySums};
}

/// Offsets, sizes and strides of rows [offset, offset + size) along the
/// position dim (rank - 2) of `x`, whole in the others (static or not).
struct RowWindow {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
RowWindow rowWindow(OpBuilder &b, Location loc, Value x, OpFoldResult offset,
                    OpFoldResult size) {
  int64_t rank = rankOf(x);
  RowWindow window;
  window.offsets.assign(rank, b.getIndexAttr(0));
  window.strides.assign(rank, b.getIndexAttr(1));
  for (int64_t i = 0; i < rank; ++i)
    window.sizes.push_back(i == rank - 2 ? size
                                         : tensor::getMixedSize(b, loc, x, i));
  window.offsets[rank - 2] = offset;
  return window;
}

/// Rows [offset, offset + size) of `x` along its position dim (rank - 2).
Value sliceRows(OpBuilder &b, Location loc, Value x, OpFoldResult offset,
                OpFoldResult size) {
  RowWindow window = rowWindow(b, loc, x, offset, size);
  return tensor::ExtractSliceOp::create(b, loc, x, window.offsets,
                                        window.sizes, window.strides);
}

/// `part` written into rows [offset, ...) of `whole`.
Value insertRows(OpBuilder &b, Location loc, Value part, Value whole,
                 int64_t offset) {
  RowWindow window =
      rowWindow(b, loc, part, b.getIndexAttr(offset),
                tensor::getMixedSize(b, loc, part, rankOf(part) - 2));
  return tensor::InsertSliceOp::create(b, loc, part, whole, window.offsets,
                                       window.sizes, window.strides);
}

/// `x` with zero rows appended along its position dim up to `rows`.
Value padRows(OpBuilder &b, Location loc, Value x, IndexExpr rows,
              IndexExpr xRows) {
  if (rows.known && xRows.known && *rows.known == *xRows.known)
    return x;
  int64_t rank = rankOf(x);
  SmallVector<OpFoldResult> low(rank, b.getIndexAttr(0)), high = low;
  high[rank - 2] = (rows - xRows).foldResult();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0.0));
  return tensor::PadOp::create(b, loc, Type(), x, low, high, zero);
}

/// The chunked causal numerator of positions that are a whole number
/// `chunks` of chunks; also returns the chunk states phi(K_c)^T V_c.
std::pair<Value, Value> buildWholeChunks(OpBuilder &b, Location loc, Value q,
                                         Value k, Value v, int64_t chunk,
                                         OpFoldResult chunks) {
  Value qChunks = splitIntoChunks(b, loc, q, chunk, chunks);
  Value kChunks = splitIntoChunks(b, loc, k, chunk, chunks);
  Value vChunks = splitIntoChunks(b, loc, v, chunk, chunks);
  Value intra = DotProductAttentionOp::create(
                    b, loc, qChunks, kChunks, vChunks, /*mask=*/Value(),
                    b.getArrayAttr({}), llvm::APFloat(1.0),
                    FeatureMap::identity, /*causal=*/true)
                    .getResult();
  Value states = matmul(b, loc, kChunks, vChunks, /*transposeLhs=*/true);
  Value earlier = PrefixSumOp::create(b, loc, states, rankOf(states) - 3,
                                      /*exclusive=*/true);
  Value inter = matmul(b, loc, qChunks, earlier);
  Value numerator =
      mergeChunks(b, loc, AddOp::create(b, loc, intra, inter).getResult());
  return {numerator, states};
}

/// The positions of the padded causal form: n queries and m keys padded to
/// L = ceil(max(n, m) / C) * C rows, `chunks` chunks of C.
struct PaddedPositions {
  IndexExpr chunks, rows;
};
PaddedPositions paddedPositions(IndexExpr n, IndexExpr m, int64_t chunk) {
  IndexExpr chunks = max(n, m).ceilDiv(chunk);
  return {chunks, chunks * IndexExpr{n.builder, n.loc, Value(),
                                     static_cast<uint64_t>(chunk)}};
}

/// The causal numerator of n = m static rows: whole chunks, and when C does
/// not divide n the r = n mod C tail rows as one ragged chunk: causal
/// attention inside the tail plus phi(Q_tail) times the sum of all head
/// chunk states; head and tail written into one n-row tensor.
Value buildStaticCausalNumerator(OpBuilder &b, Location loc, Value q, Value k,
                                 Value v, int64_t n, int64_t chunk) {
  int64_t headRows = n / chunk * chunk, tailRows = n - headRows;
  if (tailRows == 0)
    return buildWholeChunks(b, loc, q, k, v, chunk, b.getIndexAttr(n / chunk))
        .first;
  auto rows = [&](Value x, int64_t offset, int64_t size) {
    return sliceRows(b, loc, x, b.getIndexAttr(offset), b.getIndexAttr(size));
  };
  Value qHead = rows(q, 0, headRows), kHead = rows(k, 0, headRows),
        vHead = rows(v, 0, headRows);
  auto [head, states] = buildWholeChunks(b, loc, qHead, kHead, vHead, chunk,
                                         b.getIndexAttr(n / chunk));
  Value qTail = rows(q, headRows, tailRows),
        kTail = rows(k, headRows, tailRows),
        vTail = rows(v, headRows, tailRows);
  Value intra =
      DotProductAttentionOp::create(
          b, loc, qTail, kTail, vTail, /*mask=*/Value(), b.getArrayAttr({}),
          llvm::APFloat(1.0), FeatureMap::identity, /*causal=*/true)
          .getResult();
  // (..., n/C, dk, dv) summed over the chunks, then the unit chunk dim
  // dropped: the state of every head position.
  int64_t stateRank = rankOf(states);
  Value headState = ReduceSumOp::create(b, loc, states, stateRank - 3);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < stateRank - 3; ++i)
    groups.push_back({i});
  groups.push_back({stateRank - 3, stateRank - 2});
  groups.push_back({stateRank - 1});
  headState = tensor::CollapseShapeOp::create(b, loc, headState, groups);
  Value tail = AddOp::create(b, loc, intra, matmul(b, loc, qTail, headState));
  auto headType = cast<RankedTensorType>(head.getType());
  SmallVector<int64_t> shape(headType.getShape());
  shape[shape.size() - 2] = n;
  auto type = RankedTensorType::get(shape, headType.getElementType());
  Value zeros = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0.0)));
  return insertRows(b, loc, tail, insertRows(b, loc, head, zeros, 0), headRows);
}

/// Exact causal form in chunks of C positions: causal attention inside each
/// chunk plus phi(Q_c) times the exclusive prefix sum of the chunk states
/// phi(K_c)^T V_c; the row sums of a `sum` step are phi(q_i) . (inclusive
/// prefix sum of phi(k_j)).
/// - Static n = m: buildStaticCausalNumerator (a ragged last chunk when C
///   does not divide n). Nothing is padded.
/// - Dynamic n or m: phi(Q), phi(K) and V padded with zero rows to L =
///   ceil(max(n, m) / C) * C positions, whole chunks, then the first n rows
///   of the numerator and of the key prefix sums. Key j is visible to query
///   i only if j <= i, so a real query never sees a padded key past m that
///   is not zero (the padding follows the feature map) and the padded
///   queries' rows are dropped before the division: exact for every
///   run-time n and m, and no row divides 0 by 0.
Value buildCausal(OpBuilder &b, Location loc, DotProductAttentionOp op,
                  const Plan &plan) {
  // The factor before the sum goes on the queries, so numerator and row sums
  // both carry it.
  Value q =
      scaleBy(b, loc, mapFeatures(b, loc, op.getQuery(), op.getFeatureMap()),
              plan.preFactor);
  Value k = mapFeatures(b, loc, op.getKey(), op.getFeatureMap());
  Value v = op.getValue();
  int64_t positionDim = rankOf(k) - 2;
  Value numerator, keyPrefix;
  if (plan.padded) {
    SizeBuilder sizes{b, loc};
    IndexExpr n = sizes.dim(op.getQuery(), rankOf(q) - 2);
    IndexExpr m = sizes.dim(op.getKey(), positionDim);
    PaddedPositions padded = paddedPositions(n, m, plan.chunk);
    Value qPadded = padRows(b, loc, q, padded.rows, n);
    Value kPadded = padRows(b, loc, k, padded.rows, m);
    Value vPadded = padRows(b, loc, v, padded.rows, m);
    Value whole = buildWholeChunks(b, loc, qPadded, kPadded, vPadded,
                                   plan.chunk, padded.chunks.foldResult())
                      .first;
    OpFoldResult zero = b.getIndexAttr(0), rows = n.foldResult();
    numerator = sliceRows(b, loc, whole, zero, rows);
    if (plan.sumEps)
      keyPrefix =
          sliceRows(b, loc, PrefixSumOp::create(b, loc, kPadded, positionDim),
                    zero, rows);
  } else {
    numerator =
        buildStaticCausalNumerator(b, loc, q, k, v, plan.positions, plan.chunk);
    if (plan.sumEps)
      keyPrefix = PrefixSumOp::create(b, loc, k, positionDim);
  }
  if (!plan.sumEps)
    return scaleBy(b, loc, numerator, plan.postFactor);
  Value products = MulOp::create(b, loc, q, keyPrefix);
  Value denominator =
      ReduceSumOp::create(b, loc, products, rankOf(products) - 1);
  Value ratio = DivOp::create(b, loc, numerator, denominator,
                              llvm::APFloat(*plan.sumEps));
  return scaleBy(b, loc, ratio, plan.postFactor);
}

/// sigma_row(scale phi(Q)) (sigma_col(phi(K))^T V), tagged as approximate.
Value buildSoftmaxApproximation(OpBuilder &b, Location loc,
                                DotProductAttentionOp op, const Plan &plan) {
  Value q =
      scaleBy(b, loc, mapFeatures(b, loc, op.getQuery(), op.getFeatureMap()),
              plan.preFactor);
  Value k = mapFeatures(b, loc, op.getKey(), op.getFeatureMap());
  Value rowSoftmax = NormalizeOp::create(b, loc, NormKind::softmax, q,
                                         rankOf(q) - 1, llvm::APFloat(0.0));
  Value columnSoftmax = NormalizeOp::create(b, loc, NormKind::softmax, k,
                                            rankOf(k) - 2, llvm::APFloat(0.0));
  Value context = matmul(b, loc, columnSoftmax, op.getValue(),
                         /*transposeLhs=*/true);
  Value result = matmul(b, loc, rowSoftmax, context);
  result.getDefiningOp()->setAttr(kApproximationAttr,
                                  b.getStringAttr(kSoftmaxApproximation));
  return result;
}

/// Puts the op's opt-in to bf16 products (attn.allow_bf16_products) on the
/// products the rewrite creates, then tells `next` (if any).
struct CarryBf16Products : OpBuilder::Listener {
  OpBuilder::Listener *next = nullptr;
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    if (isa<MatmulOp>(op))
      op->setAttr(kAllowBf16ProductsAttr, UnitAttr::get(op->getContext()));
    if (next)
      next->notifyOperationInserted(op, previous);
  }
};

/// The rewritten value, cast to the op's declared type when that is more (or
/// less) static than the inferred one.
Value buildRewrite(OpBuilder &b, DotProductAttentionOp op, const Plan &plan) {
  Location loc = op.getLoc();
  // The opt-in permits rounding what the op computes before a product; the
  // rewrite's products are where the op's own products went.
  CarryBf16Products carry;
  OpBuilder::Listener *previous = b.getListener();
  if (op->hasAttr(kAllowBf16ProductsAttr)) {
    carry.next = previous;
    b.setListener(&carry);
  }
  llvm::scope_exit restore([&] { b.setListener(previous); });
  Value result = plan.softmaxApproximation
                     ? buildSoftmaxApproximation(b, loc, op, plan)
                 : plan.causal ? buildCausal(b, loc, op, plan)
                               : buildLinearForm(b, loc, op, plan).result;
  Type type = op.getResult().getType();
  if (result.getType() != type)
    result = tensor::CastOp::create(b, loc, type, result);
  return result;
}

//===----------------------------------------------------------------------===//
// The run-time choice for dynamic sizes
//===----------------------------------------------------------------------===//

/// i1: the linear form needs fewer MACs than the quadratic one for the sizes
/// the op sees at run time.
Value buildLinearIsCheaper(OpBuilder &b, DotProductAttentionOp op,
                           const Plan &plan) {
  SizeBuilder sizes{b, op.getLoc()};
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  IndexExpr n = sizes.dim(q, rankOf(q) - 2), m = sizes.dim(k, rankOf(k) - 2);
  IndexExpr dk = sizes.dim(q, rankOf(q) - 1), dv = sizes.dim(v, rankOf(v) - 1);
  IndexExpr batch = sizes.batch({q, k, v});
  IndexExpr contextBatch = sizes.batch({k, v});
  IndexExpr quadratic = quadraticAttentionMacs(batch, n, m, dk, dv);
  IndexExpr linear =
      plan.causal
          ? chunkedCausalAttentionMacs(contextBatch, batch,
                                       paddedPositions(n, m, plan.chunk).rows,
                                       sizes.constant(plan.chunk), dk, dv)
          : linearAttentionMacs(contextBatch, batch, n, m, dk, dv,
                                plan.sumEps.has_value());
  return arith::CmpIOp::create(b, op.getLoc(), arith::CmpIPredicate::ult,
                               linear.materialize(), quadratic.materialize());
}

/// Records the ops a builder creates, so a rewrite that does not pay can be
/// measured and taken back.
struct CreatedOps : OpBuilder::Listener {
  SmallVector<Operation *> ops;
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
};

std::string describeForm(const Plan &plan) {
  if (plan.softmaxApproximation)
    return "the softmax efficient-attention approximation "
           "sigma_row(Q) (sigma_col(K)^T V)";
  std::string form =
      plan.sumEps ? "phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1)" : "Q (K^T V)";
  if (!plan.causal)
    return form;
  form += " with causal prefix sums in chunks of " + std::to_string(plan.chunk);
  if (plan.padded)
    return form +
           " (Q, K and V padded with zero rows to a run-time multiple "
           "of " +
           std::to_string(plan.chunk) + " positions: linear in n)";
  if (int64_t tailRows = plan.positions % plan.chunk) {
    int64_t wholeChunks = plan.positions / plan.chunk;
    form += " (n = " + std::to_string(plan.positions) + ": " +
            std::to_string(wholeChunks) +
            (wholeChunks == 1 ? " whole chunk" : " whole chunks") +
            " and a ragged last chunk of " + std::to_string(tailRows) + ")";
  }
  return form;
}

struct AttnReassociatePass
    : mlir::attn::impl::AttnReassociatePassBase<AttnReassociatePass> {
  using Base::Base;

  void runOnOperation() override {
    if (chunkSize <= 0) {
      getOperation().emitError("attn-reassociate: chunk-size must be > 0, got ")
          << static_cast<int64_t>(chunkSize);
      return signalPassFailure();
    }
    SmallVector<DotProductAttentionOp> ops;
    getOperation().walk([&](DotProductAttentionOp op) { ops.push_back(op); });
    for (DotProductAttentionOp op : ops)
      rewrite(op);
  }

  void rewrite(DotProductAttentionOp op) {
    std::string whyNot;
    FailureOr<Plan> plan =
        analyze(op, allowSoftmaxApproximation, chunkSize, whyNot);
    if (failed(plan)) {
      if (explain)
        op.emitRemark("attn-reassociate: not rewritten: ") << whyNot;
      return;
    }
    std::string form = describeForm(*plan);

    OpCost quadratic;
    bool staticSizes = estimateOpCost(op, quadratic) == CostStatus::Known;
    if (!staticSizes && !force)
      return rewriteWithRuntimeChoice(op, *plan, form);

    OpBuilder builder(op);
    CreatedOps created;
    builder.setListener(&created);
    Value result = buildRewrite(builder, op, *plan);

    OpCost linear;
    bool linearKnown = staticSizes;
    for (Operation *newOp : created.ops) {
      OpCost cost;
      if (estimateOpCost(newOp, cost) == CostStatus::Known)
        linear += cost;
      else if (isa<AttnDialect>(newOp->getDialect()))
        linearKnown = false;
    }
    auto costs = [&]() {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << linear.macs << " MACs and " << linear.floats
         << " floats instead of " << quadratic.macs << " MACs and "
         << quadratic.floats << " floats";
      return text;
    };
    if (!force && linear.macs >= quadratic.macs) {
      for (Operation *newOp : llvm::reverse(created.ops))
        newOp->erase();
      if (explain)
        op.emitRemark("attn-reassociate: not rewritten: ")
            << form << " is not cheaper for these sizes (" << costs()
            << "); force=true rewrites anyway";
      return;
    }
    std::string how = force && !(linearKnown && linear.macs < quadratic.macs)
                          ? "forced"
                          : "cheaper";
    if (plan->softmaxApproximation)
      op.emitRemark("attn-reassociate: softmax attention replaced by ")
          << form << " (Shen et al.), a different function, because "
          << plan->optInSource
          << "; attn-run --verify-rewrites measures the error ("
          << (linearKnown ? costs() : std::string("dynamic sizes")) << ")";
    else if (explain)
      op.emitRemark("attn-reassociate: rewritten (")
          << how << ") to " << form << ": "
          << (linearKnown ? costs() : std::string("dynamic sizes"));
    op.getResult().replaceAllUsesWith(result);
    op.erase();
  }

  /// Dynamic sizes: both forms under an scf.if on the MAC formulas.
  void rewriteWithRuntimeChoice(DotProductAttentionOp op, const Plan &plan,
                                const std::string &form) {
    OpBuilder builder(op);
    Location loc = op.getLoc();
    Value cheaper = buildLinearIsCheaper(builder, op, plan);
    auto choice =
        scf::IfOp::create(builder, loc, TypeRange{op.getResult().getType()},
                          cheaper, /*addThenBlock=*/true,
                          /*addElseBlock=*/true);
    builder.setInsertionPointToStart(choice.thenBlock());
    Value linear = buildRewrite(builder, op, plan);
    scf::YieldOp::create(builder, loc, linear);
    builder.setInsertionPointToStart(choice.elseBlock());
    Operation *quadratic = builder.clone(*op);
    scf::YieldOp::create(builder, loc, quadratic->getResult(0));
    if (plan.softmaxApproximation)
      op.emitRemark("attn-reassociate: softmax attention replaced by ")
          << form << " (Shen et al.), a different function, when it is "
          << "cheaper for the run-time sizes, because " << plan.optInSource;
    else if (explain)
      op.emitRemark("attn-reassociate: dynamic sizes: emitted ")
          << form << " and the quadratic form, chosen at run time by "
          << "their MACs";
    op.getResult().replaceAllUsesWith(choice.getResult(0));
    op.erase();
  }
};

} // namespace

FailureOr<Value> mlir::attn::buildChunkedCausalAttention(
    OpBuilder &b, DotProductAttentionOp op, int64_t chunkSize,
    std::string &whyNot) {
  FailureOr<Plan> plan =
      analyze(op, /*allowApproximation=*/false, chunkSize, whyNot);
  if (failed(plan))
    return failure();
  if (!plan->causal) {
    whyNot = "not causal";
    return failure();
  }
  return buildRewrite(b, op, *plan);
}

FailureOr<LinearAttentionForm>
mlir::attn::buildLinearAttentionForm(OpBuilder &b, DotProductAttentionOp op,
                                     std::string &whyNot) {
  FailureOr<Plan> plan =
      analyze(op, /*allowApproximation=*/false, /*chunkSize=*/1, whyNot);
  if (failed(plan))
    return failure();
  if (plan->softmaxApproximation || plan->causal) {
    whyNot = plan->causal ? "causal" : "softmax";
    return failure();
  }
  LinearAttentionForm form = buildLinearForm(b, op.getLoc(), op, *plan);
  if (form.result.getType() != op.getResult().getType())
    form.result = tensor::CastOp::create(b, op.getLoc(),
                                         op.getResult().getType(), form.result);
  return form;
}
