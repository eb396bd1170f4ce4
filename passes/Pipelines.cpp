//===- Pipelines.cpp - Named pass pipelines, the dialects of specs --------===//
//
// attn-default-pipeline: what attn-compile (and attn-run before compiling a
// kernel) runs before code generation unless told otherwise:
// attn-widen-to-f32 (bf16/f16 ops compute in f32), canonicalize,
// attn-reassociate (exact rewrites where they are cheaper, a run-time
// choice for dynamic sizes), canonicalize (folds the size arithmetic), cse,
// then canonicalize and cse once more (patterns that compare values, such
// as a product's transposed twin, match once duplicates are merged).
// The lowering passes (attn-lower-deformable, attn-lower-double-norm) are
// not in it: the fused ops are the fast codegen path (docs/lowering.md).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::attn::insertSpecDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect, arith::ArithDialect, func::FuncDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
}

void mlir::attn::buildDefaultPipeline(OpPassManager &pm) {
  pm.addPass(createAttnWidenToF32Pass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createAttnReassociatePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Patterns that compare values (a product and its transposed twin) see
  // the duplicates merged only now.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<>(
      "attn-default-pipeline",
      "The passes attn-compile runs before code generation",
      [](OpPassManager &pm) { buildDefaultPipeline(pm); });
}
