//===- WidenToF32.cpp - attn ops on bf16/f16 tensors computed in f32 -----===//
//
// --attn-widen-to-f32: the precision rule of docs/precision.md made explicit
// in the IR, so that no later pass or lowering needs a case for 16-bit types.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNWIDENTOF32PASS
#include "passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// `type` with f32 elements if it holds bf16 or f16, else unchanged.
static Type widenedType(Type type) {
  if (!isReducedPrecisionTensor(type))
    return type;
  auto tensor = cast<RankedTensorType>(type);
  return tensor.clone(Float32Type::get(type.getContext()));
}

namespace {
/// Widens the attn ops under one root, with one arith.extf per 16-bit value
/// (right after its definition, so it dominates every use and the gradient
/// of an argument has one adjoint to accumulate).
class Widener {
public:
  void run(Operation *root) {
    SmallVector<Operation *> ops;
    root->walk([&](Operation *op) {
      if (isa<AttnDialect>(op->getDialect()) &&
          (llvm::any_of(op->getOperandTypes(), isReducedPrecisionTensor) ||
           llvm::any_of(op->getResultTypes(), isReducedPrecisionTensor)))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      widen(op);
  }

private:
  Value widened(Value value) {
    auto [it, inserted] = cache.try_emplace(value);
    if (!inserted)
      return it->second;
    OpBuilder b(value.getContext());
    if (Operation *def = value.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
    it->second =
        arith::ExtFOp::create(b, value.getLoc(), widenedType(value.getType()),
                              value);
    return it->second;
  }

  void widen(Operation *op) {
    for (OpOperand &operand : op->getOpOperands())
      if (isReducedPrecisionTensor(operand.get().getType()))
        operand.set(widened(operand.get()));
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    for (OpResult result : op->getResults()) {
      Type declared = result.getType();
      if (!isReducedPrecisionTensor(declared))
        continue;
      result.setType(widenedType(declared));
      auto rounded = arith::TruncFOp::create(b, op->getLoc(), declared, result);
      result.replaceAllUsesExcept(rounded, rounded);
    }
  }

  DenseMap<Value, Value> cache;
};
} // namespace

void mlir::attn::widenToF32(Operation *root) { Widener().run(root); }

std::string mlir::attn::reducedPrecisionBlocker(Operation *op) {
  if (llvm::none_of(op->getOperandTypes(), isReducedPrecisionTensor) &&
      llvm::none_of(op->getResultTypes(), isReducedPrecisionTensor))
    return "";
  return "bf16/f16 operands or results: --attn-widen-to-f32 first makes it "
         "an f32 op (attn-default-pipeline starts with it), so the rewrite's "
         "intermediates stay f32";
}

namespace {
struct AttnWidenToF32Pass
    : public mlir::attn::impl::AttnWidenToF32PassBase<AttnWidenToF32Pass> {
  void runOnOperation() override {
    widenToF32(getOperation());
  }
};
} // namespace
