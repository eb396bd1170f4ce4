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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/OwningOpRef.h"

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

/// A copy of `func` as it runs when each `?` dim of its arguments is `size`:
/// its ops' result types follow from them, and each scf.if is replaced by the
/// branch that runs (DynamicSizes.cpp). For estimateOpCost only: the copy
/// is not verified. Ops whose sizes stay unknown keep their `?` dims.
OwningOpRef<func::FuncOp> withDynamicSize(func::FuncOp func, int64_t size);

/// Saturating arithmetic so absurd static sizes print a ceiling, not garbage.
uint64_t saturatingMul(uint64_t lhs, uint64_t rhs);
uint64_t saturatingAdd(uint64_t lhs, uint64_t rhs);

/// A static count with saturating + and *, so the formulas below can be
/// evaluated on static sizes.
struct SaturatingCount {
  uint64_t value = 0;
  friend SaturatingCount operator+(SaturatingCount l, SaturatingCount r) {
    return {saturatingAdd(l.value, r.value)};
  }
  friend SaturatingCount operator*(SaturatingCount l, SaturatingCount r) {
    return {saturatingMul(l.value, r.value)};
  }
};

/// The two associations of dot-product attention, as MAC formulas over the
/// sizes: `Int` is SaturatingCount for static sizes; --attn-reassociate also
/// instantiates them with a type that emits arith ops, so its run-time choice
/// for dynamic sizes evaluates these same formulas (one cost model).
///
/// Quadratic form (Q K^T) V: batch * n * m * (dk + dv). `batch` is the
/// broadcast of all leading dims. The cost of attn.dot_product uses this.
template <typename Int>
Int quadraticAttentionMacs(Int batch, Int n, Int m, Int dk, Int dv) {
  return batch * n * m * (dk + dv);
}

/// Linear form Q (K^T V): contextBatch * m * dk * dv for the dk x dv context
/// (contextBatch broadcasts the leading dims of K and V) plus
/// batch * n * dk * dv for Q times it; with a `sum` step, batch * n * dk more
/// for the row sums Q (K^T 1). This is the sum of the attn.matmul MACs the
/// non-causal rewrite emits (test/unit/ReassociateTest.cpp checks that).
template <typename Int>
Int linearAttentionMacs(Int contextBatch, Int batch, Int n, Int m, Int dk,
                        Int dv, bool rowSums) {
  Int macs = contextBatch * m * dk * dv + batch * n * dk * dv;
  if (rowSums)
    macs = macs + batch * n * dk;
  return macs;
}

/// Causal chunked form over `positions` rows (n = m, or the padded length
/// of a dynamic n) in chunks of `chunk`: batch * positions * chunk *
/// (dk + dv) for causal attention inside the chunks, contextBatch *
/// positions * dk * dv for the chunk states phi(K_c)^T V_c and batch *
/// positions * dk * dv for phi(Q_c) times their prefix sums. The row sums of
/// a `sum` step are a prefix sum and a product with phi(Q): elementwise, no
/// MACs. For whole chunks this is the sum of the MACs the rewrite emits
/// (test/unit/ReassociateTest.cpp).
template <typename Int>
Int chunkedCausalAttentionMacs(Int contextBatch, Int batch, Int positions,
                               Int chunk, Int dk, Int dv) {
  return batch * positions * chunk * (dk + dv) +
         contextBatch * positions * dk * dv + batch * positions * dk * dv;
}

} // namespace mlir::attn

#endif // ATTN_PASSES_COSTMODEL_H
