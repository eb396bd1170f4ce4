//===- attn-lsp-server.cpp - Language server for attention specs ----------===//
//
// mlir-lsp-server with the dialects specs are written in: an editor that
// opens a .mlir spec gets the verifier's diagnostics at their locations
// (shape errors included), hover, go-to-definition and document symbols.
// It speaks LSP over stdio; docs/editors.md says how to point VS Code and
// Neovim at it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::attn::insertSpecDialects(registry);
  return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry)) ? 1 : 0;
}
