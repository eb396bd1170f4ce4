//===- ScheduleReduction.cpp - Normalize, scan, efficient attention -------===//
//
// Reductions over positions (column statistics, K^T V) are split into
// chunks with rfactor and the chunks reduced in parallel
// (schedulePositionReduction); per-row statistics are computed next to the
// row that uses them. attn.efficient's K^T V runs in parallel chunks with
// register tiles and the chunk's softmax weights computed in the task; its
// final product Q context is a GEMM whose row blocks compute their own
// per-query softmax.
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

/// The chunk partials `partial`(e, d, ...) of a context, each a sum over
/// `positions` of one chunk, in parallel tasks over `chunk`, in register
/// tiles of rows features x cols values. The partial is computed per tile
/// of a wrapper (returned), so each tile is a small constant-size buffer
/// that LLVM keeps in registers over the whole chunk (a root buffer would
/// be loaded and stored at every position).
static Func scheduleContextTiles(Func partial, Halide::RVar positions,
                                 Var chunk, const SplitChoice &rows,
                                 const SplitChoice &cols, int vector) {
  Func tiles = partial.in();
  std::vector<Var> args = partial.args(); // e, d, ...
  Var e = args[0], d = args[1];
  int width = dividingWidth(cols.factor, vector);
  Var dOuter("d_outer"), dInner("d_inner");
  std::vector<Halide::VarOrRVar> order = {e, dInner, dOuter};
  for (size_t i = 2; i < args.size(); ++i)
    order.push_back(args[i]);
  tiles.compute_root()
      .split(d, dOuter, dInner, rows.factor, TailStrategy::ShiftInwards)
      .reorder(order)
      .vectorize(e, width)
      .parallel(chunk);
  Var eOuter("e_outer"), eLanes("e_lanes");
  partial.compute_at(tiles, dOuter).vectorize(e, width).unroll(d);
  partial.update()
      .split(e, eOuter, eLanes, width)
      .reorder(eLanes, eOuter, d, positions)
      .vectorize(eLanes)
      .unroll(eOuter)
      .unroll(d);
  return tiles;
}

/// Scaling variant: context(e, d) = sum over positions j of K(j, d)
/// V(j, e), in chunks of `chunk` positions reduced in parallel (rfactor)
/// into register-tiled partials (scheduleContextTiles), then merged.
static void scheduleContext(OpStages &op, const ScheduleContext &ctx,
                            int vector, const SplitChoice &rows,
                            const SplitChoice &cols) {
  Func context = op.stages.at("context");
  Halide::RDom rj = op.domains.at("context");
  auto positions = Halide::Internal::as_const_int(rj.x.extent());
  int chunk = std::max(1, ctx.params.reduction.chunk);
  if (!cols.isStatic || !rows.isStatic || !positions ||
      *positions < 2 * chunk) {
    schedulePositionReduction(context, rj, ctx);
    return;
  }
  context.compute_root();
  Var e = context.args()[0];
  Halide::RVar chunkOuter("chunk_outer"), chunkInner("chunk_inner");
  Var u(context.name() + "_chunk");
  Func partial =
      context.update()
          .split(rj.x, chunkOuter, chunkInner, chunk, TailStrategy::GuardWithIf)
          .rfactor(chunkOuter, u);
  scheduleContextTiles(partial, chunkInner, u, rows, cols, vector);
  context.update().vectorize(e, vector, TailStrategy::GuardWithIf);
}

/// Softmax variant, chunked in the algorithm (online column softmax): one
/// parallel task per chunk c of positions reads its chunk of K and V from
/// memory once. In the task: the chunk's feature maxima (a copy of kcmax
/// for the weights), its weights (kexp, in L1/L2, never in memory), its
/// register-tiled context (cctx), then its denominators (csum) and the
/// maxima again for the merge (kcmax itself, from the chunk of K still in
/// cache). Halide's compute_with cannot fuse a producer with its consumer,
/// hence the copy. compute_with matches loops by name: all use `c`.
static void scheduleChunkedContext(OpStages &op, int vector,
                                   const SplitChoice &rows,
                                   const SplitChoice &cols) {
  Func kcmax = op.stages.at("kcmax"), kexp = op.stages.at("kexp");
  Func cctx = op.stages.at("cctx"), csum = op.stages.at("csum");
  Halide::RVar positions = op.domains.at("chunk").x;
  std::vector<Var> maxArgs = kcmax.args(); // d, c, b...
  Var d = maxArgs[0], c = maxArgs[1];
  Func tiles = cctx; // the stage that owns the chunk loop
  if (rows.isStatic && cols.isStatic) {
    tiles = scheduleContextTiles(cctx, positions, c, rows, cols, vector);
  } else {
    Var e = cctx.args()[0];
    cctx.compute_root().vectorize(e, vector, TailStrategy::GuardWithIf);
    cctx.update()
        .reorder(e, cctx.args()[1], positions, c)
        .vectorize(e, vector, TailStrategy::GuardWithIf)
        .parallel(c);
  }
  Halide::Stage tilesStage =
      tiles.has_update_definition() ? tiles.update() : Halide::Stage(tiles);
  kexp.compute_at(tiles, c).vectorize(kexp.args()[0], vector,
                                      TailStrategy::GuardWithIf);
  Func weightMax = kcmax.clone_in(kexp);
  weightMax.compute_at(tiles, c).vectorize(d, vector,
                                           TailStrategy::GuardWithIf);
  weightMax.update()
      .reorder(d, positions)
      .vectorize(d, vector, TailStrategy::GuardWithIf);
  for (Func stat : {csum, kcmax}) {
    stat.compute_root().vectorize(d, vector, TailStrategy::GuardWithIf);
    stat.update()
        .reorder(d, positions, c)
        .vectorize(d, vector, TailStrategy::GuardWithIf)
        .parallel(c)
        .compute_with(tilesStage, c);
  }
  // The merge: a few dk-long vectors and one dk x dv context per chunk.
  for (const char *role : {"kmax", "rescale", "ksum", "context"}) {
    Func f = op.stages.at(role);
    f.compute_root().vectorize(f.args()[0], vector, TailStrategy::GuardWithIf);
    if (f.has_update_definition())
      f.update().vectorize(f.args()[0], vector, TailStrategy::GuardWithIf);
  }
}

void mlir::attn::codegen::scheduleEfficient(OpStages &op,
                                            const ScheduleContext &ctx) {
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  int vector =
      ctx.vectorWidth(ctx.params.reduction.vectorWidth, op.result.type);
  const GemmParams &p = ctx.params.gemm;
  size_t rank = op.result.rank();
  Var task = scheduleTiledProduct(
      out, op.stages.at("acc"), op.domains.at("acc"), op.result.shape[rank - 1],
      op.result.shape[rank - 2], ctx.vectorWidth(p.vectorWidth, op.result.type),
      p.tileVectors, p.tileRows, p.blockRows, ctx);
  SplitChoice cols = chooseSplit(op.result.shape[rank - 1], vector);
  SplitChoice rows = chooseSplit(op.domains.at("acc").x.extent(),
                                 std::max(1, ctx.params.efficient.contextRows));
  if (!op.info.at("softmax")) {
    scheduleContext(op, ctx, vector, rows, cols);
    return;
  }
  // Per-query softmax over dk, per output block: the block's weights stay
  // in L1 and are never written to memory.
  Func qexp = op.stages.at("qexp");
  qexp.compute_at(out, task).vectorize(qexp.args()[0], vector,
                                       TailStrategy::GuardWithIf);
  scheduleRowStatistic(op.stages.at("qmax"), op.domains.at("qmax"), out, task,
                       vector, /*isMax=*/true);
  scheduleRowStatistic(op.stages.at("qsum"), op.domains.at("qmax"), out, task,
                       vector, /*isMax=*/false);
  Func norm = op.stages.at("context_norm");
  norm.compute_root().vectorize(norm.args()[0], vector,
                                TailStrategy::GuardWithIf);
  scheduleChunkedContext(op, vector, rows, cols);
}
