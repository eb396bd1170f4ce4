//===- AttnOps.h - Operations of the attn dialect ----------------*- C++
//-*-===//
#ifndef ATTN_DIALECT_ATTNOPS_H
#define ATTN_DIALECT_ATTNOPS_H

#include "dialect/AttnAttrs.h"
#include "dialect/AttnDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

#define GET_OP_CLASSES
#include "dialect/AttnOps.h.inc"

namespace mlir::attn {

/// Whether `type` is a ranked tensor of bf16 or f16: a storage type that attn
/// computes in f32 (docs/precision.md, --attn-widen-to-f32).
bool isReducedPrecisionTensor(Type type);

/// The element type of softmax row statistics (attn.dot_product's `with_lse`
/// result, attn.attention_grad's `lse`) for operands of `operandElement`:
/// the accumulator's, f64 for f64 and f32 for f32, bf16 and f16.
Type rowStatisticsElementType(Type operandElement);

/// Whether a norm list is one softmax over keys besides `none` steps (the
/// attention whose row log-sum-exp `with_lse` returns).
bool isSoftmaxOverKeys(ArrayAttr norm);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNOPS_H
