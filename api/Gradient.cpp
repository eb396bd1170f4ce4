//===- Gradient.cpp - Gradients of spec functions, checked ----------------===//

#include "api/Gradient.h"

#include "api/KernelCheck.h"
#include "api/ReferenceEvaluator.h"
#include "dialect/AttnOps.h"
#include "passes/Passes.h"
#include "runtime/Npy.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <limits>
#include <map>
#include <random>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::api;
namespace rt = ::attn::runtime;

LogicalResult mlir::attn::api::addGradients(LoadedSpec &spec,
                                            ArrayRef<std::string> funcNames,
                                            bool saveStatistics) {
  PassManager pm(spec.module->getContext());
  AttnGradPassOptions options;
  options.funcs.assign(funcNames.begin(), funcNames.end());
  options.saveStatistics = saveStatistics;
  pm.addPass(createAttnGradPass(options));
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

unsigned mlir::attn::api::primalResultCount(func::FuncOp func) {
  unsigned count = 0;
  while (count < func.getNumResults() &&
         !func.getResultAttr(count, "attn.saved_statistics"))
    ++count;
  return count;
}

std::vector<std::string>
mlir::attn::api::gradientArgumentNames(func::FuncOp func,
                                       ArrayRef<std::string> argNames) {
  std::vector<std::string> names(argNames.begin(), argNames.end());
  unsigned primal = primalResultCount(func);
  for (unsigned i = 0; i < primal; ++i)
    names.push_back("dresult" + std::to_string(i));
  // lse0, output0, lse1, ...: each kind numbered on its own.
  std::map<std::string, unsigned> counts;
  for (unsigned i = primal; i < func.getNumResults(); ++i) {
    auto kind =
        func.getResultAttrOfType<StringAttr>(i, "attn.saved_statistics");
    std::string base = kind ? kind.str() : "saved";
    names.push_back(base + std::to_string(counts[base]++));
  }
  return names;
}

LogicalResult mlir::attn::api::bindCotangents(
    func::FuncOp func, ArrayRef<rt::Tensor> inputs, ArrayRef<std::string> files,
    std::optional<RandomValues> random, std::vector<rt::Tensor> &cotangents,
    std::string &error) {
  unsigned numResults = primalResultCount(func);
  std::string fname = "@" + func.getSymName().str();
  if (!files.empty() && files.size() != numResults) {
    error = "--cotangent given " + std::to_string(files.size()) +
            " times but " + fname + " returns " + std::to_string(numResults) +
            " results (one cotangent dO per result, in order)";
    return failure();
  }
  if (files.empty() && !random) {
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
    ArrayRef<int64_t> typeShape =
        cast<RankedTensorType>(func.getResultTypes()[i]).getShape();
    std::vector<int64_t> shape =
        dynamic ? forward[i].shape
                : std::vector<int64_t>(typeShape.begin(), typeShape.end());
    if (files.empty()) {
      if (failed(makeRandomTensor(shape,
                                  random->seed + func.getNumArguments() + i,
                                  cotangents[i], random->low, random->high))) {
        error = "cannot allocate the cotangent of result #" +
                std::to_string(i);
        return failure();
      }
      continue;
    }
    rt::Status status = rt::readNpy(files[i], cotangents[i]);
    if (!status) {
      error = "--cotangent " + files[i] + ": " + status.message();
      return failure();
    }
    if (cotangents[i].shape != shape) {
      error = "--cotangent " + files[i] + " has shape " +
              cotangents[i].shapeString() + " but result #" +
              std::to_string(i) + " of " + fname + " has shape " +
              rt::Tensor(shape).shapeString();
      return failure();
    }
  }
  return success();
}

namespace {

/// The reference results of `func` at `inputs`.
FailureOr<SmallVector<rt::Tensor>> forward(func::FuncOp func,
                                           ArrayRef<rt::Tensor> inputs) {
  SmallVector<rt::Tensor> results;
  if (failed(evaluateWithReference(func, inputs, results)))
    return failure();
  return results;
}

/// sum(dO * (plus - minus)): the results are subtracted before they are
/// weighted, so the parts of f that do not move cancel exactly instead of
/// leaving their rounding in the difference.
/// (f's saved statistics, after its primal results, have no cotangent and
/// are not part of L.)
double weightedDifference(ArrayRef<rt::Tensor> plus,
                          ArrayRef<rt::Tensor> minus,
                          ArrayRef<rt::Tensor> cotangents) {
  double total = 0.0;
  for (auto [p, m, dO] :
       llvm::zip_equal(plus.take_front(cotangents.size()),
                       minus.take_front(cotangents.size()), cotangents))
    for (size_t i = 0; i < dO.data.size(); ++i)
      total += dO.data[i] * (p.data[i] - m.data[i]);
  return total;
}

/// sum |dO * f(x)|: the scale of L = sum(dO * f) whose rounding the
/// central differences divide by the step.
double weightedMagnitude(ArrayRef<rt::Tensor> results,
                         ArrayRef<rt::Tensor> cotangents) {
  double total = 0.0;
  for (auto [r, dO] :
       llvm::zip_equal(results.take_front(cotangents.size()), cotangents))
    for (size_t i = 0; i < dO.data.size(); ++i)
      total += std::fabs(dO.data[i] * r.data[i]);
  return total;
}

/// Arguments up to this many elements are checked element by element.
constexpr int64_t kElementwiseLimit = 256;
/// Larger arguments: this many random elements.
constexpr int kSampledElements = 32;

} // namespace

LogicalResult mlir::attn::api::checkGradient(
    func::FuncOp func, func::FuncOp grad, ArrayRef<rt::Tensor> inputs,
    ArrayRef<rt::Tensor> cotangents, ArrayRef<std::string> argNames,
    double tolerance, const Console &console,
    SmallVectorImpl<rt::Tensor> &gradients, std::string &error) {
  // The reference rounds bf16/f16 values (docs/precision.md): a difference
  // quotient of a function rounded to 2^-8 measures the rounding, not the
  // derivative.
  bool reducedPrecision = false;
  func.walk([&](Operation *op) {
    reducedPrecision |=
        llvm::any_of(op->getOperandTypes(), isReducedPrecisionTensor) ||
        llvm::any_of(op->getResultTypes(), isReducedPrecisionTensor);
  });
  if (reducedPrecision) {
    error = "--check-grad: @" + func.getSymName().str() +
            " has bf16 or f16 values, whose rounding finite differences "
            "would measure instead of the derivative; check the spec with "
            "f32 types (its gradient IR is the same, computed in f32)";
    return failure();
  }
  std::vector<rt::Tensor> gradInputs(inputs.begin(), inputs.end());
  gradInputs.insert(gradInputs.end(), cotangents.begin(), cotangents.end());
  // With saved statistics (--attn-grad=save-statistics=1), @f_grad takes
  // what the reference @f saves at the inputs; the differences perturb the
  // inputs of f, which recomputes them.
  if (primalResultCount(func) < func.getNumResults()) {
    FailureOr<SmallVector<rt::Tensor>> results = forward(func, inputs);
    if (failed(results))
      return failure();
    gradInputs.insert(gradInputs.end(),
                      results->begin() + primalResultCount(func),
                      results->end());
  }
  if (failed(evaluateWithReference(grad, gradInputs, gradients)))
    return failure();
  std::string fname = "@" + func.getSymName().str();
  std::vector<rt::Tensor> point(inputs.begin(), inputs.end());
  // (L(x + h e) - L(x - h e)) / 2h, e the unit vector of `element` of
  // argument `arg`.
  auto centralDifference = [&](unsigned arg, int64_t element,
                               double h) -> FailureOr<double> {
    double &x = point[arg].data[element];
    double saved = x;
    x = saved + h;
    FailureOr<SmallVector<rt::Tensor>> plus = forward(func, point);
    x = saved - h;
    FailureOr<SmallVector<rt::Tensor>> minus = forward(func, point);
    x = saved;
    if (failed(plus) || failed(minus))
      return failure();
    return weightedDifference(*plus, *minus, cotangents) / (2.0 * h);
  };
  // Ridders' extrapolation of central differences to h -> 0: softmax
  // attention with large scores curves fast enough that one step size
  // either truncates or rounds above 1e-6.
  constexpr int kTable = 8;
  constexpr double kShrink = 1.4, kShrink2 = kShrink * kShrink;
  auto derivative = [&](unsigned arg, int64_t element,
                        double h0) -> FailureOr<double> {
    double table[kTable][kTable];
    double h = h0, best = 0.0, bestError = INFINITY;
    for (int i = 0; i < kTable; ++i, h /= kShrink) {
      FailureOr<double> estimate = centralDifference(arg, element, h);
      if (failed(estimate))
        return failure();
      table[0][i] = *estimate;
      if (i == 0) {
        best = *estimate;
        continue;
      }
      double factor = kShrink2;
      for (int j = 1; j <= i; ++j, factor *= kShrink2) {
        table[j][i] =
            (table[j - 1][i] * factor - table[j - 1][i - 1]) / (factor - 1);
        double error = std::max(std::fabs(table[j][i] - table[j - 1][i]),
                                std::fabs(table[j][i] - table[j - 1][i - 1]));
        if (error <= bestError) {
          bestError = error;
          best = table[j][i];
        }
      }
      // Higher orders got worse by a margin: rounding has taken over.
      if (std::fabs(table[i][i] - table[i - 1][i - 1]) >= 2.0 * bestError)
        break;
    }
    return best;
  };
  // Errors are relative to the argument's gradient, but never to less than
  // kFloor times the largest gradient entry of any argument: behind a
  // saturated softmax an argument gets ~1e-18 of gradient, all rounding.
  constexpr double kFloor = 1e-9;
  double largest = 0.0;
  for (const rt::Tensor &gradient : gradients)
    for (double value : gradient.data)
      largest = std::max(largest, std::fabs(value));
  double floor = kFloor * largest;
  // What the differences cannot resolve: each evaluation of L rounds at
  // about eps * sum |dO * f| (a few roundings per result: kRoundings), and
  // the smallest step divides that. An argument whose gradient is exactly 0
  // while f moves in its last bits (efficient attention over one position:
  // the output is V whatever Q is) measured 1e-11..6e-11 of "derivative",
  // all rounding, against a gradient of 0. A difference within this much
  // is not counted.
  constexpr double kRoundings = 16.0;
  FailureOr<SmallVector<rt::Tensor>> atPoint = forward(func, inputs);
  if (failed(atPoint))
    return failure();
  double roundingOfL = kRoundings * std::numeric_limits<double>::epsilon() *
                       weightedMagnitude(*atPoint, cotangents);
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
    // The first step of the extrapolation, relative to the inputs' scale.
    double h = 1e-4 * scale;
    int64_t count = inputs[arg].numElements();
    // Every element of a small argument, a random sample of a large one.
    // Elements, not random directions: a direction moves every sampling
    // location at once, and some bilinear sample always crosses a pixel
    // edge (a kink) within the step.
    std::vector<int64_t> elements;
    if (count <= kElementwiseLimit) {
      for (int64_t i = 0; i < count; ++i)
        elements.push_back(i);
    } else {
      std::uniform_int_distribution<int64_t> pick(0, count - 1);
      for (int s = 0; s < kSampledElements; ++s)
        elements.push_back(pick(generator));
    }
    double smallestStep = h / std::pow(kShrink, kTable - 1);
    double unresolved = roundingOfL / (2.0 * smallestStep);
    double maxDiff = 0.0;
    for (int64_t i : elements) {
      FailureOr<double> fd = derivative(arg, i, h);
      if (failed(fd))
        return failure();
      maxDiff =
          std::max(maxDiff, std::fabs(*fd - analytic.data[i]) - unresolved);
    }
    double denominator = std::max(gradMax, floor);
    double worst = denominator > 0.0 ? maxDiff / denominator : maxDiff;
    *console.out << "check-grad: " << fname << " d" << argNames[arg]
                 << " max rel err = " << llvm::format("%.3e", worst) << " ("
                 << elements.size();
    if (int64_t(elements.size()) < count)
      *console.out << " of " << count;
    *console.out << " elements)\n";
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
