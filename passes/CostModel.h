//===- CostModel.h - MACs, FLOPs and memory of attn ops ----------*- C++
//-*-===//
//
// The cost model behind --attn-cost (and the rewrite decisions that will use
// it): per op multiply-accumulates, FLOPs and materialized floats, following
// the accounting of Shen et al., Table 1. docs/cost-model.md explains it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PASSES_COSTMODEL_H
#define ATTN_PASSES_COSTMODEL_H

#include "mlir/IR/Operation.h"

#include <cstdint>
#include <optional>

namespace mlir::attn {

struct OpCost {
  uint64_t macs = 0;             ///< multiply-accumulates of contractions
  uint64_t flops = 0;            ///< 2 x macs + elementwise arithmetic
  uint64_t floats = 0;           ///< tensor elements the op materializes
  uint64_t elementwiseFlops = 0; ///< the part of flops that is not 2 x macs

  OpCost &operator+=(const OpCost &other);
};

enum class CostStatus {
  Known,        ///< `cost` holds the op's cost
  DynamicSizes, ///< an operand or result has a `?` dim
  NotModeled,   ///< not an attn op (func.return, tensor reshapes cost 0)
};

/// Estimates `op` under the model. Elementwise ops count no floats when they
/// can write into an operand's buffer (same shape, no other user).
CostStatus estimateOpCost(Operation *op, OpCost &cost);

/// Saturating arithmetic so absurd static sizes print a ceiling, not garbage.
uint64_t saturatingMul(uint64_t lhs, uint64_t rhs);
uint64_t saturatingAdd(uint64_t lhs, uint64_t rhs);

} // namespace mlir::attn

#endif // ATTN_PASSES_COSTMODEL_H
