//===- SpecLoader.h - Open specs, run pipelines, name args ---- -*- C++ -*-===//
//
// What every use of a spec starts with, before evaluation or compilation:
// parsing (errors carry file:line:col through the SourceMgr handler the
// caller installs), verification, the pass pipeline, choosing functions, and
// the source names of function arguments (`%q` -> "q"), which name inputs
// and kernel parameters.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_SPECLOADER_H
#define ATTN_API_SPECLOADER_H

#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::attn::api {

/// A parsed spec and the parser state that remembers source names.
struct LoadedSpec {
  OwningOpRef<ModuleOp> module;
  AsmParserState parserState;
};


/// Registers the passes a textual pipeline may name: canonicalize, cse, the
/// attn passes and attn-default-pipeline.
void registerPipelinePasses();

/// A spec file and what lives as long as it: its own context, the SourceMgr
/// holding its text, the handler that reports the context's diagnostics at
/// file:line:col in it, and the loaded spec.
struct SpecFile {
  std::unique_ptr<MLIRContext> context;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> diagnostics;
  LoadedSpec spec;
};

/// Opens `path` in a new context with the spec dialects loaded (without
/// `multithreading`, the context runs no threads: a process that forks, like
/// the tuner, wants none idle), leaves the generic op form out of
/// diagnostics (file:line:col and the source line say which op), and loads
/// it with loadSpec. An unreadable file sets `error`; parse and verifier
/// errors have been reported as diagnostics.
LogicalResult openSpecFile(StringRef path, SpecFile &file, std::string &error,
                           bool multithreading = true);

/// Opens the spec `text` as openSpecFile opens a file, naming it `name` in
/// diagnostics, which go to `diagnostics` instead of stderr.
LogicalResult openSpecText(StringRef text, StringRef name, SpecFile &file,
                           llvm::raw_ostream &diagnostics);

/// Parses the main buffer of `sourceMgr` and verifies it. A file holding one
/// explicit `module { ... }` is that module.
LogicalResult loadSpec(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                       LoadedSpec &spec);

/// Runs the pipeline a kernel is compiled after on `module`: with
/// `runPipeline`, the textual `passPipeline` or attn-default-pipeline when it
/// is empty; then, always, attn-widen-to-f32 (code generation handles bf16
/// and f16 only as storage). An unparsable pipeline sets `error`; a failing
/// pass has reported diagnostics.
LogicalResult runKernelPipeline(ModuleOp module, bool runPipeline,
                                StringRef passPipeline, std::string &error);

/// The name argument `index` of `func` has in the source (`%q` -> "q"),
/// else "argN".
std::string argumentName(const AsmParserState &state, func::FuncOp func,
                         unsigned index);

/// The source names of every argument of `func`, in order.
std::vector<std::string> argumentNames(const AsmParserState &state,
                                       func::FuncOp func);

/// The functions with a body that `names` name, each once in the order
/// given, or every function with a body when `names` is empty. Errors name
/// the spec by `path`.
FailureOr<SmallVector<func::FuncOp>>
selectFunctions(ModuleOp module, ArrayRef<std::string> names, StringRef path,
                std::string &error);

/// The function with a body named `name`, or, when `name` is empty, the
/// only function with a body. Errors name the spec by `path`.
FailureOr<func::FuncOp> selectFunction(ModuleOp module, StringRef name,
                                       StringRef path, std::string &error);

} // namespace mlir::attn::api

#endif // ATTN_API_SPECLOADER_H
