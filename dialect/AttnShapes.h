//===- AttnShapes.h - Shape rules of the attn ops ----------------*- C++
//-*-===//
//
// Every shape rule of the dialect, written once. Ops call these from
// inferReturnTypes, so builders infer result types with the same code that
// verification runs. Shapes use ShapedType::kDynamic for `?`: a dynamic dim
// is compatible with anything and is checked at run time by the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DIALECT_ATTNSHAPES_H
#define ATTN_DIALECT_ATTNSHAPES_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::attn {

using Shape = SmallVector<int64_t>;

/// Produces a diagnostic for a shape error; returns an inactive diagnostic
/// when the caller only asks whether shapes fit.
using EmitShapeError = llvm::function_ref<InFlightDiagnostic()>;

/// Formats a shape as in tensor types: "2x?x64" ("scalar" for rank 0).
std::string formatShape(ArrayRef<int64_t> shape);

/// Bytes one element of `type` (a shaped type's element, or the type
/// itself) takes: its bit width rounded up; a complex number twice its
/// part's; 8 for a type without a width (index). Function arguments may
/// have any of them, not only the floats attn ops take.
unsigned elementBytes(Type type);

/// Numpy broadcast of two shapes (right-aligned; 1 or a missing dim
/// stretches). `what` names the operands in the error, e.g. "query and key".
FailureOr<Shape> broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                 StringRef what, EmitShapeError emitError);

/// True if the two shapes have the same rank and no pair of static dims
/// differs.
bool areCompatibleShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs);

/// attn.matmul: (..., M, K) x (..., K, N) -> (..., M, N), with transposes.
FailureOr<Shape> inferMatmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                  bool transposeLhs, bool transposeRhs,
                                  EmitShapeError emitError);

/// attn.reduce_sum: the input shape with `dim` of size 1; `dim` must name a
/// dim of the input.
FailureOr<Shape> inferReduceSumShape(ArrayRef<int64_t> input, int64_t dim,
                                     EmitShapeError emitError);

/// Operand names used in the messages of inferAttentionShape.
struct AttentionOperandNames {
  StringRef query = "query", key = "key", value = "value", mask = "mask";
};

/// Attention ops: query (..., n, dk), key (..., m, dk), value (..., m, dv),
/// optional mask (..., n, m) -> (..., n, dv); leading dims broadcast.
FailureOr<Shape> inferAttentionShape(ArrayRef<int64_t> query,
                                     ArrayRef<int64_t> key,
                                     ArrayRef<int64_t> value,
                                     std::optional<ArrayRef<int64_t>> mask,
                                     const AttentionOperandNames &names,
                                     EmitShapeError emitError);

/// Levels are a flat list [H0, W0, H1, W1, ...] of positive sizes.
LogicalResult verifyLevels(ArrayRef<int64_t> spatialShapes,
                           EmitShapeError emitError);

/// attn.bilinear_gather: value (N, Lv, M, D), locations (N, Lq, M, L, P, 2)
/// -> (N, Lq, M, L, P, D), Lv = sum of H*W and L = number of levels.
FailureOr<Shape> inferBilinearGatherShape(ArrayRef<int64_t> value,
                                          ArrayRef<int64_t> locations,
                                          ArrayRef<int64_t> spatialShapes,
                                          EmitShapeError emitError);

/// attn.gather_pixels: value (N, Lv, M, D), pixels (N, Lq, M, L, P, 2)
/// -> (N, Lq, M, L, P, D); the same rule as bilinear_gather.
FailureOr<Shape> inferGatherPixelsShape(ArrayRef<int64_t> value,
                                        ArrayRef<int64_t> pixels,
                                        ArrayRef<int64_t> spatialShapes,
                                        EmitShapeError emitError);

/// attn.deformable: as bilinear_gather plus weights (N, Lq, M, L, P)
/// -> (N, Lq, M*D).
FailureOr<Shape> inferDeformableShape(ArrayRef<int64_t> value,
                                      ArrayRef<int64_t> locations,
                                      ArrayRef<int64_t> weights,
                                      ArrayRef<int64_t> spatialShapes,
                                      EmitShapeError emitError);

/// attn.deformable_grad: the operands of attn.deformable (value (N, Lv, M,
/// D), locations (N, Lq, M, L, P, 2), weights (N, Lq, M, L, P)) and a
/// cotangent of its result shape (N, Lq, M*D). Results: dvalue
/// (N, Lv, M, D), dlocations (N, Lq, M, L, P, 2), dweights
/// (N, Lq, M, L, P), each with the dims the operands agree on.
FailureOr<SmallVector<Shape, 3>> inferDeformableGradShapes(
    ArrayRef<int64_t> value, ArrayRef<int64_t> locations,
    ArrayRef<int64_t> weights, ArrayRef<int64_t> cotangent,
    ArrayRef<int64_t> spatialShapes, EmitShapeError emitError);

/// attn.scatter_pixels: cotangent (N, Lq, M, L, P, D), pixels
/// (N, Lq, M, L, P, 2) -> (N, sum of H*W, M, D).
FailureOr<Shape> inferScatterPixelsShape(ArrayRef<int64_t> cotangent,
                                         ArrayRef<int64_t> pixels,
                                         ArrayRef<int64_t> spatialShapes,
                                         EmitShapeError emitError);

/// attn.broadcast: `input` must broadcast to `like`; the result is `like`.
FailureOr<Shape> inferBroadcastShape(ArrayRef<int64_t> input,
                                     ArrayRef<int64_t> like,
                                     EmitShapeError emitError);

/// attn.unbroadcast: `like` must broadcast to `input`; the result is `like`.
FailureOr<Shape> inferUnbroadcastShape(ArrayRef<int64_t> input,
                                       ArrayRef<int64_t> like,
                                       EmitShapeError emitError);

/// The row statistics of an attention result (..., n, dv): one value per
/// row, (..., n) (attn.dot_product's `with_lse` result).
Shape inferRowStatisticsShape(ArrayRef<int64_t> result);

/// The normalized context of attn.efficient (`with_context`), (..., dk,
/// dv): the result (..., n, dv) with its rows replaced by the query's dk.
Shape inferEfficientContextShape(ArrayRef<int64_t> result, int64_t dk);

/// The key softmax's log-sum-exp of attn.efficient (`with_context`),
/// (..., 1, dk), for a result of shape (..., n, dv).
Shape inferEfficientKeyLseShape(ArrayRef<int64_t> result, int64_t dk);

/// attn.attention_grad: the attention operands and optional mask as for
/// inferAttentionShape, a cotangent of the attention's result shape and
/// optional saved row statistics `lse` of its row-statistics shape, the
/// optional saved forward output of the result's shape. Results: dquery (...,
/// n, dk), dkey (..., m, dk), dvalue (..., m, dv), each with the broadcast
/// leading dims (the mask's included).
FailureOr<SmallVector<Shape, 3>> inferAttentionGradShapes(
    ArrayRef<int64_t> query, ArrayRef<int64_t> key, ArrayRef<int64_t> value,
    ArrayRef<int64_t> cotangent, std::optional<ArrayRef<int64_t>> mask,
    std::optional<ArrayRef<int64_t>> lse,
    std::optional<ArrayRef<int64_t>> forwardOutput, EmitShapeError emitError);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNSHAPES_H
