//===- Cost.cpp - --attn-cost: MACs, FLOPs and memory as remarks ----------===//

#include "passes/CostModel.h"
#include "passes/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnShapes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCOSTPASS
#include "passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

static std::string formatGigabytes(uint64_t bytes) {
  std::string text;
  llvm::raw_string_ostream(text)
      << llvm::format("%.2f", static_cast<double>(bytes) / 1e9);
  return text;
}

/// Totals of a function or module; bytes follow each tensor's element type.
struct CostTotals {
  OpCost cost;
  uint64_t bytes = 0;
  uint64_t weightFloats = 0;
  unsigned dynamicValues = 0; ///< ops and arguments with `?` dims

  void addFloats(Type type, uint64_t floats) {
    cost.floats = saturatingAdd(cost.floats, floats);
    bytes = saturatingAdd(bytes, saturatingMul(floats, elementBytes(type)));
  }

  void operator+=(const CostTotals &other) {
    cost += other.cost;
    bytes = saturatingAdd(bytes, other.bytes);
    weightFloats = saturatingAdd(weightFloats, other.weightFloats);
    dynamicValues += other.dynamicValues;
  }

  void print(InFlightDiagnostic &diag) const {
    diag << "macs = " << cost.macs << ", flops = " << cost.flops
         << " (2 x macs + " << cost.elementwiseFlops
         << " elementwise), floats = " << cost.floats << " ("
         << formatGigabytes(bytes) << " GB), weights = " << weightFloats
         << " floats (not in floats)";
    if (dynamicValues)
      diag << "; " << dynamicValues
           << " ops or arguments with dynamic sizes not counted";
  }
};

static uint64_t staticElements(RankedTensorType type) {
  uint64_t count = 1;
  for (int64_t dim : type.getShape())
    count = saturatingMul(count, static_cast<uint64_t>(dim));
  return count;
}

struct AttnCostPass : mlir::attn::impl::AttnCostPassBase<AttnCostPass> {
  using Base::Base;

  void runOnOperation() override {
    CostTotals moduleTotals;
    if (dynamicSize < -1) {
      getOperation().emitError("attn-cost: dynamic-size must be >= 0 (or -1: "
                               "none), got ")
          << static_cast<int64_t>(dynamicSize);
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      CostTotals totals;
      if (dynamicSize >= 0) {
        // The remarks of the copy's ops carry the original locations.
        OwningOpRef<func::FuncOp> sized = withDynamicSize(func, dynamicSize);
        totals = costOf(*sized);
      } else {
        totals = costOf(func);
      }
      InFlightDiagnostic diag = func.emitRemark("total of @")
                                << func.getSymName();
      if (dynamicSize >= 0)
        diag << " at dynamic size " << static_cast<int64_t>(dynamicSize);
      diag << ": ";
      totals.print(diag);
      moduleTotals += totals;
    }
    InFlightDiagnostic diag = getOperation().emitRemark("module total: ");
    moduleTotals.print(diag);
  }

  /// Arguments count once (weights apart); then every op's own cost.
  static CostTotals costOf(func::FuncOp func) {
    CostTotals totals;
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        continue;
      if (!type.hasStaticShape())
        ++totals.dynamicValues;
      else if (func.getArgAttr(arg.getArgNumber(), "attn.weight"))
        totals.weightFloats =
            saturatingAdd(totals.weightFloats, staticElements(type));
      else
        totals.addFloats(type, staticElements(type));
    }
    func.walk([&](Operation *op) {
      OpCost cost;
      switch (estimateOpCost(op, cost)) {
      case CostStatus::NotModeled:
        return;
      case CostStatus::DynamicSizes:
        op->emitRemark("cost: unknown, the op has dynamic sizes");
        ++totals.dynamicValues;
        return;
      case CostStatus::Known:
        op->emitRemark("cost: macs = ")
            << cost.macs << ", flops = " << cost.flops
            << ", floats = " << cost.floats;
        totals.cost.macs = saturatingAdd(totals.cost.macs, cost.macs);
        totals.cost.flops = saturatingAdd(totals.cost.flops, cost.flops);
        totals.cost.elementwiseFlops =
            saturatingAdd(totals.cost.elementwiseFlops, cost.elementwiseFlops);
        totals.addFloats(op->getResult(0).getType(), cost.floats);
        return;
      }
    });
    return totals;
  }
};

} // namespace
