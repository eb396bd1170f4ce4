//===- ReferenceEvaluator.h - Run attn IR on the reference runtime -*- C++
//-*-===//
//
// Interprets a func.func of attn ops by calling the reference kernels of
// runtime/ op by op. This is the bridge from specs to the oracle: attn-run
// uses it to evaluate specs, and rewrites are checked by evaluating the IR
// before and after them. The runtime itself knows nothing of MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_REFERENCEEVALUATOR_H
#define ATTN_API_REFERENCEEVALUATOR_H

#include "runtime/Precision.h"
#include "runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::attn::api {

/// Returns an empty string if `tensor` fits `type` (same rank, equal static
/// dims; `?` takes any size), else a message saying what differs.
std::string describeShapeMismatch(const ::attn::runtime::Tensor &tensor,
                                  RankedTensorType type);

/// The runtime's name for the element type of a float tensor type (f64, f32,
/// bf16, f16); nullopt for anything else.
std::optional<::attn::runtime::ElementType> storedElementType(Type type);

/// Rounds `tensor` to the element type of `type` (bf16, f16, f32: to nearest
/// even; f64 and non-float types: unchanged).
void roundToStoredType(::attn::runtime::Tensor &tensor, Type type);

/// Evaluates `func` on `inputs` (one per argument, in order). Values are
/// doubles; each input and each op result of a bf16 or f16 type is rounded
/// to that type (docs/precision.md), so specs in reduced precision are
/// evaluated as their kernels store them. Every failure
/// (an input that does not fit its argument type, an op the evaluator does
/// not know, a runtime error) is emitted as an error at the location of the
/// offending op or function.
LogicalResult
evaluateWithReference(func::FuncOp func,
                      ArrayRef<::attn::runtime::Tensor> inputs,
                      SmallVectorImpl<::attn::runtime::Tensor> &results);

} // namespace mlir::attn::api

#endif // ATTN_API_REFERENCEEVALUATOR_H
