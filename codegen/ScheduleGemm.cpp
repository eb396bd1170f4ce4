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
  Halide::Expr rows = op.result.shape[rank - 2];
  Halide::Expr cols = op.result.shape[rank - 1];
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  // A product with at most one block of rows but a long reduction (K^T V
  // of the reassociated forms: dk x dv over m positions) would run on one
  // thread; its positions are split into chunks reduced in parallel.
  auto staticRows = Halide::Internal::as_const_int(rows);
  if (staticRows && *staticRows <= p.blockRows) {
    if (scheduleChunkedProduct(op.stages.at("acc"), op.domains.at("acc"), cols,
                               rows, vector, ctx)
            .tiles.defined()) {
      std::vector<Halide::Var> args = out.args();
      out.vectorize(args[0], vector, Halide::TailStrategy::GuardWithIf);
      return;
    }
  }
  scheduleTiledProduct(out, op.stages.at("acc"), op.domains.at("acc"),
                       op.result.shape[rank - 1], op.result.shape[rank - 2],
                       ctx.vectorWidth(p.vectorWidth, op.result.type),
                       p.tileVectors, p.tileRows, p.blockRows, ctx);
}
