//===- Run.h - Run spec functions on tensors, check them ------ -*- C++ -*-===//
//
// What attn-run does around a kernel: binds .npy files or random tensors to
// a function's arguments, times a loaded kernel (api/Compile.h), compares
// its results with the reference runtime's (api/ReferenceEvaluator.h),
// writes the results, and checks a pass pipeline's rewrites by numbers.
// Errors follow api/Console.h; messages name attn-run's flags.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_RUN_H
#define ATTN_API_RUN_H

#include "api/Compile.h"
#include "api/Console.h"
#include "api/KernelCheck.h"
#include "api/SpecLoader.h"
#include "runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::api {

/// An input for every argument of `func` (source names `argNames`):
/// `files` are .npy files given as "name=file.npy" (by argument name) or
/// "file.npy" (the next argument without an input); the other arguments get
/// random inputs (api/KernelCheck.h), argument i from `random`'s seed + i,
/// dynamic dims `dynamicSize` (negative: none given). Without `random`, an
/// argument without a file is an error.
LogicalResult bindInputs(func::FuncOp func, ArrayRef<std::string> argNames,
                         ArrayRef<std::string> files,
                         std::optional<RandomValues> random,
                         int64_t dynamicSize,
                         std::vector<::attn::runtime::Tensor> &inputs,
                         std::string &error);

/// Writes input i to <dir>/<argNames[i]>.npy (float32), creating `dir`.
LogicalResult saveInputs(StringRef dir, ArrayRef<std::string> argNames,
                         ArrayRef<::attn::runtime::Tensor> inputs,
                         std::string &error);

/// Emits an error at `func` for the first input that does not fit its
/// argument type.
LogicalResult checkInputShapes(func::FuncOp func,
                               ArrayRef<::attn::runtime::Tensor> inputs);

/// Times `runs` runs of `kernel` on its bound inputs (after the run that
/// bound them) and prints
/// `bench: @f median <ms> ms over N runs (min <ms> ms)`.
LogicalResult benchKernel(LoadedKernel &kernel, unsigned runs,
                          const Console &console);

/// Compares `results` of `funcName` with the reference runtime's and prints
/// `check: @f max abs err = X, max rel err = Y` (rel err = max|results -
/// reference| / max|reference| over all results); fails when rel err
/// exceeds `tolerance`, saying so on console.err.
LogicalResult checkAgainstReference(StringRef funcName,
                                    ArrayRef<::attn::runtime::Tensor> results,
                                    ArrayRef<::attn::runtime::Tensor> reference,
                                    double tolerance, const Console &console,
                                    std::string &error);

/// attn-run --check-non-finite: for each input in turn and each of NaN,
/// +inf and -inf, sets the input's entry at 2/3 of every dim (index
/// floor(2 size / 3), off the first and middle rows that blocks and splits
/// start at) to that value, runs `kernel` and the reference on the inputs
/// and compares them as --check does: the kernel must give NaN, +inf and
/// -inf exactly where the reference does (docs/reliability.md) and agree
/// within `tolerance` elsewhere. Prints one `check-non-finite:` line per
/// case and, for a disagreement, the first entry whose kind differs; fails
/// when any case disagrees.
LogicalResult checkNonFinite(func::FuncOp func, ArrayRef<std::string> argNames,
                             ArrayRef<::attn::runtime::Tensor> inputs,
                             LoadedKernel &kernel, double tolerance,
                             const Console &console, std::string &error);

/// Prints a summary of each result of `func` (`result #i: SHAPE min X max Y
/// mean Z`) unless `quiet`, and writes result i to `outputFiles[i]` (.npy,
/// the element type of the result).
LogicalResult writeResults(func::FuncOp func,
                           ArrayRef<::attn::runtime::Tensor> results,
                           ArrayRef<std::string> outputFiles, bool quiet,
                           const Console &console, std::string &error);

/// An exact rewrite may differ from the original by float reassociation
/// only.
constexpr double kExactRelativeTolerance = 1e-5;

/// attn-run --verify-rewrites: runs `pipeline` on a copy of the spec and
/// evaluates every function before and after with the reference runtime on
/// the same random inputs (argument i from `seed` + i, dynamic dims
/// `dynamicSize`), printing one `verify-rewrites:` line per function with
/// the largest absolute and relative difference. Fails when a rewrite that
/// claims to be exact (no op carries attn.approximation) differs by more
/// than kExactRelativeTolerance relative.
LogicalResult verifyRewrites(const LoadedSpec &spec, StringRef pipeline,
                             uint64_t seed, int64_t dynamicSize,
                             const Console &console, std::string &error);

} // namespace mlir::attn::api

#endif // ATTN_API_RUN_H
