//===- attn-opt.cpp - Inspect and rewrite attention specs -----------------===//
//
// mlir-opt for the attn dialect: parses and verifies specs, runs attn passes
// (--attn-cost, --attn-reassociate, ...) and the core transforms (canonicalize,
// cse). Registers only what specs use, not every upstream dialect.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn-opt: inspect and rewrite attention specs\n", registry));
}
