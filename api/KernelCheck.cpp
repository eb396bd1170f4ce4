//===- KernelCheck.cpp - Compare kernels with the reference; time them ----===//

#include "api/KernelCheck.h"
#include "api/ReferenceEvaluator.h"
#include "dialect/AttnOps.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace mlir;
namespace rt = ::attn::runtime;

LogicalResult mlir::attn::api::makeRandomTensor(std::vector<int64_t> shape,
                                                uint64_t seed,
                                                rt::Tensor &tensor, double low,
                                                double high) {
  tensor = rt::Tensor(std::move(shape));
  if (tensor.numElements() != rt::checkedNumElements(tensor.shape))
    return failure();
  rt::fillUniform(tensor, seed, low, high);
  for (double &value : tensor.data)
    value = static_cast<float>(value);
  return success();
}

double mlir::attn::api::defaultCheckTolerance(func::FuncOp func) {
  double unit = 0.0; // the largest unit roundoff of a 16-bit value
  auto note = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return;
    if (tensor.getElementType().isBF16())
      unit = std::max(unit, 0x1p-8);
    else if (tensor.getElementType().isF16())
      unit = std::max(unit, 0x1p-11);
  };
  for (Type type : func.getResultTypes())
    note(type);
  // An op's opt-in to bf16 products (attn.allow_bf16_products) rounds
  // computed values once more; docs/precision.md derives what that adds
  // (inputs in [0.5, 1)): a softmax attention's weights 2u,
  // attn.efficient's two softmaxes and its context (4u + 2u^2) / (1 - u),
  // a product's two operands (1 + u)^2 - 1, the linear forms' (the
  // products of the reassociated attn.dot_product: phi(K), phi(Q) and the
  // context) (1 + u)^3 - 1.
  const double bf16 = 0x1p-8;
  double optIn = 0.0;
  func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      note(type);
    if (!op->hasAttr("attn.allow_bf16_products"))
      return;
    double added = std::pow(1 + bf16, 2) - 1;
    if (isa<EfficientAttentionOp>(op))
      added = (4 * bf16 + 2 * bf16 * bf16) / (1 - bf16);
    else if (auto attention = dyn_cast<DotProductAttentionOp>(op))
      added = llvm::any_of(attention.getNorm(),
                           [](Attribute step) {
                             return cast<NormStepAttr>(step).getKind() ==
                                    NormKind::softmax;
                           })
                  ? 2 * bf16
                  : std::pow(1 + bf16, 3) - 1;
    optIn = std::max(optIn, added);
  });
  if (optIn > 0.0)
    unit = std::max(unit, bf16);
  if (unit == 0.0)
    return kDefaultCheckTolerance;
  return 2 * (2 * unit + 0x1p-12) + optIn;
}

std::string mlir::attn::api::makeRandomInput(RankedTensorType type,
                                             int64_t dynamicSize, uint64_t seed,
                                             const std::string &name,
                                             rt::Tensor &input, double low,
                                             double high) {
  std::vector<int64_t> shape;
  for (int64_t dim : type.getShape()) {
    if (ShapedType::isDynamic(dim)) {
      if (dynamicSize < 0)
        return "input '" + name +
               "' has dynamic shape; random inputs need static sizes: pass it "
               "with --input or give --dynamic-size N";
      dim = dynamicSize;
    }
    shape.push_back(dim);
  }
  if (failed(makeRandomTensor(std::move(shape), seed, input, low, high)))
    return "input '" + name + "' (" + input.shapeString() +
           ") is too large to allocate";
  // Values a bf16 or f16 argument holds exactly.
  roundToStoredType(input, type);
  return "";
}

mlir::attn::api::ReferenceComparison
mlir::attn::api::compareWithReference(ArrayRef<rt::Tensor> kernel,
                                      ArrayRef<rt::Tensor> reference) {
  ReferenceComparison result;
  if (kernel.size() != reference.size()) {
    result.mismatch = "the kernel returns " + std::to_string(kernel.size()) +
                      " results, the reference " +
                      std::to_string(reference.size());
    return result;
  }
  double maxReference = 0.0;
  for (auto [kernelResult, referenceResult] : llvm::zip_equal(kernel, reference)) {
    if (kernelResult.shape != referenceResult.shape) {
      result.mismatch = "kernel result has shape " +
                        kernelResult.shapeString() + " but the reference has " +
                        referenceResult.shapeString();
      return result;
    }
    for (auto [a, b] : llvm::zip_equal(kernelResult.data, referenceResult.data)) {
      // Equal values agree, infinities included, and so do two NaNs.
      double error = a == b || (std::isnan(a) && std::isnan(b))
                         ? 0.0
                         : std::fabs(a - b);
      if (std::isnan(error))
        error = INFINITY;
      result.maxAbsError = std::max(result.maxAbsError, error);
      if (std::isfinite(b))
        maxReference = std::max(maxReference, std::fabs(b));
    }
  }
  result.maxRelError = result.maxAbsError == 0.0 ? 0.0
                       : maxReference > 0.0
                           ? result.maxAbsError / maxReference
                           : INFINITY;
  return result;
}

FailureOr<mlir::attn::api::Timing>
mlir::attn::api::timeRuns(unsigned runs,
                          llvm::function_ref<LogicalResult()> run) {
  std::vector<double> times;
  for (unsigned i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (failed(run()))
      return failure();
    auto stop = std::chrono::steady_clock::now();
    times.push_back(
        std::chrono::duration<double, std::milli>(stop - start).count());
  }
  if (times.empty())
    return Timing();
  std::sort(times.begin(), times.end());
  size_t count = times.size();
  double median = count % 2 ? times[count / 2]
                            : 0.5 * (times[count / 2 - 1] + times[count / 2]);
  return Timing{median, times.front(), count};
}
