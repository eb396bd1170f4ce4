//===- Grad.cpp - --attn-grad ---------------------------------------------===//
//
// Reverse-mode differentiation of attn functions (design §7). For @f the
// pass clones f into @f_grad, lowers the clone's attention ops to primitives
// (the rewrites of the lowering passes; attention with a fused or
// attention-level rule stays: linear forms, softmax whose mask needs no
// gradient, attn.deformable), then walks the ops backwards and emits each
// one's adjoint rule as attn ops. The result is ordinary attn IR: cost,
// reassociation, verification and codegen apply to it unchanged. Passes.td
// states the signature; docs/training.md the rules.
//
//===----------------------------------------------------------------------===//

#include "passes/CostModel.h"
#include "passes/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"
#include "dialect/AttnShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGRADPASS
#include "passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr StringLiteral kNoGrad = "attn.no_grad";
constexpr StringLiteral kGradientOf = "attn.gradient_of";
constexpr StringLiteral kSavedStatistics = "attn.saved_statistics";

/// E = rho_q(Q) (rho_k(K)^T V) in primitive ops, the context first (so the
/// gradient stays linear in n). Scaling: Q (K^T V) / n, the count over the
/// n rows of the result.
struct LowerEfficient : OpRewritePattern<EfficientAttentionOp> {
  /// `keep`: the ops whose gradient takes the forward's saved context
  /// (Differentiator::efficient), which stay whole.
  LowerEfficient(MLIRContext *context,
                 llvm::SmallPtrSet<Operation *, 4> keep = {})
      : OpRewritePattern(context), keep(std::move(keep)) {}

  LogicalResult matchAndRewrite(EfficientAttentionOp op,
                                PatternRewriter &b) const override {
    if (keep.contains(op))
      return b.notifyMatchFailure(
          op, "its gradient takes the forward's saved context");
    if (std::string blocker = reducedPrecisionBlocker(op); !blocker.empty())
      return b.notifyMatchFailure(op, blocker);
    if (Value keyLse = op.getKeyLse(); keyLse && !keyLse.use_empty())
      return b.notifyMatchFailure(
          op, "its key log-sum-exp is read (no primitive form of it)");
    Location loc = op.getLoc();
    Value query = op.getQuery(), key = op.getKey();
    int64_t queryRank = cast<RankedTensorType>(query.getType()).getRank();
    int64_t keyRank = cast<RankedTensorType>(key.getType()).getRank();
    bool softmax = op.getVariant() == EfficientVariant::softmax;
    if (softmax) {
      query = NormalizeOp::create(b, loc, NormKind::softmax, query,
                                  queryRank - 1, llvm::APFloat(0.0));
      key = NormalizeOp::create(b, loc, NormKind::softmax, key, keyRank - 2,
                                llvm::APFloat(0.0));
    }
    Value context = MatmulOp::create(b, loc, key, op.getValue(),
                                     /*transposeLhs=*/true,
                                     /*transposeRhs=*/false);
    Value result = MatmulOp::create(b, loc, query, context);
    if (!softmax) {
      int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
      result = NormalizeOp::create(b, loc, NormKind::count, result, rank - 2,
                                   llvm::APFloat(0.0));
    }
    auto castTo = [&](Value value, Type type) -> Value {
      if (value.getType() == type)
        return value;
      return tensor::CastOp::create(b, loc, type, value);
    };
    // `with_context`: the normalized context is the first product; the key
    // log-sum-exp has no primitive form (the refusal above).
    b.replaceAllUsesWith(op.getResult(),
                         castTo(result, op.getResult().getType()));
    if (Value saved = op.getNormalizedContext())
      b.replaceAllUsesWith(saved, castTo(context, saved.getType()));
    b.eraseOp(op);
    return success();
  }

private:
  llvm::SmallPtrSet<Operation *, 4> keep;
};

/// The normalization steps of `op` without its `none` steps.
SmallVector<NormStepAttr> normSteps(DotProductAttentionOp op) {
  SmallVector<NormStepAttr> steps;
  for (Attribute attr : op.getNorm())
    if (cast<NormStepAttr>(attr).getKind() != NormKind::none)
      steps.push_back(cast<NormStepAttr>(attr));
  return steps;
}

/// Attention whose gradient --attn-grad writes as attention ops again
/// (Differentiator::linearAttention): no mask, not causal, and one step
/// that is `none`, `count over keys` or `sum over keys` (or no step). These
/// gradients are products through the same scores, so --attn-reassociate
/// makes them linear in n as it does the forward.
bool hasLinearGradient(DotProductAttentionOp op) {
  if (op.getMask() || op.getCausal())
    return false;
  SmallVector<NormStepAttr> steps = normSteps(op);
  if (steps.empty())
    return true;
  return steps.size() == 1 && steps[0].getAxis() == NormAxis::keys &&
         steps[0].getKind() != NormKind::softmax;
}

/// The arguments of the function being differentiated that are marked
/// `{attn.no_grad}` (by position: the same in f and in its clone).
using NoGradArgs = llvm::SmallBitVector;

/// Whether `value` needs no gradient: it is computed from constants and
/// `{attn.no_grad}` arguments only (a padding mask, a causal fill).
bool isGradientFree(Value value, const NoGradArgs &noGrad) {
  SmallVector<Value> pending = {value};
  llvm::DenseSet<Value> seen;
  while (!pending.empty()) {
    Value next = pending.pop_back_val();
    if (!seen.insert(next).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(next)) {
      if (!isa<func::FuncOp>(arg.getOwner()->getParentOp()) ||
          !noGrad.test(arg.getArgNumber()))
        return false;
      continue;
    }
    llvm::append_range(pending, next.getDefiningOp()->getOperands());
  }
  return true;
}

/// Softmax attention whose gradient --attn-grad writes as one fused
/// attn.attention_grad (FlashAttention-2's recomputation; no n x m matrix):
/// one step besides `none`, softmax over keys, and a mask (if any) that
/// needs no gradient, which would be the n x m matrix dS itself.
bool hasFusedSoftmaxGradient(DotProductAttentionOp op,
                             const NoGradArgs &noGrad) {
  if (Value mask = op.getMask(); mask && !isGradientFree(mask, noGrad))
    return false;
  SmallVector<NormStepAttr> steps = normSteps(op);
  return steps.size() == 1 && steps[0].getAxis() == NormAxis::keys &&
         steps[0].getKind() == NormKind::softmax;
}

/// The chunk of the causal form (--attn-reassociate's default chunk-size).
constexpr int64_t kCausalChunk = 64;

/// Causal linear attention in the chunked prefix-sum form of
/// --attn-reassociate, so that its gradient runs through reverse (suffix)
/// scans of the chunk states and stays linear in n.
struct ChunkCausalLinear : OpRewritePattern<DotProductAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DotProductAttentionOp op,
                                PatternRewriter &b) const override {
    if (!op.getCausal())
      return b.notifyMatchFailure(op, "not causal");
    std::string whyNot;
    FailureOr<Value> chunked =
        buildChunkedCausalAttention(b, op, kCausalChunk, whyNot);
    if (failed(chunked))
      return b.notifyMatchFailure(op, whyNot);
    b.replaceOp(op, *chunked);
    return success();
  }
};

/// Builds the adjoints of one function's primitive body.
class Differentiator {
public:
  Differentiator(OpBuilder &builder, const NoGradArgs &noGrad)
      : b(builder), noGrad(noGrad) {}

  /// Adds `adjoint` to the adjoint of `value`.
  void accumulate(Value value, Value adjoint) {
    if (!adjoint)
      return;
    auto [it, inserted] = adjoints.try_emplace(value, adjoint);
    if (!inserted)
      it->second = AddOp::create(b, adjoint.getLoc(), it->second, adjoint);
  }

  Value adjointOf(Value value) const { return adjoints.lookup(value); }

  /// The saved row log-sum-exp and output that `op`'s attn.attention_grad
  /// takes (save-statistics).
  void saveStatistics(Operation *op, Value lse, Value output) {
    savedLse[op] = lse;
    savedOutput[op] = output;
  }

  /// The saved normalized context and key log-sum-exp that the gradient of
  /// attn.efficient `op` takes (save-statistics).
  void saveContext(Operation *op, Value context, Value keyLse) {
    savedContext[op] = context;
    savedKeyLse[op] = keyLse;
  }

  /// The saved context phi(K)^T V and key sums phi(K)^T 1 (null without a
  /// `sum` step) that the gradient of linear attention `op` takes
  /// (save-statistics).
  void saveLinearContext(Operation *op, Value context, Value keySums) {
    savedLinearContext[op] = {context, keySums};
  }

  /// The saved weights that stand for the result of `firstStep`, the first
  /// attn.normalize of a double-normalized attention (save-statistics):
  /// the forward ops read them instead, so the scores are not recomputed.
  void saveWeights(NormalizeOp firstStep, Value weights) {
    firstStep.getResult().replaceAllUsesWith(weights);
    savedResults[firstStep] = weights;
  }

  /// Emits the adjoint rule of `op` given its result's adjoint.
  LogicalResult differentiate(Operation *op);

  /// Zeros with the shape of `like`.
  Value zerosLike(Location loc, Value like);

private:
  Value neg(Location loc, Value x) {
    return ScaleOp::create(b, loc, x, llvm::APFloat(-1.0));
  }
  /// The type of `adjoint` with the element type of `operand`. An adjoint
  /// may be more static than its operand (a fused gradient op infers a dim
  /// the operand leaves dynamic): the element conversions keep its shape.
  static Type withElementOf(Value adjoint, Value operand) {
    return cast<RankedTensorType>(adjoint.getType())
        .clone(getElementTypeOrSelf(operand.getType()));
  }
  /// `g`, the adjoint of `op`'s first result, cast to the type `op` infers
  /// for it when that is more static: a result declared `?` where the
  /// operands fix the size (a valid spec) left g dynamic, while the rule
  /// combines it with values typed from the operands (efficient
  /// attention's reshape of dC ∘ C to a row, typed from K, failed to
  /// verify).
  Value refinedAdjoint(Operation *op, Value g) {
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    SmallVector<Type> inferred;
    if (!g || !infer ||
        failed(infer.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), inferred)) ||
        inferred.empty())
      return g;
    auto from = dyn_cast<RankedTensorType>(g.getType());
    auto to = dyn_cast<RankedTensorType>(inferred.front());
    if (!from || !to || from == to ||
        from.getElementType() != to.getElementType() ||
        !tensor::CastOp::areCastCompatible(from, to) ||
        to.getNumDynamicDims() >= from.getNumDynamicDims())
      return g;
    return tensor::CastOp::create(b, op->getLoc(), to, g);
  }
  /// `adjoint` summed down to the shape of the broadcast operand `operand`.
  Value unbroadcast(Location loc, Value adjoint, Value operand) {
    auto from = cast<RankedTensorType>(adjoint.getType());
    auto to = cast<RankedTensorType>(operand.getType());
    if (from.hasStaticShape() && from.getShape() == to.getShape())
      return adjoint;
    return UnbroadcastOp::create(b, loc, adjoint, operand);
  }
  void matmul(MatmulOp op, Value g);
  void linearAttention(DotProductAttentionOp op, Value g);
  void softmaxAttention(DotProductAttentionOp op, Value g);
  void deformable(DeformableAttentionOp op, Value g);
  void efficient(EfficientAttentionOp op, Value g, Value context, Value keyLse);
  /// phi(x) of the op's feature map, and dx from dphi(x).
  Value mapped(DotProductAttentionOp op, Value x);
  Value throughMap(DotProductAttentionOp op, Value x, Value dPhi);
  void normalize(NormalizeOp op, Value g);
  /// g - sum over `dim` of g y.
  Value centered(Location loc, Value y, Value g, int64_t dim);
  /// The adjoint of the input of a softmax along `dim` whose weights are
  /// `y`: y (g - sum over dim of g y).
  Value softmaxAdjoint(Location loc, Value y, Value g, int64_t dim) {
    return MulOp::create(b, loc, y, centered(loc, y, g, dim));
  }
  LogicalResult extractSlice(tensor::ExtractSliceOp op, Value g);
  LogicalResult insertSlice(tensor::InsertSliceOp op, Value g);
  void pad(tensor::PadOp op, Value g);
  /// zerosLike with exactly the type of `like` (a cast where the broadcast
  /// infers a more static one).
  Value zerosOfType(Location loc, Value like);

  OpBuilder &b;
  const NoGradArgs &noGrad;
  llvm::DenseMap<Value, Value> adjoints;
  llvm::DenseMap<Operation *, Value> savedLse, savedOutput, savedContext,
      savedKeyLse;
  llvm::DenseMap<Operation *, std::pair<Value, Value>> savedLinearContext;
  llvm::DenseMap<Operation *, Value> savedResults;
  /// `op`'s result, or the saved value that stands for it.
  Value resultOf(Operation *op) const {
    if (Value saved = savedResults.lookup(op))
      return saved;
    return op->getResult(0);
  }
};

Value Differentiator::zerosLike(Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  SmallVector<int64_t> ones(type.getRank(), 1);
  auto zeroType = RankedTensorType::get(ones, type.getElementType());
  Value zero = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(zeroType,
                             FloatAttr::get(type.getElementType(), 0.0)));
  // A scalar (rank 0) is the constant itself: no shape broadcasts to it.
  if (type.getRank() == 0)
    return zero;
  return BroadcastOp::create(b, loc, zero, like);
}

Value Differentiator::zerosOfType(Location loc, Value like) {
  Value zeros = zerosLike(loc, like);
  if (zeros.getType() != like.getType())
    zeros = tensor::CastOp::create(b, loc, like.getType(), zeros);
  return zeros;
}

/// C = op(A) op(B): dA and dB through the transposed products, then summed
/// over broadcast leading dims.
void Differentiator::matmul(MatmulOp op, Value g) {
  Location loc = op.getLoc();
  Value lhs = op.getLhs(), rhs = op.getRhs();
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  Value dLhs, dRhs;
  if (!tl && !tr) { // C = A B
    dLhs = MatmulOp::create(b, loc, g, rhs, false, true);
    dRhs = MatmulOp::create(b, loc, lhs, g, true, false);
  } else if (!tl && tr) { // C = A B^T
    dLhs = MatmulOp::create(b, loc, g, rhs, false, false);
    dRhs = MatmulOp::create(b, loc, g, lhs, true, false);
  } else if (tl && !tr) { // C = A^T B
    dLhs = MatmulOp::create(b, loc, rhs, g, false, true);
    dRhs = MatmulOp::create(b, loc, lhs, g, false, false);
  } else { // C = A^T B^T
    dLhs = MatmulOp::create(b, loc, rhs, g, true, true);
    dRhs = MatmulOp::create(b, loc, g, lhs, true, true);
  }
  accumulate(lhs, unbroadcast(loc, dLhs, lhs));
  accumulate(rhs, unbroadcast(loc, dRhs, rhs));
}

/// O = rho(A) V with A = scale phi(Q) phi(K)^T and rho a constant factor
/// (none, count over keys) or a row sum (sum over keys). Each gradient is an
/// attention op over the transposed roles, so it reassociates like the
/// forward (design §7):
///   constant c:  dphiQ = c scale dO V^T phiK   (attention dO, V, phiK)
///                dphiK = c scale V dO^T phiQ   (attention V, dO, phiQ)
///                dV    = c scale phiK phiQ^T dO (attention phiK, phiQ, dO)
///     where the count over keys (m) becomes a count over queries when the
///     keys play the queries;
///   sum:  O = N / (z + eps), N = A V, z = A 1 = scale phiQ (phiK^T 1):
///         dN = dO / (z + eps), dz = -rowsum(dO O) / (z + eps),
///         dA = dN V^T + dz 1^T, so dphiQ = scale (dN V^T phiK + dz ksum),
///         dphiK = scale (V dN^T phiQ + 1 dz^T phiQ), dV = A^T dN,
///     with ksum = phiK^T 1 (1 x dk).
void Differentiator::linearAttention(DotProductAttentionOp op, Value g) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  llvm::APFloat scale = op.getScale();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value phiQ = mapped(op, q), phiK = mapped(op, k);
  auto step = [&](NormKind kind, NormAxis axis, double eps = 0.0) {
    return NormStepAttr::get(context, kind, axis, llvm::APFloat(eps));
  };
  std::optional<NormStepAttr> sum;
  SmallVector<Attribute> rowList, columnList;
  for (Attribute attr : op.getNorm()) {
    auto normStep = cast<NormStepAttr>(attr);
    if (normStep.getKind() == NormKind::sum) {
      sum = normStep;
      continue;
    }
    rowList.push_back(normStep);
    // Keys become the rows of dphiK and dV: a count over keys (divide by
    // m) becomes a count over their queries.
    columnList.push_back(normStep.getKind() == NormKind::count
                             ? step(NormKind::count, NormAxis::queries)
                             : normStep);
  }
  if (rowList.empty()) {
    rowList.push_back(step(NormKind::none, NormAxis::keys));
    columnList.push_back(step(NormKind::none, NormAxis::keys));
  }
  ArrayAttr rows = ArrayAttr::get(context, rowList);
  ArrayAttr columns = ArrayAttr::get(context, columnList);
  auto attention = [&](Value query, Value key, Value value, ArrayAttr norm) {
    return DotProductAttentionOp::create(b, loc, query, key, value, Value(),
                                         norm, scale)
        .getResult();
  };
  // save-statistics: the forward's context C = phi(K)^T V and key sums
  // phi(K)^T 1 (savesLinearContext: no count steps, so `rows` is [none]):
  // the numerator's adjoint scale dN V^T phi(K) is scale dN C^T, one
  // product over the n rows instead of two (C over the m keys).
  auto [savedContext, savedKeySums] = savedLinearContext.lookup(op);
  auto timesContext = [&](Value x) -> Value {
    if (!savedContext)
      return attention(x, v, phiK, rows);
    return ScaleOp::create(b, loc,
                           MatmulOp::create(b, loc, x, savedContext,
                                            /*transposeLhs=*/false,
                                            /*transposeRhs=*/true),
                           scale);
  };
  Value dPhiQ, dPhiK, dV;
  if (!sum) {
    dPhiQ = timesContext(g);
    dPhiK = attention(v, g, phiQ, columns);
    dV = attention(phiK, phiQ, g, columns);
  } else {
    llvm::APFloat eps = sum->getEps();
    int64_t keyRank = cast<RankedTensorType>(phiK.getType()).getRank();
    int64_t rank = cast<RankedTensorType>(g.getType()).getRank();
    Value keySum =
        savedKeySums
            ? savedKeySums
            : ReduceSumOp::create(b, loc, phiK, keyRank - 2).getResult();
    Value rowSum = ScaleOp::create(
        b, loc, MatmulOp::create(b, loc, phiQ, keySum, false, true), scale);
    Value dN = DivOp::create(b, loc, g, rowSum, eps);
    // rowsum(dO O) = rowsum(dN N) = rowsum(phiQ dNumerator), where
    // dNumerator, the numerator's adjoint in phiQ, is dPhiQ's main term:
    // the forward output is not recomputed (one product over n rows less).
    Value dNumerator = timesContext(dN);
    Value gO = ReduceSumOp::create(
        b, loc, MulOp::create(b, loc, phiQ, dNumerator), rank - 1);
    Value dZ = neg(loc, DivOp::create(b, loc, gO, rowSum, eps));
    Value rowTerm = ScaleOp::create(b, loc, MulOp::create(b, loc, dZ, keySum),
                                    scale);
    Value columnTerm = ScaleOp::create(
        b, loc, MatmulOp::create(b, loc, dZ, phiQ, true, false), scale);
    dPhiQ = AddOp::create(b, loc, dNumerator, rowTerm);
    dPhiK =
        AddOp::create(b, loc, attention(v, dN, phiQ, rows), columnTerm);
    dV = attention(phiK, phiQ, dN, rows);
  }
  // Summed over broadcast dims before phi' (elementwise in the operand).
  accumulate(q, throughMap(op, q, unbroadcast(loc, dPhiQ, q)));
  accumulate(k, throughMap(op, k, unbroadcast(loc, dPhiK, k)));
  accumulate(v, unbroadcast(loc, dV, v));
}

Value Differentiator::mapped(DotProductAttentionOp op, Value x) {
  if (op.getFeatureMap() == FeatureMap::identity)
    return x;
  return FeatureMapOp::create(b, op.getLoc(), op.getFeatureMap(), x);
}

Value Differentiator::throughMap(DotProductAttentionOp op, Value x,
                                 Value dPhi) {
  if (op.getFeatureMap() == FeatureMap::identity)
    return dPhi;
  return FeatureMapGradOp::create(b, op.getLoc(), op.getFeatureMap(), x, dPhi);
}

/// O = softmax_keys(scale phi(Q) phi(K)^T [causal]) V: one
/// attn.attention_grad gives d phi(Q), d phi(K) and dV over the broadcast
/// batch (design §7: dS = P (dP - rowsum(dO O)), recomputed per block), then
/// the sums over broadcast dims and the feature map's derivative.
void Differentiator::softmaxAttention(DotProductAttentionOp op, Value g) {
  Location loc = op.getLoc();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value phiQ = mapped(op, q), phiK = mapped(op, k);
  auto grad = AttentionGradOp::create(
      b, loc, phiQ, phiK, v, g, op.getMask(), savedLse.lookup(op),
      savedOutput.lookup(op), op.getScale(), op.getCausal());
  // phi' is elementwise in the operand, so the sums over broadcast dims go
  // first (feature_map_grad takes operands of one shape).
  accumulate(q, throughMap(op, q, unbroadcast(loc, grad.getDquery(), q)));
  accumulate(k, throughMap(op, k, unbroadcast(loc, grad.getDkey(), k)));
  accumulate(v, unbroadcast(loc, grad.getDvalue(), v));
}

/// E = RQ C, RQ the softmax of each query over its dk features and C the
/// forward's saved normalized context RK^T V, RK the softmax of each key
/// feature over the m positions (save-statistics):
///   dC = RQ^T dE (plus the context result's own adjoint, if f returns it),
///   dQ from dRQ = dE C^T through the row softmax (normalize),
///   dV = RK dC, dRK = V dC^T,
///   dK = RK o (dRK - s), s_j = sum_n dRK[n,j] RK[n,j] = sum_e dC[j,e] C[j,e]:
/// the trace form of the column softmax's backward (dk x dv values, not a
/// pass over the positions; the canonicalizer finds it for a recomputed C,
/// SumOfProductFromContraction), for static shapes. Four products, the
/// forward's two transposed: none recomputes C.
void Differentiator::efficient(EfficientAttentionOp op, Value g, Value context,
                               Value keyLse) {
  Value contextAdjoint = op.getNormalizedContext()
                             ? adjointOf(op.getNormalizedContext())
                             : Value();
  if (!g && !contextAdjoint)
    return; // neither result reaches an output
  Location loc = op.getLoc();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  auto keyType = cast<RankedTensorType>(k.getType());
  int64_t rank = keyType.getRank();
  llvm::APFloat noEps(0.0);
  Value dC;
  if (g) {
    auto rq =
        NormalizeOp::create(b, loc, NormKind::softmax, q, rank - 1, noEps);
    dC = MatmulOp::create(b, loc, rq, g, /*transposeLhs=*/true,
                          /*transposeRhs=*/false);
    normalize(rq, MatmulOp::create(b, loc, g, context, /*transposeLhs=*/false,
                                   /*transposeRhs=*/true));
  }
  if (contextAdjoint)
    dC = dC ? AddOp::create(b, loc, dC, contextAdjoint).getResult()
            : contextAdjoint;
  // (From the forward's key log-sum-exp: no pass over K for its max and
  // sum.)
  Value rk =
      keyLse
          ? SoftmaxFromLseOp::create(b, loc, k, keyLse, rank - 2).getResult()
          : NormalizeOp::create(b, loc, NormKind::softmax, k, rank - 2, noEps)
                .getResult();
  accumulate(v, MatmulOp::create(b, loc, rk, dC));
  Value dRK = MatmulOp::create(b, loc, v, dC, /*transposeLhs=*/false,
                               /*transposeRhs=*/true);
  auto contextType = cast<RankedTensorType>(context.getType());
  if (!keyType.hasStaticShape() || !contextType.hasStaticShape()) {
    accumulate(k, softmaxAdjoint(loc, rk, dRK, rank - 2));
    return;
  }
  // s as a row (..., 1, dk): the row sums (..., dk, 1) reshaped.
  Value rowSums =
      ReduceSumOp::create(b, loc, MulOp::create(b, loc, dC, context), rank - 1);
  SmallVector<ReassociationIndices> groups;
  for (int64_t dim = 0; dim < rank - 2; ++dim)
    groups.push_back({dim});
  groups.push_back({rank - 2, rank - 1});
  SmallVector<int64_t> rowShape(keyType.getShape().drop_back(2));
  rowShape.append({1, keyType.getShape().back()});
  Value flat = tensor::CollapseShapeOp::create(b, loc, rowSums, groups);
  Value s = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(rowShape, keyType.getElementType()), flat,
      groups);
  accumulate(
      k, MulOp::create(b, loc, rk, AddOp::create(b, loc, dRK, neg(loc, s))));
}

/// Multi-scale deformable attention: one attn.deformable_grad gives the
/// value, location and weight gradients (design §7: the bilinear weights'
/// derivatives times the corners' dots with dO, and the scatter of dO into
/// the corners), with the operands' shapes.
void Differentiator::deformable(DeformableAttentionOp op, Value g) {
  auto grad = DeformableGradOp::create(
      b, op.getLoc(), op.getValue(), op.getSamplingLocations(),
      op.getAttentionWeights(), g, op.getSpatialShapesAttr(),
      op.getAlignCorners());
  accumulate(op.getValue(), grad.getDvalue());
  accumulate(op.getSamplingLocations(), grad.getDsamplingLocations());
  accumulate(op.getAttentionWeights(), grad.getDattentionWeights());
}

/// y = normalize(x) along `dim`:
///   softmax  dx = y (g - sum(g y))
///   sum      dx = (g - sum(g y)) / (eps + sum(x))
///   count    dx = g / length (a count of g)
Value Differentiator::centered(Location loc, Value y, Value g, int64_t dim) {
  Value dot = ReduceSumOp::create(b, loc, MulOp::create(b, loc, g, y), dim);
  return AddOp::create(b, loc, g, neg(loc, dot));
}

void Differentiator::normalize(NormalizeOp op, Value g) {
  Location loc = op.getLoc();
  Value x = op.getInput(), y = resultOf(op);
  int64_t dim = op.getDim();
  switch (op.getKind()) {
  case NormKind::softmax:
    accumulate(x, softmaxAdjoint(loc, y, g, dim));
    return;
  case NormKind::sum: {
    Value total = ReduceSumOp::create(b, loc, x, dim);
    accumulate(
        x, DivOp::create(b, loc, centered(loc, y, g, dim), total, op.getEps()));
    return;
  }
  case NormKind::count:
    accumulate(x, NormalizeOp::create(b, loc, NormKind::count, g, dim,
                                      llvm::APFloat(0.0)));
    return;
  case NormKind::none:
    accumulate(x, g);
    return;
  }
}

/// The slice's adjoint placed into zeros of the source's shape (offsets
/// and sizes may be index values).
LogicalResult Differentiator::extractSlice(tensor::ExtractSliceOp op,
                                           Value g) {
  if (op.getType().getRank() != op.getSourceType().getRank())
    return op.emitError("--attn-grad differentiates tensor.extract_slice "
                        "with no rank reduction only");
  Location loc = op.getLoc();
  accumulate(op.getSource(), tensor::InsertSliceOp::create(
                                 b, loc, g, zerosOfType(loc, op.getSource()),
                                 op.getMixedOffsets(), op.getMixedSizes(),
                                 op.getMixedStrides()));
  return success();
}

/// The source's adjoint is the slice of g; the dest's is g with that slice
/// zeroed (those elements were overwritten). A constant dest gets none.
LogicalResult Differentiator::insertSlice(tensor::InsertSliceOp op, Value g) {
  if (op.getType().getRank() != op.getSourceType().getRank())
    return op.emitError("--attn-grad differentiates tensor.insert_slice "
                        "with no rank reduction only");
  Location loc = op.getLoc();
  accumulate(op.getSource(),
             tensor::ExtractSliceOp::create(
                 b, loc, op.getSourceType(), g, op.getMixedOffsets(),
                 op.getMixedSizes(), op.getMixedStrides()));
  if (op.getDest().getDefiningOp<arith::ConstantOp>())
    return success();
  accumulate(op.getDest(), tensor::InsertSliceOp::create(
                               b, loc, zerosOfType(loc, op.getSource()), g,
                               op.getMixedOffsets(), op.getMixedSizes(),
                               op.getMixedStrides()));
  return success();
}

/// y = pad(x) with a constant: dx is the block of g where x was written
/// (the padding is a constant, so it passes nothing back).
void Differentiator::pad(tensor::PadOp op, Value g) {
  Location loc = op.getLoc();
  Value source = op.getSource();
  int64_t rank = op.getSourceType().getRank();
  accumulate(source, tensor::ExtractSliceOp::create(
                         b, loc, op.getSourceType(), g, op.getMixedLowPad(),
                         tensor::getMixedSizes(b, loc, source),
                         SmallVector<OpFoldResult>(rank, b.getIndexAttr(1))));
}

LogicalResult Differentiator::differentiate(Operation *op) {
  if (auto efficientOp = dyn_cast<EfficientAttentionOp>(op)) {
    if (Value lse = efficientOp.getKeyLse(); lse && adjointOf(lse))
      return op->emitError("--attn-grad does not differentiate the key "
                           "log-sum-exp of attn.efficient (`with_context`): "
                           "it reaches a result of the function");
    Value context = savedContext.lookup(op);
    if (!context)
      return op->emitError("--attn-grad: this attention should have been "
                           "lowered to primitives");
    efficient(efficientOp,
              refinedAdjoint(op, adjointOf(efficientOp.getResult())), context,
              savedKeyLse.lookup(op));
    return success();
  }
  if (auto attention = dyn_cast<DotProductAttentionOp>(op)) {
    if (Value lse = attention.getLse(); lse && adjointOf(lse))
      return op->emitError("--attn-grad does not differentiate the row "
                           "log-sum-exp of attn.dot_product (`with_lse`): "
                           "it reaches a result of the function");
  } else if (op->getNumResults() != 1) {
    return op->emitError("--attn-grad has no adjoint rule for '")
           << op->getName() << "'";
  }
  Value g = adjointOf(resultOf(op));
  if (!g)
    return success(); // the result does not reach any output
  if (resultOf(op) == op->getResult(0))
    g = refinedAdjoint(op, g);
  Location loc = op->getLoc();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](MatmulOp op) {
        matmul(op, g);
        return success();
      })
      .Case([&](NormalizeOp op) {
        normalize(op, g);
        return success();
      })
      .Case([&](DotProductAttentionOp op) -> LogicalResult {
        if (hasFusedSoftmaxGradient(op, noGrad)) {
          softmaxAttention(op, g);
          return success();
        }
        if (!hasLinearGradient(op))
          return op.emitError("--attn-grad: this attention should have been "
                              "lowered to primitives");
        linearAttention(op, g);
        return success();
      })
      .Case([&](DeformableAttentionOp op) {
        deformable(op, g);
        return success();
      })
      .Case([&](ScaleOp op) {
        accumulate(op.getInput(), ScaleOp::create(b, loc, g, op.getFactor()));
        return success();
      })
      .Case([&](SoftmaxFromLseOp op) {
        // y = exp(x - lse): dx = g y, dlse = -sum over dim of g y.
        Value gy = MulOp::create(b, loc, g, op.getResult());
        accumulate(op.getInput(), gy);
        accumulate(op.getLse(),
                   neg(loc, ReduceSumOp::create(b, loc, gy, op.getDim())));
        return success();
      })
      .Case([&](FeatureMapOp op) {
        if (op.getKind() == FeatureMap::identity)
          accumulate(op.getInput(), g);
        else
          accumulate(op.getInput(), FeatureMapGradOp::create(
                                        b, loc, op.getKind(), op.getInput(),
                                        g));
        return success();
      })
      .Case([&](PrefixSumOp op) {
        accumulate(op.getInput(),
                   PrefixSumOp::create(b, loc, g, op.getDim(),
                                       op.getExclusive(), !op.getReverse()));
        return success();
      })
      .Case([&](CausalMaskOp op) {
        accumulate(op.getInput(),
                   CausalMaskOp::create(b, loc, g, llvm::APFloat(0.0)));
        return success();
      })
      .Case([&](AddOp op) {
        accumulate(op.getLhs(), unbroadcast(loc, g, op.getLhs()));
        accumulate(op.getRhs(), unbroadcast(loc, g, op.getRhs()));
        return success();
      })
      .Case([&](MulOp op) {
        Value lhs = op.getLhs(), rhs = op.getRhs();
        accumulate(lhs, unbroadcast(loc, MulOp::create(b, loc, g, rhs), lhs));
        accumulate(rhs, unbroadcast(loc, MulOp::create(b, loc, g, lhs), rhs));
        return success();
      })
      .Case([&](DivOp op) {
        // y = l / (r + eps): dl = g / (r + eps), dr = -g y / (r + eps).
        Value lhs = op.getLhs(), rhs = op.getRhs();
        Value dLhs = DivOp::create(b, loc, g, rhs, op.getEps());
        Value gy = MulOp::create(b, loc, g, op.getResult());
        Value dRhs = neg(loc, DivOp::create(b, loc, gy, rhs, op.getEps()));
        accumulate(lhs, unbroadcast(loc, dLhs, lhs));
        accumulate(rhs, unbroadcast(loc, dRhs, rhs));
        return success();
      })
      .Case([&](ReduceSumOp op) {
        accumulate(op.getInput(),
                   BroadcastOp::create(b, loc, g, op.getInput()));
        return success();
      })
      .Case([&](GatherPixelsOp op) {
        // The pixels are integer-valued (a floor plus a corner offset): no
        // gradient flows to them.
        Value value = op.getValue();
        Value scattered = ScatterPixelsOp::create(b, loc, g, op.getPixels(),
                                                  op.getSpatialShapesAttr());
        if (scattered.getType() != value.getType())
          scattered = tensor::CastOp::create(b, loc, value.getType(),
                                             scattered);
        accumulate(value, scattered);
        return success();
      })
      .Case<FloorOp, arith::ConstantOp>(
          [](Operation *) { return success(); }) // piecewise constant
      .Case([&](arith::ExtFOp op) {
        accumulate(op.getIn(), arith::TruncFOp::create(
                                   b, loc, withElementOf(g, op.getIn()), g));
        return success();
      })
      .Case([&](arith::TruncFOp op) {
        accumulate(op.getIn(), arith::ExtFOp::create(
                                   b, loc, withElementOf(g, op.getIn()), g));
        return success();
      })
      .Case([&](tensor::CastOp op) {
        accumulate(op.getSource(), tensor::CastOp::create(
                                       b, loc, op.getSource().getType(), g));
        return success();
      })
      .Case([&](tensor::ExpandShapeOp op) {
        accumulate(op.getSrc(),
                   tensor::CollapseShapeOp::create(
                       b, loc, op.getSrcType(), g,
                       op.getReassociationIndices()));
        return success();
      })
      .Case([&](tensor::CollapseShapeOp op) {
        accumulate(op.getSrc(),
                   tensor::ExpandShapeOp::create(
                       b, loc, op.getSrcType(), g,
                       op.getReassociationIndices()));
        return success();
      })
      .Case([&](tensor::ExtractSliceOp op) { return extractSlice(op, g); })
      .Case([&](tensor::InsertSliceOp op) { return insertSlice(op, g); })
      .Case([&](tensor::PadOp op) -> LogicalResult {
        if (!matchPattern(op.getConstantPaddingValue(), m_Constant()))
          return op.emitError("--attn-grad differentiates tensor.pad with a "
                              "constant padding value only");
        pad(op, g);
        return success();
      })
      .Default([&](Operation *op) {
        InFlightDiagnostic diag =
            op->emitError("--attn-grad has no adjoint rule for '")
            << op->getName() << "'";
        if (isa<BilinearGatherOp>(op))
          diag << " with dynamic sizes (its primitive form needs static "
                  "shapes)";
        else if (op->getNumRegions())
          diag << " (run --attn-grad before --attn-reassociate)";
        return diag;
      });
}

/// Whether `type` is a ranked float tensor (what the rules handle).
bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// Whether save-statistics saves the normalized context of attn.efficient
/// `op` (`with_context`, whose rule the verifier states: softmax, f32 or
/// f64, no broadcast batch); others are lowered to primitives and
/// recompute it.
bool savesContext(EfficientAttentionOp op) {
  auto shape = [](Value value) {
    return cast<RankedTensorType>(value.getType()).getShape().drop_back(2);
  };
  Type element = op.getResult().getType().getElementType();
  return op.getVariant() == EfficientVariant::softmax &&
         (element.isF32() || element.isF64()) &&
         shape(op.getKey()) == shape(op.getQuery()) &&
         shape(op.getValue()) == shape(op.getQuery());
}

/// Whether save-statistics saves the context phi(K)^T V (and key sums
/// phi(K)^T 1) of linear attention `op`: non-causal, no mask, no count
/// step, f32 or f64, static sizes, no broadcast batch, and where
/// --attn-reassociate rewrites it to phi(Q) (phi(K)^T V) (fewer MACs than
/// the quadratic form, by the formulas the pass's costs follow). @f then
/// computes it in that form, which has the context, instead of
/// recomputing the context in @f_grad.
bool savesLinearContext(DotProductAttentionOp op) {
  if (!hasLinearGradient(op) || op.getLse())
    return false;
  bool rowSums = false;
  for (Attribute attr : op.getNorm()) {
    NormKind kind = cast<NormStepAttr>(attr).getKind();
    if (kind == NormKind::count)
      return false;
    rowSums |= kind == NormKind::sum;
  }
  auto typeOf = [](Value value) {
    return cast<RankedTensorType>(value.getType());
  };
  RankedTensorType q = typeOf(op.getQuery()), k = typeOf(op.getKey()),
                   v = typeOf(op.getValue());
  for (RankedTensorType type : {q, k, v})
    if (!type.hasStaticShape() ||
        !(type.getElementType().isF32() || type.getElementType().isF64()) ||
        type.getShape().drop_back(2) != q.getShape().drop_back(2))
      return false;
  SaturatingCount batch{1};
  for (int64_t size : q.getShape().drop_back(2))
    batch = batch * SaturatingCount{uint64_t(size)};
  auto count = [](int64_t size) { return SaturatingCount{uint64_t(size)}; };
  int64_t rank = q.getRank();
  SaturatingCount n = count(q.getDimSize(rank - 2)),
                  m = count(k.getDimSize(rank - 2)),
                  dk = count(q.getDimSize(rank - 1)),
                  dv = count(v.getDimSize(rank - 1));
  return linearAttentionMacs(batch, batch, n, m, dk, dv, rowSums).value <
         quadraticAttentionMacs(batch, n, m, dk, dv).value;
}

/// Whether save-statistics saves the weights of double-normalized
/// attention `op`: attn.external, or attn.dot_product that --attn-grad
/// lowers to primitives with steps over queries or more than one step,
/// whose first step is a softmax, on f32 or f64. @f then computes `op` in
/// primitive form and returns P, the first step's result (n x m, EANet's
/// softmax over positions: 4096 x 64 at n = 4096, S = 64); @f_grad takes it
/// instead of recomputing the scores, one product, and the softmax, whose
/// backward needs only P (PyTorch's autograd keeps these weights too).
bool savesWeights(Operation *op) {
  Type element;
  if (auto external = dyn_cast<ExternalAttentionOp>(op)) {
    element = external.getType().getElementType();
  } else if (auto attention = dyn_cast<DotProductAttentionOp>(op)) {
    if (!isDoubleNormalization(attention) ||
        normSteps(attention).front().getKind() != NormKind::softmax)
      return false;
    element = attention.getResult().getType().getElementType();
  } else {
    return false;
  }
  return (element.isF32() || element.isF64()) &&
         reducedPrecisionBlocker(op).empty();
}

/// `op` (savesWeights) replaced by its primitive form; returns the form's
/// first attn.normalize, whose result is the weights.
FailureOr<NormalizeOp> lowerSavingWeights(Operation *op) {
  OpBuilder b(op);
  std::string whyNot;
  FailureOr<DoubleNormForm> form = buildDoubleNormForm(b, op, whyNot);
  if (failed(form) || !form->firstStep)
    return op->emitError("--attn-grad=save-statistics: no primitive form to "
                         "save the weights of: ")
           << whyNot;
  op->getResult(0).replaceAllUsesWith(form->result);
  op->erase();
  return form->firstStep;
}

/// The ops of `f`'s body whose gradient takes what the forward saves
/// (save-statistics), in order: attention ops whose gradient is one
/// attn.attention_grad (their row log-sum-exp, and output), attn.efficient
/// ops (their normalized context), linear attention (its context and key
/// sums) and double-normalized attention (its weights).
SmallVector<Operation *> opsWithSavedValues(func::FuncOp f,
                                            const NoGradArgs &noGrad) {
  SmallVector<Operation *> ops;
  for (Operation &op : f.getBody().front()) {
    auto attention = dyn_cast<DotProductAttentionOp>(op);
    auto efficient = dyn_cast<EfficientAttentionOp>(op);
    if ((attention && (hasFusedSoftmaxGradient(attention, noGrad) ||
                       savesLinearContext(attention))) ||
        (efficient && savesContext(efficient)) || savesWeights(&op))
      ops.push_back(&op);
  }
  return ops;
}

/// `op` rebuilt with the unit attribute `flag`, which adds a result (the
/// result types are inferred), its first result's uses moved to the new op.
/// A result declared less static than inferred (`tensor<?x48xf32>`) keeps
/// its declared type for those uses through a cast.
template <typename OpTy>
OpTy withResultFlag(OpTy op, StringAttr flag) {
  OpBuilder b(op);
  SmallVector<NamedAttribute> attrs(op->getAttrs());
  attrs.push_back(b.getNamedAttr(flag, b.getUnitAttr()));
  auto saving = OpTy::create(b, op.getLoc(), op->getOperands(), attrs);
  Value result = saving.getResult();
  if (result.getType() != op.getResult().getType())
    result = tensor::CastOp::create(b, op.getLoc(), op.getResult().getType(),
                                    result);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return saving;
}

/// `op` with the `with_lse` result (the op itself if it has it).
DotProductAttentionOp withLse(DotProductAttentionOp op) {
  return op.getLse() ? op : withResultFlag(op, op.getWithLseAttrName());
}

/// `op` with the `with_context` result (the op itself if it has it).
EfficientAttentionOp withContext(EfficientAttentionOp op) {
  return op.getNormalizedContext()
             ? op
             : withResultFlag(op, op.getWithContextAttrName());
}

/// `op` without the `with_lse` result when nothing reads it (the gradient's
/// copy of the forward lowers and differentiates the plain op).
void dropUnusedLse(DotProductAttentionOp op) {
  if (!op.getLse() || !op.getLse().use_empty())
    return;
  OpBuilder b(op);
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : op->getAttrs())
    if (attr.getName() != op.getWithLseAttrName())
      attrs.push_back(attr);
  auto plain = DotProductAttentionOp::create(
      b, op.getLoc(), TypeRange{op.getResult().getType()}, op->getOperands(),
      attrs);
  op.getResult().replaceAllUsesWith(plain.getResult());
  op.erase();
}

/// Adds @f_grad next to `f`; with `saveStatistics`, f also returns the row
/// log-sum-exp of its fused softmax attention ops and @f_grad takes them.
LogicalResult buildGradient(func::FuncOp f, SymbolTable &symbols,
                            bool primitiveDeformable, bool saveStatistics) {
  std::string name = (f.getSymName() + "_grad").str();
  if (symbols.lookup(name))
    return f.emitError("--attn-grad: @")
           << name << " already exists (rename it, or mark @"
           << f.getSymName() << " as a gradient with `" << kGradientOf << "`)";
  if (!f.getBody().hasOneBlock())
    return f.emitError("--attn-grad differentiates single-block functions "
                       "only");
  for (Type type : f.getFunctionType().getInputs())
    if (!isFloatTensor(type))
      return f.emitError("--attn-grad: argument of type ")
             << type << " is not a ranked float tensor";
  for (Type type : f.getFunctionType().getResults())
    if (!isFloatTensor(type))
      return f.emitError("--attn-grad: result of type ")
             << type << " is not a ranked float tensor";

  MLIRContext *context = f.getContext();
  NoGradArgs noGrad(f.getNumArguments());
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    noGrad[i] = static_cast<bool>(f.getArgAttr(i, kNoGrad));
  func::FuncOp grad = f.clone();
  grad.setSymName(name);
  grad.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  grad.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  grad->setAttr(kGradientOf, FlatSymbolRefAttr::get(f.getSymNameAttr()));
  symbols.insert(grad, std::next(Block::iterator(f)));
  // bf16 and f16 ops compute in f32 (the adjoints too); the arith.extf and
  // arith.truncf at the boundaries round the gradients to their types.
  widenToF32(grad);

  // save-statistics: the clone's ops that take saved values, paired in
  // order with f's (the clone is f's copy, so both lists match), take the
  // log-sum-exp (and output) or the normalized context; f returns them.
  SmallVector<Operation *> savingOps, cloneOps;
  llvm::SmallPtrSet<Operation *, 4> keptEfficient;
  if (saveStatistics) {
    // bf16 and f16 ops compute in f32 in @f too (as the default pipeline
    // makes them before codegen anyway), so they save what f32 ops save,
    // in f32 (design §8: statistics are f32; an output saved for D is the
    // unrounded one). Rebuilt from bf16 operands, a saving op inferred bf16
    // results (a return that no longer matched, a refused `with_context`).
    widenToF32(f);
    savingOps = opsWithSavedValues(f, noGrad);
    cloneOps = opsWithSavedValues(grad, noGrad);
    // Double-normalized attention in primitive form, in f and in the clone;
    // both lists then name the first step's attn.normalize.
    for (SmallVector<Operation *> *ops : {&savingOps, &cloneOps})
      for (Operation *&op : *ops) {
        if (!savesWeights(op))
          continue;
        FailureOr<NormalizeOp> firstStep = lowerSavingWeights(op);
        if (failed(firstStep))
          return failure();
        op = *firstStep;
      }
    for (Operation *&op : savingOps) {
      if (isa<NormalizeOp>(op))
        continue;
      if (auto attention = dyn_cast<DotProductAttentionOp>(op)) {
        if (!savesLinearContext(attention))
          op = withLse(attention);
      } else {
        op = withContext(cast<EfficientAttentionOp>(op));
      }
    }
    for (Operation *op : cloneOps)
      if (isa<EfficientAttentionOp>(op))
        keptEfficient.insert(op);
  }
  for (auto op : llvm::make_early_inc_range(
           grad.getBody().getOps<DotProductAttentionOp>()))
    if (!llvm::is_contained(cloneOps, op.getOperation()))
      dropUnusedLse(op);

  // Causal linear attention first becomes its chunked form (whose inner
  // causal attention the next walk lowers).
  RewritePatternSet chunking(context);
  chunking.add<ChunkCausalLinear>(context);
  walkAndApplyPatterns(grad, std::move(chunking));
  // The forward in primitive form: every rule below is for a primitive.
  RewritePatternSet patterns(context);
  populateLowerDoubleNormPatterns(
      patterns, [&noGrad](DotProductAttentionOp op) {
        return !hasLinearGradient(op) && !hasFusedSoftmaxGradient(op, noGrad);
      });
  populateLowerDeformablePatterns(patterns, /*bilinearGather=*/true,
                                  /*deformable=*/primitiveDeformable);
  patterns.add<LowerEfficient>(context, keptEfficient);
  walkAndApplyPatterns(grad, std::move(patterns));

  Block &body = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(ret);
  Differentiator differentiator(b, noGrad);
  SmallVector<Type> inputs(f.getFunctionType().getInputs());
  for (Value result : ret.getOperands()) {
    BlockArgument cotangent = body.addArgument(result.getType(), f.getLoc());
    inputs.push_back(result.getType());
    differentiator.accumulate(result, cotangent);
  }
  // The saved statistics follow the cotangents (the ABI, docs/training.md):
  // per op its lse, then its output; or its context,
  // then a linear attention's key sums; or its weights. Each is marked with
  // its kind, "lse", "output", "context", "key_sums" or "weights" (tools
  // name them so).
  SmallVector<std::pair<Value, StringRef>> forwardSaved;
  auto addSaved = [&](Value saved, StringRef kind) {
    Value arg = body.addArgument(saved.getType(), f.getLoc());
    inputs.push_back(saved.getType());
    forwardSaved.push_back({saved, kind});
    return arg;
  };
  for (auto [savingOp, op] : llvm::zip_equal(savingOps, cloneOps)) {
    if (auto weights = dyn_cast<NormalizeOp>(savingOp)) {
      differentiator.saveWeights(cast<NormalizeOp>(op),
                                 addSaved(weights.getResult(), "weights"));
      continue;
    }
    if (auto linear = dyn_cast<DotProductAttentionOp>(savingOp);
        linear && savesLinearContext(linear)) {
      // @f computes the linear form, whose context (and key sums) it saves.
      OpBuilder forwardBuilder(linear);
      std::string whyNot;
      FailureOr<LinearAttentionForm> form =
          buildLinearAttentionForm(forwardBuilder, linear, whyNot);
      if (failed(form))
        return linear.emitError("--attn-grad=save-statistics: no linear form "
                                "to save the context of: ")
               << whyNot;
      linear.getResult().replaceAllUsesWith(form->result);
      linear.erase();
      Value context = addSaved(form->context, "context");
      Value keySums =
          form->keySums ? addSaved(form->keySums, "key_sums") : Value();
      differentiator.saveLinearContext(op, context, keySums);
      continue;
    }
    if (auto efficient = dyn_cast<EfficientAttentionOp>(savingOp)) {
      Value context = addSaved(efficient.getNormalizedContext(), "context");
      differentiator.saveContext(op, context,
                                 addSaved(efficient.getKeyLse(), "key_lse"));
      continue;
    }
    auto saving = cast<DotProductAttentionOp>(savingOp);
    Value lse = addSaved(saving.getLse(), "lse");
    // And O (D = rowsum(dO O) in the backward instead of a second pass),
    // unrounded (the op is f32 or f64 here, design §8).
    differentiator.saveStatistics(op, lse,
                                  addSaved(saving.getResult(), "output"));
  }
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward))
    if (failed(differentiator.differentiate(op)))
      return failure();

  SmallVector<Value> gradients;
  SmallVector<Type> results;
  for (BlockArgument arg : f.getArguments()) {
    if (f.getArgAttr(arg.getArgNumber(), kNoGrad))
      continue;
    BlockArgument primal = body.getArgument(arg.getArgNumber());
    Value gradient = differentiator.adjointOf(primal);
    if (!gradient)
      gradient = differentiator.zerosLike(f.getLoc(), primal);
    if (gradient.getType() != primal.getType())
      gradient =
          tensor::CastOp::create(b, f.getLoc(), primal.getType(), gradient);
    gradients.push_back(gradient);
    results.push_back(primal.getType());
  }
  func::ReturnOp::create(b, ret.getLoc(), gradients);
  ret.erase();
  grad.setFunctionType(FunctionType::get(context, inputs, results));
  unsigned firstSaved = inputs.size() - forwardSaved.size();
  for (auto [i, saved] : llvm::enumerate(forwardSaved))
    grad.setArgAttr(firstSaved + i, kSavedStatistics,
                    StringAttr::get(context, saved.second));

  // f returns the saved statistics after its own results.
  if (!forwardSaved.empty()) {
    auto forwardReturn =
        cast<func::ReturnOp>(f.getBody().front().getTerminator());
    unsigned firstSavedResult = forwardReturn.getNumOperands();
    SmallVector<Type> forwardResults(f.getFunctionType().getResults());
    for (auto [saved, kind] : forwardSaved) {
      forwardReturn.getOperandsMutable().append(saved);
      forwardResults.push_back(saved.getType());
    }
    f.setFunctionType(FunctionType::get(
        context, f.getFunctionType().getInputs(), forwardResults));
    for (auto [i, saved] : llvm::enumerate(forwardSaved))
      f.setResultAttr(firstSavedResult + i, kSavedStatistics,
                      StringAttr::get(context, saved.second));
  }

  // The forward ops whose values no adjoint reads are dead.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  return success();
}

struct AttnGradPass : mlir::attn::impl::AttnGradPassBase<AttnGradPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal() && !f->hasAttr(kGradientOf) &&
          (this->funcs.empty() ||
           llvm::is_contained(this->funcs, f.getSymName())))
        funcs.push_back(f);
    for (const std::string &name : this->funcs)
      if (!symbols.lookup<func::FuncOp>(name)) {
        mlir::emitError(module.getLoc(), "--attn-grad: funcs names @")
            << name << ", which the module does not define";
        return signalPassFailure();
      }
    for (func::FuncOp f : funcs)
      if (failed(
              buildGradient(f, symbols, primitiveDeformable, saveStatistics)))
        return signalPassFailure();
  }
};

} // namespace
