//===- ScheduleGemm.cpp - attn.matmul
//----------------------------------------===//
//
// The product accumulates in a register tile of tileRows x (tileVectors
// vectors) (Halide's test/performance/matrix_multiplication.cpp pattern):
// for each k, tileRows broadcasts of lhs times tileVectors loads of rhs.
// Blocks of blockRows rows (fused with batch dims) run in parallel.
//
//===----------------------------------------------------------------------===//

#include "codegen/Schedule.h"

using namespace mlir::attn::codegen;

void mlir::attn::codegen::scheduleGemm(OpStages &op,
                                       const ScheduleContext &ctx) {
  const GemmParams &p = ctx.params.gemm;
  Halide::Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  size_t rank = op.result.rank();
  scheduleTiledProduct(out, op.stages.at("acc"), op.domains.at("acc"),
                       op.result.shape[rank - 1], op.result.shape[rank - 2],
                       ctx.vectorWidth(p.vectorWidth, op.result.type),
                       p.tileVectors, p.tileRows, p.blockRows, ctx);
}
