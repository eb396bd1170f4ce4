//===- attn-opt.cpp - Inspect and rewrite attention specs -----------------===//
//
// mlir-opt for the attn dialect: parses and verifies specs, runs attn passes
// (--attn-cost, --attn-reassociate, ...) and the core transforms (canonicalize,
// cse). Registers only what specs use, not every upstream dialect.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::attn::insertSpecDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn-opt: inspect and rewrite attention specs\n", registry));
}
