//===- main.cpp - The attn compiler as a library, outside attn's tree -----===//
//
// Opens SPEC, JIT-compiles function FUNC (the only one when omitted) after
// attn-default-pipeline, runs it on uniform [0, 1) inputs and compares its
// results with attn's reference runtime. Prints the max relative error and
// exits 1 when it exceeds the check tolerance or anything fails.
//
//   standalone_compiler SPEC [FUNC]
//
//===----------------------------------------------------------------------===//

#include "api/Compile.h"
#include "api/KernelCheck.h"
#include "api/ReferenceEvaluator.h"
#include "api/SpecLoader.h"

#include <cstdio>

namespace api = mlir::attn::api;
namespace rt = attn::runtime;

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s SPEC [FUNC]\n", argv[0]);
    return 2;
  }
  api::Console console;
  console.tool = "standalone_compiler";
  std::string error;
  api::SpecFile file;
  if (failed(api::openSpecFile(argv[1], file, error)))
    return console.fail(error);
  mlir::FailureOr<mlir::func::FuncOp> func = api::selectFunction(
      *file.spec.module, argc == 3 ? argv[2] : "", argv[1], error);
  if (failed(func))
    return console.fail(error);

  std::vector<std::string> names =
      api::argumentNames(file.spec.parserState, *func);
  std::vector<rt::Tensor> inputs(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    auto type = llvm::cast<mlir::RankedTensorType>(func->getArgumentTypes()[i]);
    error = api::makeRandomInput(type, /*dynamicSize=*/64, /*seed=*/i,
                                 names[i], inputs[i]);
    if (!error.empty())
      return console.fail(error);
  }

  api::KernelOptions options;
  options.compile.argNames = names;
  mlir::FailureOr<std::unique_ptr<api::LoadedKernel>> kernel =
      api::compileKernel(*file.spec.module, func->getSymName(), options,
                         console, error);
  if (failed(kernel) || failed((*kernel)->run(inputs)))
    return console.fail(error);
  llvm::SmallVector<rt::Tensor> reference;
  if (failed(api::evaluateWithReference(*func, inputs, reference)))
    return 1;
  api::ReferenceComparison comparison =
      api::compareWithReference((*kernel)->results(), reference);
  if (!comparison.mismatch.empty())
    return console.fail(comparison.mismatch);
  double tolerance = api::defaultCheckTolerance(*func);
  std::printf("standalone_compiler: @%s JIT-compiled in this process, max rel "
              "err %.3g against the reference runtime (tolerance %.3g)\n",
              func->getSymName().str().c_str(), comparison.maxRelError,
              tolerance);
  return comparison.maxRelError <= tolerance ? 0 : 1;
}
