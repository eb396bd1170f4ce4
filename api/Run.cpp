//===- Run.cpp - Evaluate spec functions on tensors and check them --------===//

#include "api/Run.h"

#include "api/KernelCheck.h"
#include "api/MemoryGuard.h"
#include "api/ReferenceEvaluator.h"
#include "runtime/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::attn::api;
namespace rt = ::attn::runtime;

LogicalResult mlir::attn::api::bindInputs(
    func::FuncOp func, ArrayRef<std::string> argNames,
    ArrayRef<std::string> files, std::optional<RandomValues> random,
    int64_t dynamicSize, std::vector<rt::Tensor> &inputs, std::string &error) {
  auto fail = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  // Map inputs to arguments: by name, or the next unfilled argument.
  unsigned numArgs = func.getNumArguments();
  inputs.assign(numArgs, rt::Tensor());
  std::vector<bool> given(numArgs, false);
  unsigned nextPositional = 0;
  for (const std::string &entry : files) {
    StringRef text(entry);
    unsigned index;
    std::string path;
    auto [name, file] = text.split('=');
    if (!file.empty()) {
      auto it = llvm::find(argNames, name.str());
      if (it == argNames.end()) {
        std::string known;
        for (const std::string &n : argNames)
          known += " " + n;
        return fail("--input " + entry + ": @" + func.getSymName() +
                    " has no argument '" + name + "' (arguments:" + known +
                    ")");
      }
      index = it - argNames.begin();
      path = file.str();
    } else {
      while (nextPositional < numArgs && given[nextPositional])
        ++nextPositional;
      if (nextPositional == numArgs)
        return fail("--input " + entry + ": @" + func.getSymName() +
                    " takes only " + Twine(numArgs) + " inputs");
      index = nextPositional;
      path = entry;
    }
    if (given[index])
      return fail("input '" + argNames[index] + "' is given twice");
    rt::Status status = rt::readNpy(path, inputs[index]);
    if (!status)
      return fail(status.message());
    // The argument holds values of its element type only: a float32 file
    // for a bf16 argument is rounded here, for the kernel and the reference
    // alike (docs/precision.md).
    roundToStoredType(inputs[index], func.getArgument(index).getType());
    given[index] = true;
  }
  for (unsigned i = 0; i < numArgs; ++i) {
    if (given[i])
      continue;
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!random || !type)
      return fail("missing input '" + argNames[i] + "' (argument #" + Twine(i) +
                  " of @" + func.getSymName() + "); pass --input " +
                  argNames[i] + "=file.npy or --random SEED");
    error = makeRandomInput(type, dynamicSize, random->seed + i, argNames[i],
                            inputs[i], random->low, random->high);
    if (!error.empty())
      return failure();
  }
  return success();
}

LogicalResult mlir::attn::api::saveInputs(StringRef dir,
                                          ArrayRef<std::string> argNames,
                                          ArrayRef<rt::Tensor> inputs,
                                          std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = ("cannot create " + dir + ": " + ec.message()).str();
    return failure();
  }
  for (auto [name, input] : llvm::zip_equal(argNames, inputs)) {
    SmallString<128> path(dir);
    llvm::sys::path::append(path, name + ".npy");
    rt::Status status =
        rt::writeNpy(std::string(path), input, rt::NpyDType::Float32);
    if (!status) {
      error = status.message();
      return failure();
    }
  }
  return success();
}

LogicalResult mlir::attn::api::checkInputShapes(func::FuncOp func,
                                                ArrayRef<rt::Tensor> inputs) {
  for (auto [i, input] : llvm::enumerate(inputs))
    if (auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType())) {
      std::string mismatch = describeShapeMismatch(input, type);
      if (!mismatch.empty())
        return func.emitError("input #") << i << " " << mismatch;
    }
  return success();
}

LogicalResult mlir::attn::api::benchKernel(LoadedKernel &kernel, unsigned runs,
                                           const Console &console) {
  FailureOr<Timing> timing = kernel.time(runs);
  if (failed(timing))
    return failure();
  *console.out << "bench: @" << kernel.functionName() << " median "
               << llvm::format("%.4f", timing->medianMs) << " ms over "
               << timing->runs << " runs (min "
               << llvm::format("%.4f", timing->minMs) << " ms)\n";
  return success();
}

LogicalResult mlir::attn::api::checkAgainstReference(
    StringRef funcName, ArrayRef<rt::Tensor> results,
    ArrayRef<rt::Tensor> reference, double tolerance, const Console &console,
    std::string &error) {
  ReferenceComparison comparison = compareWithReference(results, reference);
  if (!comparison.mismatch.empty()) {
    error = ("check: @" + funcName + " " + comparison.mismatch).str();
    return failure();
  }
  double relError = comparison.maxRelError;
  *console.out << "check: @" << funcName << " max abs err = "
               << llvm::format("%.3e", comparison.maxAbsError)
               << ", max rel err = " << llvm::format("%.3e", relError) << "\n";
  if (relError <= tolerance)
    return success();
  console.out->flush();
  *console.err << "check: @" << funcName << " FAILED: max rel err "
               << llvm::format("%.3e", relError) << " > tolerance "
               << llvm::format("%.3e", tolerance) << "\n";
  return failure();
}

namespace {

/// The kind of a value as the non-finite rule tells values apart.
enum class ValueKind { Finite, NaN, PlusInf, MinusInf };

ValueKind kindOf(double value) {
  if (std::isnan(value))
    return ValueKind::NaN;
  if (std::isinf(value))
    return value > 0 ? ValueKind::PlusInf : ValueKind::MinusInf;
  return ValueKind::Finite;
}

/// "[i, j, ...]", the index of entry `flat` of `shape` (row-major).
std::string formatIndex(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? "," : "") + std::to_string(index[d]);
  return text + "]";
}

std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// The first entry where a kernel result and the reference's differ in
/// kind, as "result #r [index]: kernel X, reference Y"; "" when none does.
std::string firstKindDifference(ArrayRef<rt::Tensor> results,
                                ArrayRef<rt::Tensor> reference) {
  for (auto [r, pair] : llvm::enumerate(llvm::zip_equal(results, reference))) {
    auto [kernel, expected] = pair;
    for (size_t i = 0; i < kernel.data.size(); ++i)
      if (kindOf(kernel.data[i]) != kindOf(expected.data[i]))
        return ("result #" + Twine(r) + " " +
                formatIndex(kernel.shape, int64_t(i)) + ": kernel " +
                formatNumber(kernel.data[i]) + ", reference " +
                formatNumber(expected.data[i]))
            .str();
  }
  return "";
}

} // namespace

LogicalResult mlir::attn::api::checkNonFinite(
    func::FuncOp func, ArrayRef<std::string> argNames,
    ArrayRef<rt::Tensor> inputs, LoadedKernel &kernel, double tolerance,
    const Console &console, std::string &error) {
  const std::pair<double, const char *> values[] = {
      {NAN, "nan"}, {INFINITY, "inf"}, {-INFINITY, "-inf"}};
  unsigned cases = 0, disagreements = 0;
  std::vector<rt::Tensor> poisoned(inputs.begin(), inputs.end());
  for (auto [argIndex, input] : llvm::enumerate(inputs)) {
    if (input.data.empty())
      continue;
    int64_t flat = 0;
    for (int64_t size : input.shape)
      flat = flat * size + 2 * size / 3;
    std::string entry = argNames[argIndex] + formatIndex(input.shape, flat);
    for (auto [value, spelling] : values) {
      poisoned[argIndex].data[flat] = value;
      SmallVector<rt::Tensor> reference;
      if (failed(evaluateWithReference(func, poisoned, reference)) ||
          failed(kernel.run(poisoned)))
        return failure();
      SmallVector<rt::Tensor> results = kernel.results();
      ReferenceComparison comparison = compareWithReference(results, reference);
      if (!comparison.mismatch.empty()) {
        error = ("check-non-finite: @" + func.getSymName() + " " +
                 comparison.mismatch)
                    .str();
        return failure();
      }
      ++cases;
      bool agrees = comparison.maxRelError <= tolerance;
      *console.out << "check-non-finite: @" << func.getSymName() << " " << entry
                   << " = " << spelling << ": max rel err = "
                   << llvm::format("%.3e", comparison.maxRelError)
                   << (agrees ? "" : " FAILED") << "\n";
      if (!agrees) {
        ++disagreements;
        std::string where = firstKindDifference(results, reference);
        if (!where.empty())
          *console.out << "check-non-finite:   " << where << "\n";
      }
    }
    poisoned[argIndex].data[flat] = input.data[flat];
  }
  *console.out << "check-non-finite: @" << func.getSymName() << " "
               << cases - disagreements << " of " << cases << " cases agree\n";
  if (disagreements == 0)
    return success();
  console.out->flush();
  error = ("check-non-finite: @" + func.getSymName() +
           " FAILED: " + Twine(disagreements) + " of " + Twine(cases) +
           " cases disagree with the reference")
              .str();
  return failure();
}

/// `label: SHAPE min X max Y mean Z` on `os`.
static void printSummary(llvm::raw_ostream &os, StringRef label,
                         const rt::Tensor &tensor) {
  double minimum = INFINITY, maximum = -INFINITY, sum = 0.0;
  for (double value : tensor.data) {
    minimum = std::min(minimum, value);
    maximum = std::max(maximum, value);
    sum += value;
  }
  os << label << ": " << tensor.shapeString() << " min "
     << llvm::format("%.6g", minimum) << " max "
     << llvm::format("%.6g", maximum) << " mean "
     << llvm::format("%.6g", tensor.data.empty()
                                 ? 0.0
                                 : sum / double(tensor.data.size()))
     << "\n";
}

LogicalResult mlir::attn::api::writeResults(func::FuncOp func,
                                            ArrayRef<rt::Tensor> results,
                                            ArrayRef<std::string> outputFiles,
                                            bool quiet, const Console &console,
                                            std::string &error) {
  if (outputFiles.size() > results.size()) {
    error =
        ("--output given " + Twine(outputFiles.size()) + " times but @" +
         func.getSymName() + " returns " + Twine(results.size()) + " results")
            .str();
    return failure();
  }
  for (auto [index, result] : llvm::enumerate(results)) {
    if (!quiet)
      printSummary(*console.out, "result #" + std::to_string(index), result);
    if (index >= outputFiles.size())
      continue;
    // NumPy has no bfloat16: bf16 results are written as float32, which
    // holds them exactly.
    Type element = cast<RankedTensorType>(func.getResultTypes()[index])
                       .getElementType();
    rt::NpyDType dtype = element.isF64()   ? rt::NpyDType::Float64
                         : element.isF16() ? rt::NpyDType::Float16
                                           : rt::NpyDType::Float32;
    rt::Status status = rt::writeNpy(outputFiles[index], result, dtype);
    if (!status) {
      error = status.message();
      return failure();
    }
  }
  return success();
}

namespace {

/// Largest |a - b| and, relative to the original's scale, the largest
/// |a - b| / max |b| (b: original results); positions where both are NaN
/// agree, a NaN on one side only is an infinite error.
struct Difference {
  double absolute = 0.0;
  double relative = 0.0;
};

Difference compareResults(ArrayRef<rt::Tensor> original,
                          ArrayRef<rt::Tensor> rewritten) {
  Difference worst;
  for (auto [before, after] : llvm::zip_equal(original, rewritten)) {
    double maxError = 0.0, maxMagnitude = 0.0;
    for (auto [b, a] : llvm::zip_equal(before.data, after.data)) {
      if (std::isnan(a) && std::isnan(b))
        continue;
      double error = std::fabs(a - b);
      maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
      if (std::isfinite(b))
        maxMagnitude = std::max(maxMagnitude, std::fabs(b));
    }
    double relative = maxError == 0.0      ? 0.0
                      : maxMagnitude > 0.0 ? maxError / maxMagnitude
                                           : INFINITY;
    worst.absolute = std::max(worst.absolute, maxError);
    worst.relative = std::max(worst.relative, relative);
  }
  return worst;
}

/// `op` alone, in generic form. Local scope: value numbers printed in the
/// module's scope depend on the other functions (their sizes before and
/// after a pipeline), so an unchanged function could print differently.
std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  return text;
}

} // namespace

LogicalResult mlir::attn::api::verifyRewrites(const LoadedSpec &spec,
                                              StringRef pipeline, uint64_t seed,
                                              int64_t dynamicSize,
                                              const Console &console,
                                              std::string &error) {
  auto fail = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  ModuleOp module = *spec.module;
  OwningOpRef<ModuleOp> rewritten = module.clone();
  PassManager passes(module.getContext());
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  if (failed(parsePassPipeline(pipeline, passes, errorStream)))
    return fail("--verify-rewrites: cannot parse pipeline '" + pipeline +
                "': " + parseErrors);
  if (failed(passes.run(*rewritten)))
    return fail("--verify-rewrites: pipeline '" + pipeline + "' failed");

  bool exactFailed = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    auto after = rewritten->lookupSymbol<func::FuncOp>(func.getSymName());
    if (!after)
      return fail("--verify-rewrites: the pipeline removed @" +
                  func.getSymName());
    // Two reference evaluations (before and after) on random inputs, each
    // estimated before anything is allocated (docs/reliability.md).
    if (std::optional<uint64_t> available = availableMemory()) {
      std::vector<std::string> names;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        names.push_back(argumentName(spec.parserState, func, i));
      for (func::FuncOp version : {func, after}) {
        std::string tooLarge = checkMemory(
            estimateRunMemory(version, names, dynamicSize, /*kernel=*/false,
                              /*reference=*/true),
            *available, "are available (MemAvailable)");
        if (!tooLarge.empty())
          return fail("--verify-rewrites: @" + func.getSymName() + ": " +
                      tooLarge);
      }
    }
    std::vector<rt::Tensor> inputs(func.getNumArguments());
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      std::string name = argumentName(spec.parserState, func, i);
      auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      if (!type)
        return fail("argument '" + name + "' of @" + func.getSymName() +
                    " is not a ranked tensor");
      std::string why =
          makeRandomInput(type, dynamicSize, seed + i, name, inputs[i]);
      if (!why.empty())
        return fail("@" + func.getSymName() + ": " + why);
    }
    SmallVector<rt::Tensor> before, afterResults;
    if (failed(evaluateWithReference(func, inputs, before)) ||
        failed(evaluateWithReference(after, inputs, afterResults)))
      return failure();
    if (before.size() != afterResults.size())
      return fail("--verify-rewrites: @" + func.getSymName() +
                  " returns a different number of results after the pipeline");
    for (auto [b, a] : llvm::zip_equal(before, afterResults))
      if (b.shape != a.shape)
        return fail("--verify-rewrites: @" + func.getSymName() + " returns " +
                    a.shapeString() + " after the pipeline, " +
                    b.shapeString() + " before");

    // An op that carries attn.approximation makes the function approximate.
    std::string approximation;
    after.walk([&](Operation *op) {
      if (auto note = op->getAttrOfType<StringAttr>("attn.approximation"))
        approximation = note.str();
    });
    Difference difference = compareResults(before, afterResults);
    std::string kind = !approximation.empty() ? "approximate: " + approximation
                       : printed(func) == printed(after) ? "unchanged"
                                                         : "exact";
    *console.out << "verify-rewrites: @" << func.getSymName()
                 << " max abs err = "
                 << llvm::format("%.3g", difference.absolute)
                 << ", max rel err = "
                 << llvm::format("%.3g", difference.relative) << " (" << kind
                 << ")\n";
    if (approximation.empty() &&
        !(difference.relative <= kExactRelativeTolerance)) {
      llvm::WithColor::error(*console.err, console.tool)
          << "@" << func.getSymName() << ": the pipeline claims an exact "
          << "rewrite but the results differ by "
          << llvm::format("%.3g", difference.relative) << " relative (> "
          << kExactRelativeTolerance << ")\n";
      exactFailed = true;
    }
  }
  return failure(exactFailed);
}
