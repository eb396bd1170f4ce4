//===- Gradient.h - Gradients of spec functions, checked -------*- C++ -*-===//
//
// What attn-run --grad and attn-compile --grad do around --attn-grad: add
// @f_grad to a spec, bind the cotangents dO of @f's results, and check the
// reference gradient against central finite differences of the reference
// forward (design §7). Codegen-free (AttnApiCore).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_GRADIENT_H
#define ATTN_API_GRADIENT_H

#include "api/Console.h"
#include "api/KernelCheck.h"
#include "api/SpecLoader.h"
#include "runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::api {

/// Runs --attn-grad on `spec`: every function @f named in `funcNames` (all
/// when empty) gets @f_grad. Failures are reported as diagnostics at the op
/// without a rule.
/// With `saveStatistics` (--attn-grad=save-statistics=1), @f also returns
/// the row log-sum-exp of its fused softmax attention ops and @f_grad takes
/// them after the cotangents (docs/training.md, "Saved statistics").
LogicalResult addGradients(LoadedSpec &spec,
                           ArrayRef<std::string> funcNames = {},
                           bool saveStatistics = false);

/// The number of results of @f that are its own, before the saved
/// statistics (results marked `attn.saved_statistics`) that
/// save-statistics appends.
unsigned primalResultCount(func::FuncOp func);

/// The gradient function --attn-grad made for `func` (@<name>_grad).
FailureOr<func::FuncOp> gradientOf(func::FuncOp func, std::string &error);

/// The parameter names of @f_grad: f's argument names, then d<name> for
/// each result of f (dresult0, dresult1, ...), then for the statistics f
/// saves (save-statistics) their kind numbered per kind: lse0, output0,
/// lse1, ...
std::vector<std::string> gradientArgumentNames(func::FuncOp func,
                                               ArrayRef<std::string> argNames);

/// One cotangent per result of `func`: `files[i]` (.npy) for result i when
/// files are given (exactly one per result), else uniform values in
/// `random`'s range from its seed + (number of arguments) + i. A result with
/// dynamic dims takes the shape the reference runtime gives it on `inputs`. A
/// cotangent whose shape is not its result's is an error naming both.
LogicalResult bindCotangents(func::FuncOp func,
                             ArrayRef<::attn::runtime::Tensor> inputs,
                             ArrayRef<std::string> files,
                             std::optional<RandomValues> random,
                             std::vector<::attn::runtime::Tensor> &cotangents,
                             std::string &error);

/// The largest relative error --check-grad accepts by default: the
/// reference runs in f64, so central differences agree to about 1e-9.
constexpr double kGradientCheckTolerance = 1e-6;

/// attn-run --check-grad: evaluates `grad` (@f_grad) with the reference
/// runtime on `inputs` + `cotangents` and compares each argument's gradient
/// with central finite differences of L(x) = sum(dO * f(x)) in f64,
/// Ridders-extrapolated to h -> 0: every element of an argument of at most
/// 256 elements, 32 random elements of a larger one. Prints one line per
/// argument,
///   check-grad: @f d<name> max rel err = X (N [of M] elements)
/// with rel err = max |fd - grad| / max |grad|, where max |grad| is at least
/// 1e-9 times the largest gradient entry of any argument (an argument
/// behind a saturated softmax gets only rounding-sized gradient), and
/// |fd - grad| counts only beyond what the differences resolve (16 eps of
/// sum |dO * f| over twice the smallest step). Fails when an error exceeds
/// `tolerance`. The reference gradient is returned
/// in `gradients`. When `func` also returns saved statistics (after its
/// primal results; --attn-grad=save-statistics=1), `grad` takes the
/// reference `func`'s at `inputs` after the cotangents.
LogicalResult checkGradient(func::FuncOp func, func::FuncOp grad,
                            ArrayRef<::attn::runtime::Tensor> inputs,
                            ArrayRef<::attn::runtime::Tensor> cotangents,
                            ArrayRef<std::string> argNames, double tolerance,
                            const Console &console,
                            SmallVectorImpl<::attn::runtime::Tensor> &gradients,
                            std::string &error);

} // namespace mlir::attn::api

#endif // ATTN_API_GRADIENT_H
