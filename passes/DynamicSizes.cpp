//===- DynamicSizes.cpp - A function's sizes at one run-time size ---------===//
//
// --attn-cost=dynamic-size=N costs a function as it runs when each `?` dim of
// its arguments is N: a copy of the function whose argument types take N and
// whose result types are re-derived op by op from their operands (the ops'
// own type inference for attn ops; the size operands, folded to constants,
// for slices, pads and reshapes), with each scf.if replaced by the branch
// its now constant condition picks. The copy is for counting only: it is
// never verified nor run.
//
//===----------------------------------------------------------------------===//

#include "passes/CostModel.h"

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Static sizes of `values` (attributes or folded constants), `?` for the
/// others.
SmallVector<int64_t> staticSizes(ArrayRef<OpFoldResult> values) {
  SmallVector<int64_t> sizes;
  for (OpFoldResult value : values)
    sizes.push_back(getConstantIntValue(value).value_or(ShapedType::kDynamic));
  return sizes;
}

/// The result type of a tensor op from its operands' types and its (folded)
/// size operands; a null type when the op is not modeled.
Type refinedType(Operation *op) {
  if (auto inferring = dyn_cast<InferTypeOpInterface>(op)) {
    SmallVector<Type> types;
    // No location: a shape rule that fails says nothing and the type stays.
    if (failed(inferring.inferReturnTypes(
            op->getContext(), std::nullopt, op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)) ||
        types.size() != 1)
      return Type();
    return types.front();
  }
  if (op->hasTrait<OpTrait::SameOperandsAndResultType>())
    return op->getOperand(0).getType();
  return llvm::TypeSwitch<Operation *, Type>(op)
      .Case([](tensor::PadOp pad) -> Type {
        return tensor::PadOp::inferResultType(
            pad.getSourceType(), staticSizes(pad.getMixedLowPad()),
            staticSizes(pad.getMixedHighPad()));
      })
      .Case([](tensor::ExpandShapeOp expand) -> Type {
        return RankedTensorType::get(staticSizes(expand.getMixedOutputShape()),
                                     expand.getResultType().getElementType());
      })
      .Case([](tensor::CollapseShapeOp collapse) -> Type {
        return tensor::CollapseShapeOp::inferCollapsedType(
            collapse.getSrcType(), collapse.getReassociationMaps());
      })
      .Case([](tensor::ExtractSliceOp slice) -> Type {
        return tensor::ExtractSliceOp::inferResultType(
            slice.getSourceType(), staticSizes(slice.getMixedSizes()));
      })
      .Case([](tensor::InsertSliceOp insert) -> Type {
        return insert.getDest().getType();
      })
      .Case([](tensor::CastOp cast) -> Type {
        return cast.getSource().getType();
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([](Operation *op) -> Type {
        auto operand = cast<RankedTensorType>(op->getOperand(0).getType());
        return operand.clone(cast<RankedTensorType>(op->getResult(0).getType())
                                 .getElementType());
      })
      .Default([](Operation *) { return Type(); });
}

/// Replaces a size computation (tensor.dim, index arith) whose operands are
/// constants by its constant. Returns true if it did.
bool foldSize(Operation *op) {
  if (op->getNumResults() != 1 || !op->getResult(0).getType().isIntOrIndex() ||
      isa<arith::ConstantOp>(op))
    return false;
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    Attribute constant;
    matchPattern(operand, m_Constant(&constant));
    operands.push_back(constant);
  }
  SmallVector<OpFoldResult> folded;
  if (failed(op->fold(operands, folded)) || folded.size() != 1)
    return false;
  Value replacement = dyn_cast<Value>(folded.front());
  if (!replacement) {
    auto attr = dyn_cast<IntegerAttr>(cast<Attribute>(folded.front()));
    if (!attr)
      return false;
    OpBuilder b(op);
    replacement = arith::ConstantOp::create(b, op->getLoc(), attr);
  }
  op->getResult(0).replaceAllUsesWith(replacement);
  op->erase();
  return true;
}

void refineBlock(Block &block) {
  for (Operation *op = &block.front(); op;) {
    Operation *next = op->getNextNode();
    if (auto choice = dyn_cast<scf::IfOp>(op)) {
      IntegerAttr condition;
      if (matchPattern(choice.getCondition(), m_Constant(&condition))) {
        Block *taken = condition.getValue().isZero() ? choice.elseBlock()
                                                     : choice.thenBlock();
        Operation *yield = taken->getTerminator();
        // The branch's ops run in its place, refined next.
        if (&taken->front() != yield)
          next = &taken->front();
        block.getOperations().splice(Block::iterator(choice),
                                     taken->getOperations(), taken->begin(),
                                     Block::iterator(yield));
        choice.replaceAllUsesWith(yield->getOperands());
        choice.erase();
        op = next;
        continue;
      }
    }
    if (!foldSize(op) && op->getNumResults() == 1 &&
        isa<RankedTensorType>(op->getResult(0).getType()))
      if (Type type = refinedType(op); type && isa<RankedTensorType>(type))
        op->getResult(0).setType(type);
    op = next;
  }
}

} // namespace

OwningOpRef<func::FuncOp> mlir::attn::withDynamicSize(func::FuncOp func,
                                                      int64_t size) {
  OwningOpRef<func::FuncOp> copy = func.clone();
  Block &body = copy->getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    SmallVector<int64_t> shape(type.getShape());
    for (int64_t &dim : shape)
      if (ShapedType::isDynamic(dim))
        dim = size;
    arg.setType(type.clone(shape));
  }
  refineBlock(body);
  return copy;
}
