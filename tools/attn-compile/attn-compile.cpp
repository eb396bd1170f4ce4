//===- attn-compile.cpp - Compile attention specs to Halide kernels -------===//
//
//   attn-compile SPEC -o DIR [--func F]... [--target T]
//                [--emit stmt,html,assembly,ptx]
//                [--pass-pipeline P | --no-default-pipeline]
//                [--runtime-name attn_runtime] [--no-runtime]
//   attn-compile --runtime-only -o DIR [--target T]
//
// Runs the default pass pipeline (attn-default-pipeline), then writes for
// each func.func <name>.a and <name>.h with Halide's AOT convention (one
// halide_buffer_t* per argument in spec order, results last, int error
// code) and, once, the Halide runtime as <runtime-name>.a so several kernels
// link into one app. Errors carry file:line:col; the exit code is non-zero.
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"
#include "dialect/AttnDialect.h"
#include "passes/Passes.h"
#include "tools/common/SpecLoader.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;
namespace cg = mlir::attn::codegen;

static cl::OptionCategory compileCategory("attn-compile options");

static cl::opt<std::string> specFile(cl::Positional, cl::desc("<spec.mlir>"),
                                     cl::cat(compileCategory));
static cl::opt<std::string> outputDir("o", cl::Required,
                                      cl::desc("Output directory"),
                                      cl::value_desc("dir"),
                                      cl::cat(compileCategory));
static cl::list<std::string>
    funcNames("func",
              cl::desc("Compile only this function (repeatable; default: "
                       "every function with a body)"),
              cl::value_desc("name"), cl::cat(compileCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("Halide target string: host (default), x86-64-linux-avx2, "
                    "x86-64-linux-avx512, arm-64-linux, ..."),
           cl::init("host"), cl::cat(compileCategory));
static cl::list<std::string>
    emit("emit",
         cl::desc("Also write <name>.stmt (stmt), <name>.stmt.html (html), "
                  "<name>.s (assembly) and/or, for CUDA targets, <name>.ptx "
                  "(ptx: the device code embedded in the object)"),
         cl::value_desc("stmt,html,assembly,ptx"), cl::CommaSeparated,
         cl::cat(compileCategory));
static cl::opt<std::string>
    passPipeline("pass-pipeline",
                 cl::desc("Run this textual pass pipeline instead of "
                          "attn-default-pipeline (e.g. 'canonicalize,cse')"),
                 cl::value_desc("pipeline"), cl::cat(compileCategory));
static cl::opt<bool>
    noDefaultPipeline("no-default-pipeline",
                      cl::desc("Compile the spec as written, without passes"),
                      cl::cat(compileCategory));
static cl::opt<std::string>
    runtimeName("runtime-name",
                cl::desc("Name of the Halide runtime library written once per "
                         "invocation (<name>.a; default attn_runtime)"),
                cl::init("attn_runtime"), cl::cat(compileCategory));

static cl::opt<bool>
    noRuntime("no-runtime",
              cl::desc("Do not write the runtime (an app links one runtime "
                       "for all its kernels)"),
              cl::cat(compileCategory));
static cl::opt<bool>
    runtimeOnly("runtime-only",
                cl::desc("Write only the runtime <runtime-name>.a; no SPEC"),
                cl::cat(compileCategory));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-compile") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerCanonicalizerPass();
  registerCSEPass();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnPipelines();
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile attention specs into Halide kernels\n\n"
      "For each func.func @f of SPEC, writes DIR/f.a and DIR/f.h:\n"
      "  int f(halide_buffer_t *arg0, ..., halide_buffer_t *result0, ...);\n"
      "one buffer per argument in spec order, then one per result; 0 on\n"
      "success, a Halide error code otherwise (e.g. wrong buffer sizes).\n"
      "Buffer dim 0 is the tensor's last (contiguous) dim. Also writes the\n"
      "Halide runtime once, DIR/attn_runtime.a: link it with the kernels.\n\n"
      "  attn-compile spec.mlir -o out/ --target x86-64-linux-avx2 "
      "--emit stmt\n");

  bool emitStmt = false, emitHtml = false, emitAssembly = false,
       emitPtx = false;
  for (const std::string &kind : emit) {
    if (kind == "stmt")
      emitStmt = true;
    else if (kind == "html")
      emitHtml = true;
    else if (kind == "assembly")
      emitAssembly = true;
    else if (kind == "ptx")
      emitPtx = true;
    else
      return fail("--emit " + kind +
                  ": expected stmt, html, assembly or ptx (comma-separated)");
  }
  if (runtimeOnly) {
    if (!specFile.empty() || noRuntime)
      return fail("--runtime-only takes no SPEC and excludes --no-runtime");
    if (!cg::isValidTarget(target))
      return fail(cg::invalidTargetMessage(target));
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create " + outputDir + ": " + ec.message());
    MLIRContext context;
    SmallString<256> runtimePath(outputDir);
    llvm::sys::path::append(runtimePath, runtimeName + ".a");
    llvm::SourceMgr noSources;
    SourceMgrDiagnosticHandler diagnostics(noSources, &context);
    return failed(
        cg::compileRuntime(runtimePath, target, UnknownLoc::get(&context)));
  }
  if (specFile.empty())
    return fail("no SPEC given (see --help)");
  if (noDefaultPipeline && !passPipeline.empty())
    return fail("--no-default-pipeline and --pass-pipeline exclude each "
                "other");

  DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, arith::ArithDialect,
                  func::FuncDialect, scf::SCFDialect, tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(specFile, &error);
  if (!buffer)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  mlir::attn::LoadedSpec spec;
  if (failed(mlir::attn::loadSpec(context, sourceMgr, spec)))
    return 1;
  if (!cg::isValidTarget(target))
    return fail(cg::invalidTargetMessage(target));

  // Source names of the arguments, before passes rewrite the functions.
  std::map<std::string, std::vector<std::string>> argNames;
  for (auto func : spec.module->getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      argNames[func.getSymName().str()].push_back(
          mlir::attn::argumentName(spec.parserState, func, i));

  if (!noDefaultPipeline) {
    PassManager pm(&context);
    if (passPipeline.empty()) {
      mlir::attn::buildDefaultPipeline(pm);
    } else {
      std::string message;
      llvm::raw_string_ostream os(message);
      if (failed(parsePassPipeline(passPipeline, pm, os)))
        return fail("--pass-pipeline: " + message);
    }
    if (failed(pm.run(*spec.module)))
      return 1;
  }

  SmallVector<func::FuncOp> funcs;
  if (funcNames.empty()) {
    for (auto func : spec.module->getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    if (funcs.empty())
      return fail(specFile + " defines no function with a body");
  } else {
    llvm::StringSet<> seen;
    for (const std::string &name : funcNames) {
      auto func = spec.module->lookupSymbol<func::FuncOp>(name);
      if (!func || func.isExternal())
        return fail(specFile + " has no function @" + name);
      if (seen.insert(name).second)
        funcs.push_back(func);
    }
  }

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return fail("cannot create " + outputDir + ": " + ec.message());

  cg::EmitOptions emitOptions{emitStmt, emitHtml, emitAssembly, emitPtx};
  for (func::FuncOp func : funcs) {
    cg::CompileOptions options;
    options.target = target;
    options.argNames = argNames[func.getSymName().str()];
    if (failed(cg::compileToFiles(func, outputDir, options, emitOptions)))
      return 1;
  }
  if (noRuntime)
    return 0;
  SmallString<256> runtimePath(outputDir);
  llvm::sys::path::append(runtimePath, runtimeName + ".a");
  if (failed(cg::compileRuntime(runtimePath, target, spec.module->getLoc())))
    return 1;
  return 0;
}
