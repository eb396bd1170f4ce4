//===- ReferenceEvaluator.cpp - Run attn IR on the reference runtime ------===//

#include "tools/common/ReferenceEvaluator.h"

#include "dialect/AttnOps.h"
#include "runtime/Reference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;
namespace rt = ::attn::runtime;

std::string mlir::attn::describeShapeMismatch(const rt::Tensor &tensor,
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
  LogicalResult step(Operation *op);
  LogicalResult reshape(Operation *op);
  LogicalResult constant(arith::ConstantOp op);

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

  llvm::DenseMap<Value, rt::Tensor> values;
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
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError("only single-block functions can be evaluated");
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value operand : ret.getOperands())
        results.push_back(get(operand));
      return success();
    }
    if (failed(step(&op)))
      return failure();
    // Results must match the types the IR promises.
    for (Value result : op.getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      std::string mismatch = describeShapeMismatch(get(result), type);
      if (!mismatch.empty())
        return op.emitError("result ") << mismatch;
    }
  }
  return func.emitError("function has no func.return");
}

LogicalResult Interpreter::step(Operation *op) {
  auto notTensors = [](Type type) { return !isa<RankedTensorType>(type); };
  if (llvm::any_of(op->getOperandTypes(), notTensors) ||
      llvm::any_of(op->getResultTypes(), notTensors) ||
      op->getNumResults() != 1)
    return op->emitError("the reference evaluator handles ops with ranked "
                         "tensor operands and one result only");
  Value result = op->getResult(0);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](DotProductAttentionOp op) {
        std::vector<rt::NormStep> steps;
        for (Attribute attr : op.getNorm()) {
          auto step = cast<NormStepAttr>(attr);
          steps.push_back({toRuntime(step.getKind()), toRuntime(step.getAxis()),
                           step.getEpsValue()});
        }
        const rt::Tensor *mask = op.getMask() ? &get(op.getMask()) : nullptr;
        return call(op, result, [&](rt::Tensor &out) {
          return rt::dotProductAttention(
              get(op.getQuery()), get(op.getKey()), get(op.getValue()), mask,
              steps, op.getScale().convertToDouble(),
              toRuntime(op.getFeatureMap()), op.getCausal(), out);
        });
      })
      .Case([&](EfficientAttentionOp op) {
        auto variant = op.getVariant() == EfficientVariant::softmax
                           ? rt::EfficientVariant::Softmax
                           : rt::EfficientVariant::Scaling;
        return call(op, result, [&](rt::Tensor &out) {
          return rt::efficientAttention(get(op.getQuery()), get(op.getKey()),
                                        get(op.getValue()), variant, out);
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
          return rt::prefixSum(get(op.getInput()), op.getDim(), out);
        });
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
      .Case<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
          [&](Operation *op) { return reshape(op); })
      .Case([&](arith::ConstantOp op) { return constant(op); })
      .Default([](Operation *op) {
        return op->emitError("the reference evaluator cannot run '")
               << op->getName() << "' ops";
      });
}

/// Reshapes keep the row-major data; only the shape changes. A collapsed dim
/// is the product of its group; expanded dims must be static.
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
    if (!resultType.hasStaticShape())
      return op->emitError("the reference evaluator needs a static result "
                           "shape for tensor.expand_shape");
    shape.assign(resultType.getShape().begin(), resultType.getShape().end());
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
mlir::attn::evaluateWithReference(func::FuncOp func,
                                  ArrayRef<rt::Tensor> inputs,
                                  SmallVectorImpl<rt::Tensor> &results) {
  return Interpreter().run(func, inputs, results);
}
