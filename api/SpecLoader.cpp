//===- SpecLoader.cpp - Parse a spec file and name its arguments ----------===//

#include "api/SpecLoader.h"

#include "dialect/AttnDialect.h"
#include "passes/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

void mlir::attn::api::registerPipelinePasses() {
  registerCanonicalizerPass();
  registerCSEPass();
  registerAttnPasses();
  registerAttnPipelines();
}

/// A new context for `file` with the spec dialects loaded, which leaves the
/// generic op form out of diagnostics (file:line:col and the source line say
/// which op).
static MLIRContext &newSpecContext(mlir::attn::api::SpecFile &file,
                                   bool multithreading) {
  DialectRegistry registry;
  mlir::attn::insertSpecDialects(registry);
  file.context = std::make_unique<MLIRContext>(registry);
  MLIRContext &context = *file.context;
  if (!multithreading)
    context.disableMultithreading();
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  return context;
}

LogicalResult mlir::attn::api::openSpecFile(StringRef path, SpecFile &file,
                                            std::string &error,
                                            bool multithreading) {
  MLIRContext &context = newSpecContext(file, multithreading);
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(path, &error);
  if (!buffer)
    return failure();
  file.sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  file.diagnostics =
      std::make_unique<SourceMgrDiagnosticHandler>(file.sourceMgr, &context);
  return loadSpec(context, file.sourceMgr, file.spec);
}

LogicalResult mlir::attn::api::openSpecText(StringRef text, StringRef name,
                                            SpecFile &file,
                                            llvm::raw_ostream &diagnostics) {
  MLIRContext &context = newSpecContext(file, /*multithreading=*/true);
  file.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  file.diagnostics = std::make_unique<SourceMgrDiagnosticHandler>(
      file.sourceMgr, &context, diagnostics);
  return loadSpec(context, file.sourceMgr, file.spec);
}

LogicalResult mlir::attn::api::loadSpec(MLIRContext &context,
                                        llvm::SourceMgr &sourceMgr,
                                        LoadedSpec &spec) {
  spec.module = ModuleOp::create(UnknownLoc::get(&context));
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, spec.module->getBody(), config,
                                &spec.parserState)))
    return failure();
  Block *body = spec.module->getBody();
  if (llvm::hasSingleElement(*body))
    if (auto inner = dyn_cast<ModuleOp>(body->front())) {
      inner->remove();
      spec.module = inner;
    }
  return verify(*spec.module);
}

std::string mlir::attn::api::argumentName(const AsmParserState &state,
                                          func::FuncOp func, unsigned index) {
  if (const AsmParserState::BlockDefinition *def =
          state.getBlockDef(&func.getBody().front())) {
    if (index < def->arguments.size()) {
      llvm::SMRange range = def->arguments[index].loc;
      if (range.isValid()) {
        StringRef text(range.Start.getPointer(),
                       range.End.getPointer() - range.Start.getPointer());
        if (text.consume_front("%") && !text.empty())
          return text.str();
      }
    }
  }
  return "arg" + std::to_string(index);
}

std::vector<std::string>
mlir::attn::api::argumentNames(const AsmParserState &state, func::FuncOp func) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    names.push_back(argumentName(state, func, i));
  return names;
}

/// The functions of `module` that have a body, in order.
static SmallVector<func::FuncOp> functionsWithBody(ModuleOp module) {
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      funcs.push_back(func);
  return funcs;
}

/// The function with a body named `name`.
static FailureOr<func::FuncOp> lookupFunction(ModuleOp module, StringRef name,
                                              StringRef path,
                                              std::string &error) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func || func.isExternal()) {
    error = (path + " has no function @" + name).str();
    return failure();
  }
  return func;
}

FailureOr<SmallVector<func::FuncOp>>
mlir::attn::api::selectFunctions(ModuleOp module, ArrayRef<std::string> names,
                                 StringRef path, std::string &error) {
  if (names.empty()) {
    SmallVector<func::FuncOp> funcs = functionsWithBody(module);
    if (funcs.empty()) {
      error = (path + " defines no function with a body").str();
      return failure();
    }
    return funcs;
  }
  SmallVector<func::FuncOp> funcs;
  llvm::StringSet<> seen;
  for (const std::string &name : names) {
    FailureOr<func::FuncOp> func = lookupFunction(module, name, path, error);
    if (failed(func))
      return failure();
    if (seen.insert(name).second)
      funcs.push_back(*func);
  }
  return funcs;
}

FailureOr<func::FuncOp> mlir::attn::api::selectFunction(ModuleOp module,
                                                        StringRef name,
                                                        StringRef path,
                                                        std::string &error) {
  if (!name.empty())
    return lookupFunction(module, name, path, error);
  SmallVector<func::FuncOp> funcs = functionsWithBody(module);
  if (funcs.size() != 1) {
    std::string names;
    for (func::FuncOp f : funcs)
      names += " @" + f.getSymName().str();
    error = (path + " defines " + llvm::Twine(funcs.size()) +
             " functions; choose one with --func:" + names)
                .str();
    return failure();
  }
  return funcs.front();
}

LogicalResult mlir::attn::api::runKernelPipeline(ModuleOp module,
                                                 bool runPipeline,
                                                 StringRef passPipeline,
                                                 std::string &error) {
  PassManager pm(module.getContext());
  if (runPipeline && passPipeline.empty()) {
    buildDefaultPipeline(pm);
  } else if (runPipeline) {
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline(passPipeline, pm, os)))
      return failure();
  }
  // Whatever ran before, code generation sees bf16 and f16 only in loads and
  // stores (a no-op after the default pipeline).
  pm.addPass(createAttnWidenToF32Pass());
  return pm.run(module);
}
