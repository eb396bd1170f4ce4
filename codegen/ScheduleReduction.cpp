//===- ScheduleReduction.cpp - Normalize, scan, efficient attention -------===//
//
// Reductions over positions (column statistics, K^T V) are split into
// chunks with rfactor and the chunks reduced in parallel
// (schedulePositionReduction); per-row statistics are computed next to the
// row that uses them. attn.efficient's final product Q context is a GEMM.
//
//===----------------------------------------------------------------------===//

#include "codegen/Schedule.h"

using namespace mlir::attn::codegen;
using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

void mlir::attn::codegen::scheduleNormalize(OpStages &op,
                                            const ScheduleContext &ctx) {
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  int vector =
      ctx.vectorWidth(ctx.params.reduction.vectorWidth, op.result.type);
  std::vector<Var> args = out.args();
  size_t rank = args.size();
  size_t halideDim = rank - 1 - op.info.at("dim");
  out.vectorize(args[0], vector, TailStrategy::GuardWithIf);
  if (rank > 1)
    out.parallel(args.back());
  const Halide::RDom &r = op.domains.at("r");
  for (const char *role : {"max", "sum"}) {
    auto stage = op.stages.find(role);
    if (stage == op.stages.end())
      continue;
    Func stat = stage->second;
    if (halideDim == 0 && rank > 1)
      stat.compute_at(out, args.back()); // a row at a time
    else if (halideDim == 0)
      stat.compute_root();
    else
      schedulePositionReduction(stat, r, ctx);
  }
  auto exp = op.stages.find("exp");
  if (exp != op.stages.end()) {
    std::vector<Var> expArgs = exp->second.args();
    if (halideDim == 0 && rank > 1)
      exp->second.compute_at(out, args.back());
    else
      exp->second.compute_root();
    exp->second.vectorize(expArgs[0], vector, TailStrategy::GuardWithIf);
  }
}

void mlir::attn::codegen::scheduleScan(OpStages &op,
                                       const ScheduleContext &ctx) {
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  int vector =
      ctx.vectorWidth(ctx.params.reduction.vectorWidth, op.result.type);
  std::vector<Var> args = out.args();
  size_t rank = args.size();
  size_t halideDim = rank - 1 - op.info.at("dim");
  out.vectorize(args[0], vector, TailStrategy::GuardWithIf);
  if (rank > 1)
    out.parallel(args.back());
  // The scan is serial along its dim; vectorize across the innermost other
  // dim and run an outer one in parallel.
  if (halideDim != 0)
    out.update()
        .reorder(args[0], op.domains.at("r").x)
        .vectorize(args[0], vector, TailStrategy::GuardWithIf);
  size_t parallelDim = halideDim == rank - 1 ? rank - 2 : rank - 1;
  if (rank > 1 && parallelDim != halideDim && parallelDim > 0)
    out.update().parallel(args[parallelDim]);
}

void mlir::attn::codegen::scheduleEfficient(OpStages &op,
                                            const ScheduleContext &ctx) {
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  int vector =
      ctx.vectorWidth(ctx.params.reduction.vectorWidth, op.result.type);
  auto rootRows = [&](Func f) {
    std::vector<Var> args = f.args();
    f.compute_root().vectorize(args[0], vector, TailStrategy::GuardWithIf);
    if (args.size() > 1)
      f.parallel(args[1]);
  };
  if (op.info.at("softmax")) {
    // Per-query softmax over dk: small, at root.
    rootRows(op.stages.at("qexp"));
    for (const char *role : {"qmax", "qsum"}) {
      Func stat = op.stages.at(role);
      stat.compute_root().vectorize(stat.args()[0], vector,
                                    TailStrategy::GuardWithIf);
      stat.update().vectorize(stat.args()[0], vector,
                              TailStrategy::GuardWithIf);
    }
    // Per-feature softmax over the m positions.
    rootRows(op.stages.at("kexp"));
    schedulePositionReduction(op.stages.at("kmax"), op.domains.at("kmax"), ctx);
    schedulePositionReduction(op.stages.at("ksum"), op.domains.at("kmax"), ctx);
    rootRows(op.stages.at("context_norm"));
  }
  schedulePositionReduction(op.stages.at("context"), op.domains.at("context"),
                            ctx);
  const GemmParams &p = ctx.params.gemm;
  size_t rank = op.result.rank();
  scheduleTiledProduct(out, op.stages.at("acc"), op.domains.at("acc"),
                       op.result.shape[rank - 1], op.result.shape[rank - 2],
                       ctx.vectorWidth(p.vectorWidth, op.result.type),
                       p.tileVectors, p.tileRows, p.blockRows, ctx);
}
