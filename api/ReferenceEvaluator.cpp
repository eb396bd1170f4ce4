//===- ReferenceEvaluator.cpp - Run attn IR on the reference runtime ------===//

#include "api/ReferenceEvaluator.h"

#include "dialect/AttnOps.h"
#include "runtime/Reference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::api;
namespace rt = ::attn::runtime;

std::string mlir::attn::api::describeShapeMismatch(const rt::Tensor &tensor,
                                                   RankedTensorType type) {
  bool fits = tensor.rank() == type.getRank();
  for (int64_t i = 0; fits && i < type.getRank(); ++i)
    fits = type.isDynamicDim(i) || type.getDimSize(i) == tensor.shape[i];
  if (fits)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "has shape " << tensor.shapeString() << " but the function expects "
     << type;
  return text;
}

std::optional<rt::ElementType> mlir::attn::api::storedElementType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    type = tensor.getElementType();
  if (type.isF64())
    return rt::ElementType::Float64;
  if (type.isF32())
    return rt::ElementType::Float32;
  if (type.isBF16())
    return rt::ElementType::BFloat16;
  if (type.isF16())
    return rt::ElementType::Float16;
  return std::nullopt;
}

void mlir::attn::api::roundToStoredType(rt::Tensor &tensor, Type type) {
  if (std::optional<rt::ElementType> element = storedElementType(type))
    rt::roundTensor(tensor, *element);
}

/// The rounding the evaluator applies to a value of `type`: bf16 and f16
/// only. f32 values stay exact doubles, as before reduced precision: the f32
/// kernels are checked against f64 arithmetic, which an f32 rounding per op
/// would not change beyond 2^-24.
static void roundIfReducedPrecision(rt::Tensor &tensor, Type type) {
  std::optional<rt::ElementType> element = storedElementType(type);
  if (element == rt::ElementType::BFloat16 ||
      element == rt::ElementType::Float16)
    rt::roundTensor(tensor, *element);
}

//===----------------------------------------------------------------------===//
// Attribute conversions: dialect enums to runtime enums
//===----------------------------------------------------------------------===//

static rt::NormKind toRuntime(NormKind kind) {
  switch (kind) {
  case NormKind::softmax:
    return rt::NormKind::Softmax;
  case NormKind::sum:
    return rt::NormKind::Sum;
  case NormKind::count:
    return rt::NormKind::Count;
  case NormKind::none:
    return rt::NormKind::None;
  }
  llvm_unreachable("unknown NormKind");
}

static rt::NormAxis toRuntime(NormAxis axis) {
  return axis == NormAxis::keys ? rt::NormAxis::Keys : rt::NormAxis::Queries;
}

static rt::EfficientVariant toRuntime(EfficientVariant variant) {
  return variant == EfficientVariant::softmax ? rt::EfficientVariant::Softmax
                                              : rt::EfficientVariant::Scaling;
}

static rt::FeatureMap toRuntime(FeatureMap map) {
  switch (map) {
  case FeatureMap::identity:
    return rt::FeatureMap::Identity;
  case FeatureMap::elu_plus_one:
    return rt::FeatureMap::EluPlusOne;
  case FeatureMap::relu:
    return rt::FeatureMap::Relu;
  }
  llvm_unreachable("unknown FeatureMap");
}

static std::vector<rt::SpatialLevel> toRuntimeLevels(ArrayRef<int64_t> flat) {
  std::vector<rt::SpatialLevel> levels;
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    levels.push_back({flat[i], flat[i + 1]});
  return levels;
}

/// Slices the evaluator runs: the slice of the same rank as the whole.
static LogicalResult checkSliceRank(Operation *op, RankedTensorType whole,
                                    RankedTensorType slice) {
  if (whole.getRank() != slice.getRank())
    return op->emitError("the reference evaluator does not run "
                         "rank-reducing ")
           << op->getName();
  return success();
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

namespace {
class Interpreter {
public:
  LogicalResult run(func::FuncOp func, ArrayRef<rt::Tensor> inputs,
                    SmallVectorImpl<rt::Tensor> &results);

private:
  const rt::Tensor &get(Value value) { return values.find(value)->second; }
  /// Runs the ops of `block` up to its terminator, which it returns.
  FailureOr<Operation *> runBlock(Block &block);
  LogicalResult step(Operation *op);
  LogicalResult tensorStep(Operation *op);
  LogicalResult scalarStep(Operation *op);
  LogicalResult ifOp(scf::IfOp op);
  /// Slices, pads and reshapes, whose offsets, sizes and output shapes may
  /// be index values.
  LogicalResult shapeStep(Operation *op);
  LogicalResult reshape(Operation *op);
  LogicalResult pad(tensor::PadOp op);
  LogicalResult constant(arith::ConstantOp op);
  /// Static attributes and index values of a shape op, in order.
  std::vector<int64_t> resolve(ArrayRef<OpFoldResult> values);

  /// Runs one runtime kernel and binds its output to `result`.
  template <typename Kernel>
  LogicalResult call(Operation *op, Value result, Kernel &&kernel) {
    rt::Tensor out;
    rt::Status status = kernel(out);
    if (!status)
      return op->emitError("reference runtime: ") << status.message();
    values[result] = std::move(out);
    return success();
  }

  /// attn.dot_product into `out` (and its row log-sum-exp into `lse`).
  rt::Status dotProduct(DotProductAttentionOp op, rt::Tensor &out,
                        rt::Tensor *lse) {
    std::vector<rt::NormStep> steps;
    for (Attribute attr : op.getNorm()) {
      auto step = cast<NormStepAttr>(attr);
      steps.push_back({toRuntime(step.getKind()), toRuntime(step.getAxis()),
                       step.getEpsValue()});
    }
    const rt::Tensor *mask = op.getMask() ? &get(op.getMask()) : nullptr;
    return rt::dotProductAttention(
        get(op.getQuery()), get(op.getKey()), get(op.getValue()), mask, steps,
        op.getScale().convertToDouble(), toRuntime(op.getFeatureMap()),
        op.getCausal(), out, lse);
  }

  /// `call` for an op with several results, in order.
  template <typename Kernel>
  LogicalResult callResults(Operation *op, Kernel &&kernel) {
    SmallVector<rt::Tensor, 3> out(op->getNumResults());
    rt::Status status = kernel(MutableArrayRef<rt::Tensor>(out));
    if (!status)
      return op->emitError("reference runtime: ") << status.message();
    for (auto [result, tensor] : llvm::zip(op->getResults(), out))
      values[result] = std::move(tensor);
    return success();
  }

  llvm::DenseMap<Value, rt::Tensor> values;
  /// index and integer values (tensor.dim sizes and the arith on them that
  /// picks a branch of an scf.if); i1 is 0 or 1.
  llvm::DenseMap<Value, int64_t> scalars;
};
} // namespace

LogicalResult Interpreter::run(func::FuncOp func, ArrayRef<rt::Tensor> inputs,
                               SmallVectorImpl<rt::Tensor> &results) {
  if (func.isExternal())
    return func.emitError("cannot evaluate external function @")
           << func.getSymName();
  if (inputs.size() != func.getNumArguments())
    return func.emitError("@")
           << func.getSymName() << " takes " << func.getNumArguments()
           << " inputs, got " << inputs.size();
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return func.emitError("argument #")
             << index << " has type " << arg.getType()
             << "; only ranked tensors can be evaluated";
    std::string mismatch = describeShapeMismatch(inputs[index], type);
    if (!mismatch.empty())
      return func.emitError("input #") << index << " " << mismatch;
    values[arg] = inputs[index];
    roundIfReducedPrecision(values[arg], type);
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError("only single-block functions can be evaluated");
  FailureOr<Operation *> terminator = runBlock(func.getBody().front());
  if (failed(terminator))
    return failure();
  auto ret = dyn_cast<func::ReturnOp>(*terminator);
  if (!ret)
    return func.emitError("function has no func.return");
  for (Value operand : ret.getOperands())
    results.push_back(get(operand));
  return success();
}

FailureOr<Operation *> Interpreter::runBlock(Block &block) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      return &op;
    if (failed(step(&op)))
      return failure();
    // Results must match the types the IR promises, and hold only values of
    // their element type.
    for (Value result : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type)
        continue;
      std::string mismatch = describeShapeMismatch(get(result), type);
      if (!mismatch.empty())
        return op.emitError("result ") << mismatch;
      roundIfReducedPrecision(values[result], type);
    }
  }
  return failure(); // Blocks of verified IR end in a terminator.
}

LogicalResult Interpreter::step(Operation *op) {
  if (auto ifOperation = dyn_cast<scf::IfOp>(op))
    return ifOp(ifOperation);
  if (isa<tensor::DimOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
          arith::DivUIOp, arith::DivSIOp, arith::CeilDivUIOp, arith::CmpIOp,
          arith::SelectOp, arith::MaxUIOp>(op))
    return scalarStep(op);
  if (auto constantOp = dyn_cast<arith::ConstantOp>(op)) {
    if (isa<IndexType, IntegerType>(constantOp.getType())) {
      scalars[constantOp] =
          cast<IntegerAttr>(constantOp.getValue()).getValue().getSExtValue();
      return success();
    }
    // A float scalar is a padding value: tensor.pad reads its attribute.
    if (isa<FloatType>(constantOp.getType()))
      return success();
  }
  if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::PadOp,
          tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
    return shapeStep(op);
  return tensorStep(op);
}

/// Runs the branch the condition picks and binds the yielded values.
LogicalResult Interpreter::ifOp(scf::IfOp op) {
  Region &region = scalars.lookup(op.getCondition()) ? op.getThenRegion()
                                                     : op.getElseRegion();
  if (region.empty())
    return op.emitError("the reference evaluator needs an else branch");
  FailureOr<Operation *> terminator = runBlock(region.front());
  if (failed(terminator))
    return failure();
  for (auto [result, yielded] :
       llvm::zip_equal(op.getResults(), (*terminator)->getOperands())) {
    if (isa<RankedTensorType>(result.getType()))
      values[result] = get(yielded);
    else
      scalars[result] = scalars.lookup(yielded);
  }
  return success();
}

/// Sizes and the integer arithmetic on them (wrapping, as arith specifies).
LogicalResult Interpreter::scalarStep(Operation *op) {
  auto at = [&](unsigned index) {
    return static_cast<uint64_t>(scalars.lookup(op->getOperand(index)));
  };
  std::optional<int64_t> value =
      llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
          .Case([&](tensor::DimOp dim) -> std::optional<int64_t> {
            std::optional<int64_t> index = dim.getConstantIndex();
            const rt::Tensor &source = get(dim.getSource());
            if (!index || *index < 0 || *index >= source.rank())
              return std::nullopt;
            return source.shape[*index];
          })
          .Case([&](arith::AddIOp) { return int64_t(at(0) + at(1)); })
          .Case([&](arith::SubIOp) { return int64_t(at(0) - at(1)); })
          .Case([&](arith::MulIOp) { return int64_t(at(0) * at(1)); })
          .Case([&](arith::MaxUIOp) { return int64_t(std::max(at(0), at(1))); })
          .Case([&](arith::DivUIOp) -> std::optional<int64_t> {
            if (!at(1))
              return std::nullopt;
            return int64_t(at(0) / at(1));
          })
          .Case([&](arith::CeilDivUIOp) -> std::optional<int64_t> {
            if (!at(1))
              return std::nullopt;
            return int64_t(at(0) / at(1) + (at(0) % at(1) != 0));
          })
          .Case([&](arith::DivSIOp) -> std::optional<int64_t> {
            int64_t lhs = at(0), rhs = at(1);
            if (!rhs || (lhs == INT64_MIN && rhs == -1))
              return std::nullopt;
            return lhs / rhs;
          })
          .Case([&](arith::SelectOp) { return int64_t(at(0) ? at(1) : at(2)); })
          .Case([&](arith::CmpIOp cmp) -> std::optional<int64_t> {
            int64_t lhs = at(0), rhs = at(1);
            uint64_t ulhs = at(0), urhs = at(1);
            switch (cmp.getPredicate()) {
            case arith::CmpIPredicate::eq:
              return lhs == rhs;
            case arith::CmpIPredicate::ne:
              return lhs != rhs;
            case arith::CmpIPredicate::slt:
              return lhs < rhs;
            case arith::CmpIPredicate::sle:
              return lhs <= rhs;
            case arith::CmpIPredicate::sgt:
              return lhs > rhs;
            case arith::CmpIPredicate::sge:
              return lhs >= rhs;
            case arith::CmpIPredicate::ult:
              return ulhs < urhs;
            case arith::CmpIPredicate::ule:
              return ulhs <= urhs;
            case arith::CmpIPredicate::ugt:
              return ulhs > urhs;
            case arith::CmpIPredicate::uge:
              return ulhs >= urhs;
            }
            return std::nullopt;
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!value)
    return op->emitError("the reference evaluator cannot run this '")
           << op->getName()
           << "' op (a dim index must be a constant in range, a divisor "
              "nonzero)";
  scalars[op->getResult(0)] = *value;
  return success();
}

LogicalResult Interpreter::tensorStep(Operation *op) {
  auto notTensors = [](Type type) { return !isa<RankedTensorType>(type); };
  if (auto grad = dyn_cast<AttentionGradOp>(op))
    return callResults(op, [&](MutableArrayRef<rt::Tensor> out) {
      return rt::attentionGrad(
          get(grad.getQuery()), get(grad.getKey()), get(grad.getValue()),
          get(grad.getCotangent()), grad.getScale().convertToDouble(),
          grad.getCausal(), out[0], out[1], out[2],
          grad.getLse() ? &get(grad.getLse()) : nullptr,
          grad.getMask() ? &get(grad.getMask()) : nullptr,
          grad.getOutput() ? &get(grad.getOutput()) : nullptr);
    });
  if (auto attention = dyn_cast<DotProductAttentionOp>(op);
      attention && attention.getLse())
    return callResults(op, [&](MutableArrayRef<rt::Tensor> out) {
      return dotProduct(attention, out[0], &out[1]);
    });
  if (auto efficient = dyn_cast<EfficientAttentionOp>(op);
      efficient && efficient.getNormalizedContext())
    return callResults(op, [&](MutableArrayRef<rt::Tensor> out) {
      return rt::efficientAttention(
          get(efficient.getQuery()), get(efficient.getKey()),
          get(efficient.getValue()), toRuntime(efficient.getVariant()), out[0],
          &out[1], &out[2]);
    });
  if (auto grad = dyn_cast<DeformableGradOp>(op))
    return callResults(op, [&](MutableArrayRef<rt::Tensor> out) {
      return rt::deformableGrad(
          get(grad.getValue()), get(grad.getSamplingLocations()),
          get(grad.getAttentionWeights()), get(grad.getCotangent()),
          toRuntimeLevels(grad.getSpatialShapes()), grad.getAlignCorners(),
          out[0], out[1], out[2]);
    });
  if (llvm::any_of(op->getOperandTypes(), notTensors) ||
      llvm::any_of(op->getResultTypes(), notTensors) ||
      op->getNumResults() != 1)
    return op->emitError("the reference evaluator handles ops with ranked "
                         "tensor operands and one result only (and "
                         "attn.attention_grad, attn.deformable_grad)");
  Value result = op->getResult(0);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](DotProductAttentionOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return dotProduct(op, out, nullptr);
        });
      })
      .Case([&](EfficientAttentionOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::efficientAttention(get(op.getQuery()), get(op.getKey()),
                                        get(op.getValue()),
                                        toRuntime(op.getVariant()), out);
        });
      })
      .Case([&](ExternalAttentionOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::externalAttention(
              get(op.getInput()), get(op.getMemoryKey()),
              get(op.getMemoryValue()), op.getEps().convertToDouble(), out);
        });
      })
      .Case([&](DeformableAttentionOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::deformableAttention(get(op.getValue()),
                                         get(op.getSamplingLocations()),
                                         get(op.getAttentionWeights()),
                                         toRuntimeLevels(op.getSpatialShapes()),
                                         op.getAlignCorners(), out);
        });
      })
      .Case([&](MatmulOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::matmul(get(op.getLhs()), get(op.getRhs()),
                            op.getTransposeLhs(), op.getTransposeRhs(), out);
        });
      })
      .Case([&](NormalizeOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::normalize(get(op.getInput()), toRuntime(op.getKind()),
                               op.getDim(), op.getEps().convertToDouble(), out);
        });
      })
      .Case([&](SoftmaxFromLseOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::softmaxFromLse(get(op.getInput()), get(op.getLse()),
                                    op.getDim(), out);
        });
      })
      .Case([&](ScaleOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::scale(get(op.getInput()), op.getFactor().convertToDouble(),
                           out);
        });
      })
      .Case([&](FeatureMapOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::featureMap(get(op.getInput()), toRuntime(op.getKind()),
                                out);
        });
      })
      .Case([&](PrefixSumOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::prefixSum(get(op.getInput()), op.getDim(), out,
                               op.getExclusive(), op.getReverse());
        });
      })
      .Case([&](MulOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::mul(get(op.getLhs()), get(op.getRhs()), out);
        });
      })
      .Case([&](DivOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::div(get(op.getLhs()), get(op.getRhs()),
                         op.getEps().convertToDouble(), out);
        });
      })
      .Case([&](ReduceSumOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::reduceSum(get(op.getInput()), op.getDim(), out);
        });
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](Operation *op) {
        // Widening is exact; runBlock rounds a narrowed result to its type.
        values[result] = get(op->getOperand(0));
        return success();
      })
      .Case([&](tensor::CastOp op) {
        // The data is unchanged; the result-type check after each op catches
        // a cast to a static size the data does not have.
        values[result] = get(op.getSource());
        return success();
      })
      .Case([&](CausalMaskOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::causalMask(get(op.getInput()),
                                op.getFill().convertToDouble(), out);
        });
      })
      .Case([&](AddOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::add(get(op.getLhs()), get(op.getRhs()), out);
        });
      })
      .Case([&](BilinearGatherOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::bilinearGather(get(op.getValue()), get(op.getLocations()),
                                    toRuntimeLevels(op.getSpatialShapes()),
                                    op.getAlignCorners(), out);
        });
      })
      .Case([&](FloorOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::floor(get(op.getInput()), out);
        });
      })
      .Case([&](GatherPixelsOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::gatherPixels(get(op.getValue()), get(op.getPixels()),
                                  toRuntimeLevels(op.getSpatialShapes()), out);
        });
      })
      .Case([&](FeatureMapGradOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::featureMapGrad(get(op.getInput()), get(op.getCotangent()),
                                    toRuntime(op.getKind()), out);
        });
      })
      .Case([&](BroadcastOp op) {
        // Only the shape of `like` is read.
        return call(op, result, [&](rt::Tensor &out) {
          return rt::broadcastLike(get(op.getInput()), get(op.getLike()).shape,
                                   out);
        });
      })
      .Case([&](UnbroadcastOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::unbroadcast(get(op.getInput()), get(op.getLike()).shape,
                                 out);
        });
      })
      .Case([&](ScatterPixelsOp op) {
        return call(op, result, [&](rt::Tensor &out) {
          return rt::scatterPixels(get(op.getCotangent()), get(op.getPixels()),
                                   toRuntimeLevels(op.getSpatialShapes()), out);
        });
      })
      .Case([&](arith::ConstantOp op) { return constant(op); })
      .Default([](Operation *op) {
        return op->emitError("the reference evaluator cannot run '")
               << op->getName() << "' ops";
      });
}

std::vector<int64_t> Interpreter::resolve(ArrayRef<OpFoldResult> values) {
  std::vector<int64_t> result;
  for (OpFoldResult value : values) {
    if (std::optional<int64_t> known = getConstantIntValue(value))
      result.push_back(*known);
    else
      result.push_back(scalars.lookup(cast<Value>(value)));
  }
  return result;
}

LogicalResult Interpreter::shapeStep(Operation *op) {
  Value result = op->getResult(0);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tensor::ExtractSliceOp op) -> LogicalResult {
        if (failed(checkSliceRank(op, op.getSourceType(), op.getType())))
          return failure();
        return call(op, result, [&](rt::Tensor &out) {
          return rt::slice(get(op.getSource()), resolve(op.getMixedOffsets()),
                           resolve(op.getMixedSizes()),
                           resolve(op.getMixedStrides()), out);
        });
      })
      .Case([&](tensor::InsertSliceOp op) -> LogicalResult {
        if (failed(checkSliceRank(op, op.getType(), op.getSourceType())))
          return failure();
        // The sizes are the source's shape (the verifier ties the two).
        return call(op, result, [&](rt::Tensor &out) {
          return rt::insertSlice(get(op.getSource()), get(op.getDest()),
                                 resolve(op.getMixedOffsets()),
                                 resolve(op.getMixedStrides()), out);
        });
      })
      .Case([&](tensor::PadOp op) { return pad(op); })
      .Default([&](Operation *op) { return reshape(op); });
}

/// The source written into a tensor of the padded shape that holds the
/// padding value everywhere else.
LogicalResult Interpreter::pad(tensor::PadOp op) {
  FloatAttr padding;
  if (!matchPattern(op.getConstantPaddingValue(), m_Constant(&padding)))
    return op.emitError("the reference evaluator needs a constant float "
                        "padding value for tensor.pad");
  const rt::Tensor &source = get(op.getSource());
  std::vector<int64_t> low = resolve(op.getMixedLowPad());
  std::vector<int64_t> high = resolve(op.getMixedHighPad());
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < source.rank(); ++d)
    shape.push_back(low[d] + source.shape[d] + high[d]);
  if (llvm::any_of(low, [](int64_t x) { return x < 0; }) ||
      llvm::any_of(high, [](int64_t x) { return x < 0; }) ||
      rt::checkedNumElements(shape) < 0)
    return op.emitError("tensor.pad of ")
           << source.shapeString() << " to " << rt::formatShape(shape)
           << ": pads must be >= 0";
  rt::Tensor filled(shape);
  std::fill(filled.data.begin(), filled.data.end(), padding.getValueAsDouble());
  return call(op, op.getResult(), [&](rt::Tensor &out) {
    return rt::insertSlice(source, filled, low,
                           std::vector<int64_t>(shape.size(), 1), out);
  });
}

/// Reshapes keep the row-major data; only the shape changes. A collapsed dim
/// is the product of its group; an expanded one is its output_shape entry.
LogicalResult Interpreter::reshape(Operation *op) {
  const rt::Tensor &input = get(op->getOperand(0));
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  std::vector<int64_t> shape;
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    for (ReassociationIndices group : collapse.getReassociationIndices()) {
      int64_t size = 1;
      for (int64_t dim : group)
        size *= input.shape[dim];
      shape.push_back(size);
    }
  } else {
    shape = resolve(cast<tensor::ExpandShapeOp>(op).getMixedOutputShape());
  }
  if (rt::checkedNumElements(shape) != input.numElements())
    return op->emitError("reshape of ")
           << input.shapeString() << " to " << resultType
           << " changes the number of elements";
  values[op->getResult(0)] = rt::Tensor(std::move(shape), input.data);
  return success();
}

LogicalResult Interpreter::constant(arith::ConstantOp op) {
  auto dense = dyn_cast<DenseFPElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError("the reference evaluator only runs dense float "
                        "tensor constants");
  auto type = cast<RankedTensorType>(dense.getType());
  rt::Tensor tensor(
      std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
  for (auto [index, value] : llvm::enumerate(dense.getValues<APFloat>()))
    tensor.data[index] = value.convertToDouble();
  values[op.getResult()] = std::move(tensor);
  return success();
}

LogicalResult
mlir::attn::api::evaluateWithReference(func::FuncOp func,
                                       ArrayRef<rt::Tensor> inputs,
                                       SmallVectorImpl<rt::Tensor> &results) {
  return Interpreter().run(func, inputs, results);
}
