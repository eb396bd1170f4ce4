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

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNOPS_H
