//===- SpecLoader.h - Parse a spec file and name its arguments ---*- C++
//-*-===//
//
// What attn-run and attn-compile share before evaluation or compilation:
// parsing (errors carry file:line:col through the SourceMgr handler the
// caller installs), verification, and the source names of function
// arguments (`%q` -> "q"), which name inputs and kernel parameters.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_COMMON_SPECLOADER_H
#define ATTN_TOOLS_COMMON_SPECLOADER_H

#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

namespace mlir::attn {

/// A parsed spec and the parser state that remembers source names.
struct LoadedSpec {
  OwningOpRef<ModuleOp> module;
  AsmParserState parserState;
};

/// Parses the main buffer of `sourceMgr` and verifies it. A file holding one
/// explicit `module { ... }` is that module.
LogicalResult loadSpec(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                       LoadedSpec &spec);

/// The name argument `index` of `func` has in the source (`%q` -> "q"),
/// else "argN".
std::string argumentName(const AsmParserState &state, func::FuncOp func,
                         unsigned index);

} // namespace mlir::attn

#endif // ATTN_TOOLS_COMMON_SPECLOADER_H
