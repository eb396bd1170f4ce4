//===- CostModel.cpp - MACs, FLOPs and memory of attn ops -----------------===//

#include "passes/CostModel.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

uint64_t mlir::attn::saturatingMul(uint64_t lhs, uint64_t rhs) {
  return llvm::SaturatingMultiply(lhs, rhs);
}

uint64_t mlir::attn::saturatingAdd(uint64_t lhs, uint64_t rhs) {
  return llvm::SaturatingAdd(lhs, rhs);
}

OpCost &OpCost::operator+=(const OpCost &other) {
  macs = saturatingAdd(macs, other.macs);
  flops = saturatingAdd(flops, other.flops);
  floats = saturatingAdd(floats, other.floats);
  elementwiseFlops = saturatingAdd(elementwiseFlops, other.elementwiseFlops);
  return *this;
}

static uint64_t product(ArrayRef<int64_t> dims) {
  uint64_t result = 1;
  for (int64_t dim : dims)
    result = saturatingMul(result, static_cast<uint64_t>(dim));
  return result;
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

static uint64_t numElements(Value value) { return product(shapeOf(value)); }

/// Elementwise FLOPs of one normalization step per element of its slice:
/// softmax = subtract max, exp, add to the sum, divide; sum = add, divide;
/// count = divide.
static uint64_t normFlopsPerElement(NormKind kind) {
  switch (kind) {
  case NormKind::softmax:
    return 4;
  case NormKind::sum:
    return 2;
  case NormKind::count:
    return 1;
  case NormKind::none:
    return 0;
  }
  llvm_unreachable("unknown NormKind");
}

/// elu+1 = exp or add; relu = max.
static uint64_t featureMapFlopsPerElement(FeatureMap map) {
  return map == FeatureMap::identity ? 0 : 1;
}

/// An elementwise op writes in place when an operand of the result's shape
/// has this op as its only user (Table 1's "normalization in place").
static bool canWriteInPlace(Operation *op) {
  for (Value operand : op->getOperands())
    if (operand.getType() == op->getResult(0).getType() && operand.hasOneUse())
      return true;
  return false;
}

static OpCost elementwise(Operation *op, uint64_t flopsPerElement) {
  OpCost cost;
  uint64_t elements = numElements(op->getResult(0));
  cost.elementwiseFlops = saturatingMul(elements, flopsPerElement);
  cost.flops = cost.elementwiseFlops;
  cost.floats = canWriteInPlace(op) ? 0 : elements;
  return cost;
}

/// Sets macs and flops = 2 * macs + elementwise.
static OpCost contraction(uint64_t macs, uint64_t elementwiseFlops,
                          uint64_t floats) {
  OpCost cost;
  cost.macs = macs;
  cost.elementwiseFlops = elementwiseFlops;
  cost.flops = saturatingAdd(saturatingMul(2, macs), elementwiseFlops);
  cost.floats = floats;
  return cost;
}

/// A sum of `input` into the new tensor `result` (reduce_sum, unbroadcast,
/// scatter_pixels): one add per input element.
static OpCost summation(Value input, Value result) {
  return contraction(0, numElements(input), numElements(result));
}

/// Batch (broadcast leading dims) of an attention-like op's result.
static uint64_t batchOf(Value result) {
  return product(shapeOf(result).drop_back(2));
}

static OpCost dotProductCost(DotProductAttentionOp op) {
  ArrayRef<int64_t> q = shapeOf(op.getQuery()), k = shapeOf(op.getKey()),
                    v = shapeOf(op.getValue());
  uint64_t batch = batchOf(op.getResult());
  uint64_t n = q[q.size() - 2], m = k[k.size() - 2], dk = q.back(),
           dv = v.back();
  uint64_t scores = saturatingMul(batch, saturatingMul(n, m));
  // Q K^T and P V.
  uint64_t macs =
      quadraticAttentionMacs<SaturatingCount>({batch}, {n}, {m}, {dk}, {dv})
          .value;
  uint64_t perScore = 0;
  for (Attribute step : op.getNorm())
    perScore += normFlopsPerElement(cast<NormStepAttr>(step).getKind());
  if (!op.getScale().isExactlyValue(1.0))
    perScore += 1;
  if (op.getMask())
    perScore += 1;
  uint64_t mapped = featureMapFlopsPerElement(op.getFeatureMap()) *
                    (numElements(op.getQuery()) + numElements(op.getKey()));
  uint64_t elementwiseFlops =
      saturatingAdd(saturatingMul(scores, perScore), mapped);
  uint64_t output = numElements(op.getResult());
  // with_lse: max + log(sum) per row, written as a float per row.
  if (Value lse = op.getLse()) {
    elementwiseFlops = saturatingAdd(elementwiseFlops, 2 * numElements(lse));
    output = saturatingAdd(output, numElements(lse));
  }
  return contraction(macs, elementwiseFlops, saturatingAdd(scores, output));
}

/// The fused softmax backward as code generation runs it: per visible-or-not
/// score, a pass by query rows (S, dP = dO V^T, dQ: 2 dk + dv MACs) and a
/// pass by keys (S, dP, dK, dV: 2 dk + 2 dv). It stores no score matrix:
/// its floats are the three gradients.
static OpCost attentionGradCost(AttentionGradOp op) {
  ArrayRef<int64_t> q = shapeOf(op.getQuery()), k = shapeOf(op.getKey()),
                    v = shapeOf(op.getValue());
  uint64_t batch = batchOf(op.getDquery());
  uint64_t n = q[q.size() - 2], m = k[k.size() - 2], dk = q.back(),
           dv = v.back();
  uint64_t scores = saturatingMul(batch, saturatingMul(n, m));
  uint64_t macs = saturatingMul(scores, 4 * dk + 3 * dv);
  // Per score and pass: scale, exp of S - lse, dP - D, times P. With a
  // saved lse (the forward's), the row pass takes no row max and exp sum.
  uint64_t perScore = 2 * (normFlopsPerElement(NormKind::softmax) + 3);
  if (op.getLse())
    perScore -= 2;
  if (op.getMask()) // added to the scores in both passes
    perScore += 2;
  uint64_t floats = saturatingAdd(
      numElements(op.getDquery()),
      saturatingAdd(numElements(op.getDkey()), numElements(op.getDvalue())));
  return contraction(macs, saturatingMul(scores, perScore), floats);
}

static OpCost efficientCost(EfficientAttentionOp op) {
  ArrayRef<int64_t> q = shapeOf(op.getQuery()), k = shapeOf(op.getKey()),
                    v = shapeOf(op.getValue());
  uint64_t batch = batchOf(op.getResult());
  uint64_t n = q[q.size() - 2], m = k[k.size() - 2], dk = q.back(),
           dv = v.back();
  uint64_t context = saturatingMul(batch, saturatingMul(dk, dv));
  // K^T V over m positions, then Q times the context.
  uint64_t macs = saturatingMul(context, n + m);
  uint64_t normalized = numElements(op.getQuery()) + numElements(op.getKey());
  uint64_t perElement = op.getVariant() == EfficientVariant::softmax
                            ? normFlopsPerElement(NormKind::softmax)
                            : 1;
  return contraction(macs, saturatingMul(normalized, perElement),
                     saturatingAdd(context, numElements(op.getResult())));
}

static OpCost externalCost(ExternalAttentionOp op) {
  ArrayRef<int64_t> x = shapeOf(op.getInput()), mk = shapeOf(op.getMemoryKey()),
                    mv = shapeOf(op.getMemoryValue());
  uint64_t batch = batchOf(op.getResult());
  uint64_t n = x[x.size() - 2], slots = mk[mk.size() - 2], d = x.back(),
           dv = mv.back();
  uint64_t scores = saturatingMul(batch, saturatingMul(n, slots));
  uint64_t perScore = normFlopsPerElement(NormKind::softmax) +
                      normFlopsPerElement(NormKind::sum);
  return contraction(saturatingMul(scores, d + dv),
                     saturatingMul(scores, perScore),
                     saturatingAdd(scores, numElements(op.getResult())));
}

/// Samples (N, Lq, M, L, P) times channels D; a bilinear sample is 4 MACs per
/// channel (one per corner).
static uint64_t sampledChannels(Value locations, Value value) {
  return saturatingMul(product(shapeOf(locations).drop_back()),
                       shapeOf(value).back());
}

CostStatus mlir::attn::estimateOpCost(Operation *op, OpCost &cost) {
  if (!isa<AttnDialect>(op->getDialect()))
    return CostStatus::NotModeled;
  auto isStatic = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.hasStaticShape();
  };
  if (!llvm::all_of(op->getOperandTypes(), isStatic) ||
      !llvm::all_of(op->getResultTypes(), isStatic))
    return CostStatus::DynamicSizes;

  cost = llvm::TypeSwitch<Operation *, OpCost>(op)
             .Case([](DotProductAttentionOp op) { return dotProductCost(op); })
             .Case([](EfficientAttentionOp op) { return efficientCost(op); })
             .Case([](AttentionGradOp op) { return attentionGradCost(op); })
             .Case([](ExternalAttentionOp op) { return externalCost(op); })
             .Case([](DeformableAttentionOp op) {
               uint64_t samples =
                   sampledChannels(op.getSamplingLocations(), op.getValue());
               // 4 corner MACs + 1 attention-weight MAC per sampled channel.
               return contraction(saturatingMul(samples, 5), 0,
                                  numElements(op.getResult()));
             })
             .Case([](DeformableGradOp op) {
               uint64_t samples =
                   sampledChannels(op.getSamplingLocations(), op.getValue());
               // Per sampled channel and corner: one MAC of the corner's
               // dot with the cotangent, one of the scatter into dvalue.
               // Its floats are the three gradients.
               uint64_t floats = saturatingAdd(
                   numElements(op.getDvalue()),
                   saturatingAdd(numElements(op.getDsamplingLocations()),
                                 numElements(op.getDattentionWeights())));
               return contraction(saturatingMul(samples, 8), 0, floats);
             })
             .Case([](BilinearGatherOp op) {
               uint64_t samples =
                   sampledChannels(op.getLocations(), op.getValue());
               return contraction(saturatingMul(samples, 4), 0,
                                  numElements(op.getResult()));
             })
             .Case([](MatmulOp op) {
               ArrayRef<int64_t> lhs = shapeOf(op.getLhs());
               uint64_t inner =
                   op.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
               uint64_t outputs = numElements(op.getResult());
               return contraction(saturatingMul(outputs, inner), 0, outputs);
             })
             .Case([](NormalizeOp op) {
               return elementwise(op, normFlopsPerElement(op.getKind()));
             })
             .Case([](SoftmaxFromLseOp op) {
               // A subtraction and an exp (counted like a feature map's).
               return elementwise(op, 2);
             })
             .Case([](FeatureMapOp op) {
               return elementwise(op, featureMapFlopsPerElement(op.getKind()));
             })
             .Case<ScaleOp, AddOp, MulOp, DivOp, PrefixSumOp>(
                 [](Operation *op) { return elementwise(op, 1); })
             .Case([](ReduceSumOp op) {
               return summation(op.getInput(), op.getResult());
             })
             .Case([](CausalMaskOp op) { return elementwise(op, 0); })
             .Case([](FloorOp op) { return elementwise(op, 1); })
             .Case([](GatherPixelsOp op) {
               // A copy (or a 0) per element into a new tensor: no
               // arithmetic, never in place (it reads another tensor).
               return contraction(0, 0, numElements(op.getResult()));
             })
             .Case([](FeatureMapGradOp op) {
               // phi'(x) (an exp at most, counted like the map) times dy.
               return elementwise(op,
                                  featureMapFlopsPerElement(op.getKind()) + 1);
             })
             .Case([](BroadcastOp op) {
               // A copy per result element into a new tensor.
               return contraction(0, 0, numElements(op.getResult()));
             })
             .Case([](UnbroadcastOp op) {
               return summation(op.getInput(), op.getResult());
             })
             .Case([](ScatterPixelsOp op) {
               return summation(op.getCotangent(), op.getResult());
             })
             .Default([](Operation *) { return OpCost(); });
  return CostStatus::Known;
}
