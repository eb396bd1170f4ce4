//===- Gradient.cpp - Gradients of spec functions, checked ----------------===//

#include "api/Gradient.h"

#include "api/KernelCheck.h"
#include "api/ReferenceEvaluator.h"
#include "passes/Passes.h"
#include "runtime/Npy.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::api;
namespace rt = ::attn::runtime;

LogicalResult mlir::attn::api::addGradients(LoadedSpec &spec) {
  PassManager pm(spec.module->getContext());
  pm.addPass(createAttnGradPass());
  return pm.run(*spec.module);
}

FailureOr<func::FuncOp> mlir::attn::api::gradientOf(func::FuncOp func,
                                                    std::string &error) {
  auto module = func->getParentOfType<ModuleOp>();
  std::string name = (func.getSymName() + "_grad").str();
  auto grad = module.lookupSymbol<func::FuncOp>(name);
  if (!grad || !grad->hasAttr("attn.gradient_of")) {
    error = "@" + func.getSymName().str() + " has no gradient @" + name;
    return failure();
  }
  return grad;
}

std::vector<std::string>
mlir::attn::api::gradientArgumentNames(func::FuncOp func,
                                       ArrayRef<std::string> argNames) {
  std::vector<std::string> names(argNames.begin(), argNames.end());
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    names.push_back("dresult" + std::to_string(i));
  return names;
}

LogicalResult mlir::attn::api::bindCotangents(
    func::FuncOp func, ArrayRef<rt::Tensor> inputs,
    ArrayRef<std::string> files, std::optional<uint64_t> randomSeed,
    std::vector<rt::Tensor> &cotangents, std::string &error) {
  unsigned numResults = func.getNumResults();
  std::string fname = "@" + func.getSymName().str();
  if (!files.empty() && files.size() != numResults) {
    error = "--cotangent given " + std::to_string(files.size()) +
            " times but " + fname + " returns " + std::to_string(numResults) +
            " results (one cotangent dO per result, in order)";
    return failure();
  }
  if (files.empty() && !randomSeed) {
    error = "--grad needs a cotangent per result of " + fname +
            ": --cotangent dO.npy (once per result) or --random SEED";
    return failure();
  }
  // Result shapes: from the type, or from a reference run when dynamic.
  SmallVector<rt::Tensor> forward;
  bool dynamic = llvm::any_of(func.getResultTypes(), [](Type type) {
    return !cast<RankedTensorType>(type).hasStaticShape();
  });
  if (dynamic && failed(evaluateWithReference(func, inputs, forward)))
    return failure();
  cotangents.assign(numResults, rt::Tensor());
  for (unsigned i = 0; i < numResults; ++i) {
    auto type = cast<RankedTensorType>(func.getResultTypes()[i]);
    if (!files.empty()) {
      rt::Status status = rt::readNpy(files[i], cotangents[i]);
      if (!status) {
        error = "--cotangent " + files[i] + ": " + status.message();
        return failure();
      }
      std::vector<int64_t> expected =
          dynamic ? forward[i].shape
                  : std::vector<int64_t>(type.getShape().begin(),
                                         type.getShape().end());
      if (cotangents[i].shape != expected) {
        error = "--cotangent " + files[i] + " has shape " +
                cotangents[i].shapeString() + " but result #" +
                std::to_string(i) + " of " + fname + " has shape " +
                rt::Tensor(expected).shapeString();
        return failure();
      }
      continue;
    }
    std::vector<int64_t> shape =
        dynamic ? forward[i].shape
                : std::vector<int64_t>(type.getShape().begin(),
                                       type.getShape().end());
    if (failed(makeRandomTensor(shape, *randomSeed + func.getNumArguments() + i,
                                cotangents[i]))) {
      error = "cannot allocate the cotangent of result #" + std::to_string(i);
      return failure();
    }
  }
  return success();
}

namespace {

/// L(x) = sum over results of sum(dO * f(x)), evaluated in f64.
FailureOr<double> weightedOutput(func::FuncOp func,
                                 ArrayRef<rt::Tensor> inputs,
                                 ArrayRef<rt::Tensor> cotangents) {
  SmallVector<rt::Tensor> results;
  if (failed(evaluateWithReference(func, inputs, results)))
    return failure();
  double total = 0.0;
  for (auto [result, cotangent] : llvm::zip_equal(results, cotangents))
    for (auto [value, weight] : llvm::zip_equal(result.data, cotangent.data))
      total += weight * value;
  return total;
}

/// Arguments up to this many elements are checked element by element.
constexpr int64_t kElementwiseLimit = 256;
/// Larger arguments: this many random directions.
constexpr int kDirections = 4;

} // namespace

LogicalResult mlir::attn::api::checkGradient(
    func::FuncOp func, func::FuncOp grad, ArrayRef<rt::Tensor> inputs,
    ArrayRef<rt::Tensor> cotangents, ArrayRef<std::string> argNames,
    double tolerance, const Console &console,
    SmallVectorImpl<rt::Tensor> &gradients, std::string &error) {
  std::vector<rt::Tensor> gradInputs(inputs.begin(), inputs.end());
  gradInputs.insert(gradInputs.end(), cotangents.begin(), cotangents.end());
  if (failed(evaluateWithReference(grad, gradInputs, gradients)))
    return failure();
  std::string fname = "@" + func.getSymName().str();
  std::vector<rt::Tensor> point(inputs.begin(), inputs.end());
  // L at x + h v and x - h v, for argument `arg` moved along `direction`.
  auto centralDifference = [&](unsigned arg, double h,
                               auto &&move) -> FailureOr<double> {
    std::vector<double> saved = point[arg].data;
    move(point[arg].data, +h);
    FailureOr<double> plus = weightedOutput(func, point, cotangents);
    point[arg].data = saved;
    move(point[arg].data, -h);
    FailureOr<double> minus = weightedOutput(func, point, cotangents);
    point[arg].data = std::move(saved);
    if (failed(plus) || failed(minus))
      return failure();
    return (*plus - *minus) / (2.0 * h);
  };
  bool passed = true;
  unsigned gradIndex = 0;
  std::mt19937_64 generator(12345);
  for (unsigned arg = 0; arg < func.getNumArguments(); ++arg) {
    if (func.getArgAttr(arg, "attn.no_grad"))
      continue;
    const rt::Tensor &analytic = gradients[gradIndex++];
    double scale = 1.0, gradMax = 0.0;
    for (double value : inputs[arg].data)
      scale = std::max(scale, std::fabs(value));
    for (double value : analytic.data)
      gradMax = std::max(gradMax, std::fabs(value));
    // Truncation error ~ h^2, rounding ~ 1e-16 / h: h = 1e-5 balances both
    // well below 1e-6 for inputs of order 1.
    double h = 1e-5 * scale;
    double worst = 0.0;
    int64_t count = inputs[arg].numElements();
    bool elementwise = count <= kElementwiseLimit;
    if (elementwise) {
      double maxDiff = 0.0;
      for (int64_t i = 0; i < count; ++i) {
        FailureOr<double> fd = centralDifference(
            arg, h, [&](std::vector<double> &x, double step) { x[i] += step; });
        if (failed(fd))
          return failure();
        maxDiff = std::max(maxDiff, std::fabs(*fd - analytic.data[i]));
      }
      worst = gradMax > 0.0 ? maxDiff / gradMax : maxDiff;
    } else {
      std::uniform_real_distribution<double> uniform(-1.0, 1.0);
      for (int d = 0; d < kDirections; ++d) {
        std::vector<double> direction(count);
        double dot = 0.0, gradNorm = 0.0, dirNorm = 0.0;
        for (int64_t i = 0; i < count; ++i) {
          direction[i] = uniform(generator);
          dot += analytic.data[i] * direction[i];
          gradNorm += analytic.data[i] * analytic.data[i];
          dirNorm += direction[i] * direction[i];
        }
        FailureOr<double> fd = centralDifference(
            arg, h, [&](std::vector<double> &x, double step) {
              for (int64_t i = 0; i < count; ++i)
                x[i] += step * direction[i];
            });
        if (failed(fd))
          return failure();
        double norm = std::sqrt(gradNorm * dirNorm);
        double diff = std::fabs(*fd - dot);
        worst = std::max(worst, norm > 0.0 ? diff / norm : diff);
      }
    }
    *console.out << "check-grad: " << fname << " d" << argNames[arg]
                 << " max rel err = " << llvm::format("%.3e", worst) << " ("
                 << (elementwise ? count : kDirections)
                 << (elementwise ? " elements" : " directions") << ")\n";
    if (!(worst <= tolerance)) {
      console.out->flush();
      *console.err << "check-grad: " << fname << " d" << argNames[arg]
                   << " FAILED: max rel err " << llvm::format("%.3e", worst)
                   << " > tolerance " << llvm::format("%.3e", tolerance)
                   << "\n";
      passed = false;
    }
  }
  return success(passed);
}
