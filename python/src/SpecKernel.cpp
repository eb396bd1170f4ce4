//===- SpecKernel.cpp - A spec function compiled for Python ----------------===//
//
// Opens the spec text in a context of its own, adds the gradient if asked,
// and compiles the function as attn-run does (api/Compile.h); runs it on
// the caller's memory with codegen::Kernel::runInPlace. Every diagnostic
// goes to a string that becomes the error text.
//
//===----------------------------------------------------------------------===//

#include "SpecKernel.h"

#include "api/Compile.h"
#include "api/Gradient.h"
#include "api/SpecLoader.h"

#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;
namespace api = mlir::attn::api;
namespace codegen = mlir::attn::codegen;

namespace attn::python {

struct SpecKernel::State {
  std::string diagnosticText;
  llvm::raw_string_ostream diagnostics{diagnosticText};
  api::SpecFile file; ///< after `diagnostics`, whose handler writes to it
  std::unique_ptr<api::LoadedKernel> kernel;
  /// Calls from several Python threads share the kernel and the text.
  std::mutex calls;

  /// The diagnostics since the last call, then `error`, as one text.
  std::string takeError(const std::string &error) {
    std::string text = llvm::StringRef(diagnosticText).trim().str();
    diagnosticText.clear();
    if (!error.empty())
      text += (text.empty() ? "" : "\n") + error;
    return text.empty() ? "failed without a message" : text;
  }
};

SpecKernel::SpecKernel() : state(std::make_unique<State>()) {}
SpecKernel::~SpecKernel() = default;

static bool elementTypeOf(Type type, ElementType &element) {
  if (type.isF32())
    element = ElementType::F32;
  else if (type.isF64())
    element = ElementType::F64;
  else if (type.isBF16())
    element = ElementType::BF16;
  else if (type.isF16())
    element = ElementType::F16;
  else
    return false;
  return true;
}

/// Describes `types` (named `names`, or result<i>); false for a type that
/// is no ranked float tensor.
static bool describe(TypeRange types, const std::vector<std::string> &names,
                     std::vector<TensorInfo> &infos, std::string &error) {
  for (auto [index, type] : llvm::enumerate(types)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    TensorInfo info;
    info.name = index < names.size() ? names[index]
                                     : "result" + std::to_string(index);
    if (!tensor || !elementTypeOf(tensor.getElementType(), info.type)) {
      llvm::raw_string_ostream os(error);
      os << "'" << info.name << "' has type " << type
         << ": kernels take ranked tensors of f32, f64, bf16 or f16";
      return false;
    }
    for (int64_t size : tensor.getShape())
      info.shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    infos.push_back(std::move(info));
  }
  return true;
}

std::unique_ptr<SpecKernel> SpecKernel::compile(const CompileRequest &request,
                                                std::string &error) {
  static std::once_flag registered;
  std::call_once(registered, api::registerPipelinePasses);
  std::unique_ptr<SpecKernel> self(new SpecKernel());
  State &state = *self->state;
  auto fail = [&](const std::string &message) {
    error = state.takeError(message);
    return nullptr;
  };
  if (failed(api::openSpecText(request.specText, request.specName, state.file,
                               state.diagnostics)))
    return fail("");
  api::LoadedSpec &spec = state.file.spec;
  std::string message;
  FailureOr<func::FuncOp> func =
      api::selectFunction(*spec.module, request.func, request.specName, message);
  if (failed(func))
    return fail(message);
  std::vector<std::string> names = api::argumentNames(spec.parserState, *func);
  for (unsigned i = 0; i < func->getNumArguments(); ++i)
    if (!func->getArgAttr(i, "attn.no_grad"))
      self->gradArgs.push_back(static_cast<int>(i));
  func::FuncOp compiled = *func;
  // save-statistics changes @func too (it returns the statistics), so it
  // runs for a forward kernel as well.
  if (request.grad || request.saveStatistics)
    if (failed(api::addGradients(spec, {func->getSymName().str()},
                                 request.saveStatistics)))
      return fail("");
  if (!request.grad)
    self->saved = func->getNumResults() - api::primalResultCount(*func);
  if (request.grad) {
    FailureOr<func::FuncOp> grad = api::gradientOf(*func, message);
    if (failed(grad))
      return fail(message);
    compiled = *grad;
    names = api::gradientArgumentNames(*func, names);
  }
  self->funcName = compiled.getSymName().str();

  api::KernelOptions options;
  options.compile.target = request.target;
  options.compile.argNames = names;
  options.compile.autoscheduler = request.autoscheduler;
  options.compile.shapeEstimates = request.shapeEstimates;
  options.passPipeline = request.passPipeline;
  options.runPipeline = request.runPipeline;
  options.tuningCache = request.tuningCache;
  options.aot = request.aot;
  if (failed(api::checkKernelOptions(options, request.scheduleParams, message)))
    return fail(message);
  api::Console console;
  console.tool = "attn";
  console.out = &llvm::nulls();
  console.err = &state.diagnostics;
  FailureOr<std::unique_ptr<api::LoadedKernel>> kernel = api::compileKernel(
      *spec.module, self->funcName, options, console, message);
  if (failed(kernel))
    return fail(message);
  state.kernel = std::move(*kernel);
  // The signature after the pipeline is the spec's (16-bit types are kept
  // at the boundary).
  func::FuncOp signature = state.kernel->function();
  if (!describe(signature.getArgumentTypes(), names, self->args, message) ||
      !describe(signature.getResultTypes(), {}, self->outs, message))
    return fail(message);
  return self;
}

bool SpecKernel::resultShapes(
    const std::vector<std::vector<int64_t>> &inputShapes,
    std::vector<std::vector<int64_t>> &shapes, std::string &error) {
  std::lock_guard<std::mutex> lock(state->calls);
  FailureOr<std::vector<std::vector<int64_t>>> result =
      state->kernel->resultShapes(inputShapes);
  if (failed(result)) {
    error = state->takeError("");
    return false;
  }
  shapes = std::move(*result);
  return true;
}

bool SpecKernel::run(const std::vector<View> &inputs,
                     const std::vector<View> &outputs, std::string &error) {
  std::lock_guard<std::mutex> lock(state->calls);
  auto views = [](const std::vector<View> &from) {
    std::vector<codegen::BufferView> to;
    for (const View &view : from)
      to.push_back({view.data, view.shape});
    return to;
  };
  if (failed(state->kernel->runInPlace(views(inputs), views(outputs)))) {
    error = state->takeError("");
    return false;
  }
  return true;
}

} // namespace attn::python
