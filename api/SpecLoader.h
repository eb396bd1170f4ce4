//===- SpecLoader.h - Parse a spec file and name its arguments ---*- C++
//-*-===//
//
// What attn-run and attn-compile share before evaluation or compilation:
// parsing (errors carry file:line:col through the SourceMgr handler the
// caller installs), verification, and the source names of function
// arguments (`%q` -> "q"), which name inputs and kernel parameters.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_SPECLOADER_H
#define ATTN_API_SPECLOADER_H

#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>

namespace mlir::attn::api {

/// A parsed spec and the parser state that remembers source names.
struct LoadedSpec {
  OwningOpRef<ModuleOp> module;
  AsmParserState parserState;
};

/// The dialects specs are written in: attn, arith, func, scf and tensor.
void insertSpecDialects(DialectRegistry &registry);

/// A spec file, the SourceMgr holding its text and the handler that reports
/// the context's diagnostics at file:line:col in it (for as long as this
/// lives).
struct SpecFile {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> diagnostics;
  LoadedSpec spec;
};

/// Loads every dialect of `context`'s registry, leaves the generic op form
/// out of diagnostics (file:line:col and the source line say which op), then
/// opens `path` and loads it with loadSpec. An unreadable file sets `error`;
/// parse and verifier errors have been reported as diagnostics.
LogicalResult openSpecFile(MLIRContext &context, StringRef path, SpecFile &file,
                           std::string &error);

/// Parses the main buffer of `sourceMgr` and verifies it. A file holding one
/// explicit `module { ... }` is that module.
LogicalResult loadSpec(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                       LoadedSpec &spec);

/// Runs the pipeline a kernel is compiled after on `module`: the textual
/// `passPipeline`, or attn-default-pipeline when it is empty. An unparsable
/// pipeline sets `error`; a failing pass has reported diagnostics.
LogicalResult runKernelPipeline(ModuleOp module, StringRef passPipeline,
                                std::string &error);

/// The name argument `index` of `func` has in the source (`%q` -> "q"),
/// else "argN".
std::string argumentName(const AsmParserState &state, func::FuncOp func,
                         unsigned index);

} // namespace mlir::attn::api

#endif // ATTN_API_SPECLOADER_H
