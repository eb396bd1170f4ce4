//===- KernelCheck.h - Compare kernels with the reference; time them -*- C++
//-*-===//
//
// The rules attn-run --check / --bench and the tuner share, written once:
// random inputs, the relative-error rule a kernel must meet against the
// reference runtime, and the median of timed runs.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_KERNELCHECK_H
#define ATTN_API_KERNELCHECK_H

#include "runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace mlir::attn::api {

/// The largest max rel err a kernel may show against the reference
/// (attn-run --check's default --tolerance).
constexpr double kDefaultCheckTolerance = 1e-4;

/// The max rel err --check and the tuner accept for a kernel of `func` by
/// default: kDefaultCheckTolerance, or for a function with values declared
/// bf16 or f16 (any op result or result type) the bound derived in
/// docs/precision.md for its narrowest type, 2 (2u + 2^-12): one ulp at
/// each of at most two rounded values on a path, plus f32 accumulation
/// over up to 2^12 terms (bf16: 1.61e-2, f16: 2.44e-3). An op with
/// attn.allow_bf16_products adds: a softmax attention 2 u_bf16 for its
/// rounded weights (2.39e-2), attn.efficient (4u + 2u^2) / (1 - u) for its
/// rounded weights and context (3.18e-2), an attn.dot_product without
/// softmax (the linear forms) (1 + u)^3 - 1 for phi(Q), phi(K) and the
/// context (2.79e-2), attn.matmul (1 + u)^2 - 1 for its operands
/// (2.39e-2).
double defaultCheckTolerance(func::FuncOp func);

/// Random inputs: uniform values in [low, high) from `seed` (attn-run
/// --random, --random-range).
struct RandomValues {
  uint64_t seed = 1;
  double low = 0.0;
  double high = 1.0;
};

/// A uniform [low, high) tensor of `shape` generated from `seed`, rounded
/// to f32 so f32 kernels and the reference see the same numbers. Fails
/// (leaving `tensor` with the shape and no data) if it is too large to
/// allocate.
LogicalResult makeRandomTensor(std::vector<int64_t> shape, uint64_t seed,
                               ::attn::runtime::Tensor &tensor,
                               double low = 0.0, double high = 1.0);

/// makeRandomTensor for an argument of `type`, rounded to its element type
/// (bf16 and f16 arguments get values they hold exactly); dynamic dims take
/// `dynamicSize` (negative: none given). Returns an error message, or "" on
/// success.
std::string makeRandomInput(RankedTensorType type, int64_t dynamicSize,
                            uint64_t seed, const std::string &name,
                            ::attn::runtime::Tensor &input, double low = 0.0,
                            double high = 1.0);

/// How far kernel results are from the reference's: max abs err = largest
/// |kernel - reference|, max rel err = max abs err / max |reference| over all
/// results. NaN or inf where the reference has a number (or the reverse) is
/// an infinite error; equal non-finite values agree. `mismatch` is set (and
/// the errors are meaningless) when the shapes differ.
struct ReferenceComparison {
  double maxAbsError = 0.0;
  double maxRelError = 0.0;
  std::string mismatch;
};
ReferenceComparison
compareWithReference(ArrayRef<::attn::runtime::Tensor> kernel,
                     ArrayRef<::attn::runtime::Tensor> reference);

/// Wall-clock times of `runs` calls of `run` (the caller warms up first).
struct Timing {
  double medianMs = 0.0;
  double minMs = 0.0;
  size_t runs = 0;
};
FailureOr<Timing> timeRuns(unsigned runs, llvm::function_ref<LogicalResult()> run);

} // namespace mlir::attn::api

#endif // ATTN_API_KERNELCHECK_H
