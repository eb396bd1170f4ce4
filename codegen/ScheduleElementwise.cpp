//===- ScheduleElementwise.cpp - Elementwise and gather schedules ---------===//
//
// Elementwise ops (scale, feature_map, add, causal_mask, normalize count,
// reshapes, constants) are inlined into their consumers; only an output is
// a loop nest of its own: vectorized over the innermost dim, parallel over
// the outermost. Gathers (bilinear_gather, deformable) vectorize across the
// D channels of a head and run queries in parallel; the deformable sum over
// points is computed per query. The scatter (scatter_pixels) adds its
// samples in order, vectorized across D, heads and batches in parallel.
// deformable_grad's sample pass runs like the forward (query blocks, the
// corners' dots with the cotangent in vectors, one lane reduction per
// level), its value pass like the scatter. A
// run-time choice (scf.if) is a loop nest of its own, specialized on its
// condition so each version computes only the branch it reads.
//
//===----------------------------------------------------------------------===//

#include "codegen/Schedule.h"

using namespace mlir::attn::codegen;
using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

/// Vectorizes dim 0 of an output or root Func and parallelizes its
/// outermost dim.
static void vectorizeAndParallelize(Func f, const TensorFunc &tensor,
                                    int vector) {
  std::vector<Var> args = f.args();
  if (args.empty())
    return; // a scalar: one element, no loop
  SplitChoice split = chooseSplit(tensor.shape.back(), vector);
  f.vectorize(args[0], split.factor, split.tail);
  if (args.size() < 2)
    return;
  // Parallel tasks of about kElementwiseTaskElements elements: one task per
  // row of a 65536 x 64 output spent more time in the thread pool than in
  // the row.
  // Elements per index of the outer dim (MLIR dim 0): the product of the
  // other dims (a dynamic one counts 1).
  int64_t perIndex = 1;
  for (size_t d = 1; d < tensor.shape.size(); ++d)
    if (auto extent = Halide::Internal::as_const_int(tensor.shape[d]))
      perIndex *= std::max<int64_t>(1, *extent);
  int block = rowsPerTask(perIndex);
  if (block == 1) {
    f.parallel(args.back());
    return;
  }
  Var outer(f.name() + "_task"), inner(f.name() + "_rows");
  f.split(args.back(), outer, inner, block, Halide::TailStrategy::GuardWithIf)
      .parallel(outer);
}

void mlir::attn::codegen::scheduleElementwise(OpStages &op,
                                              ScheduleContext &ctx) {
  Func f = op.result.func;
  if (!ctx.isOutput(f)) {
    ctx.inlined.insert(f.name());
    return;
  }
  auto epilogue = ctx.epilogues.find(f.name());
  if (epilogue != ctx.epilogues.end()) {
    // The product it reads is computed in its register tiles and never
    // stored (linear attention's numerator, divided by the row sums).
    Halide::LoopLevel task = scheduleProductTiles(*epilogue->second, f, ctx);
    // attn.div's inverses of the task's rows, a vector of rows at a time
    // (one vdivps per 16 rows instead of a vdivss per row in the tiles).
    auto inverse = op.stages.find("inverse");
    if (inverse != op.stages.end()) {
      std::vector<Var> args = inverse->second.args(); // 1, row, batch...
      if (args.size() >= 2)
        inverse->second.compute_at(task).vectorize(
            args[1],
            ctx.vectorWidth(ctx.params.elementwise.vectorWidth,
                            op.result.type),
            Halide::TailStrategy::GuardWithIf);
    }
    return;
  }
  vectorizeAndParallelize(
      f, op.result,
      ctx.vectorWidth(ctx.params.elementwise.vectorWidth, op.result.type));
}

/// The corner cells (k, p, l, ...) of one (query, head) at `at`, a Tuple
/// per bilinear corner k of each sample: per level the P points in a vector
/// and the 4 corners unrolled, so each point's cell (floors, inside test) is
/// computed once at full width and shared by the corners and the Tuple's
/// values; with the levels unrolled too (up to kUnrolledLevels), each
/// level's sizes are constants instead of select chains. Vectorizing the
/// fused corners and points instead computed the cell in 2-lane pieces on
/// AVX2, once per corner and Tuple value. A dynamic P (0) vectorizes the
/// corners.
static void scheduleCornerCells(Func cells, const Halide::LoopLevel &at,
                                int64_t points, int64_t levels, int vector) {
  std::vector<Var> args = cells.args(); // k, p, l, h, q, n
  Var k = args[0], point = args[1], level = args[2];
  cells.compute_at(at);
  if (points <= 0) {
    cells.vectorize(k);
    return;
  }
  int lanes = static_cast<int>(points);
  cells.reorder_storage(point, k, level)
      .reorder(point, k, level)
      .vectorize(point, std::min(lanes, vector),
                 lanes <= vector || lanes % vector == 0
                     ? TailStrategy::RoundUp
                     : TailStrategy::GuardWithIf)
      .unroll(k);
  if (levels > 0 && levels <= kUnrolledLevels)
    cells.unroll(level);
}

/// Deformable attention, out (n, q, c = h*D + d): per (query, head), the
/// corner rows and weights of its L x P samples are computed once
/// (`_corners`, the points of a level in a vector), then `_heads` sums
/// weight x value row over them, vectorized across the D channels. With a
/// static D, `_heads` is a D-wide accumulator per (query, head) that stays
/// in registers, and blocks of queriesPerTask queries run in parallel.
static void scheduleDeformable(OpStages &op, const ScheduleContext &ctx,
                               int vector) {
  const DeformableParams &p = ctx.params.deformable;
  Func out = op.result.func, heads = op.stages.at("heads");
  Func corners = op.stages.at("corners");
  Halide::RDom r = op.domains.at("heads");
  std::vector<Var> args = out.args(); // c, q, n
  Var c = args[0], q = args[1];
  std::vector<Var> headArgs = heads.args(); // d, h, q, n
  Var d = headArgs[0];
  auto points = Halide::Internal::as_const_int(r.y.extent());
  auto levels = Halide::Internal::as_const_int(r.z.extent());
  int64_t depth = op.info.at("depth");
  SplitChoice block = chooseSplit(op.result.shape[1], p.queriesPerTask);
  Var qblock("qblock"), qi("qi");
  out.split(q, qblock, qi, block.factor, block.tail);
  parallelOuter(out, qblock, 2);
  if (depth <= 0) {
    // Dynamic D: per query, all heads; guarded vectors over the channels.
    out.vectorize(c, vector, TailStrategy::GuardWithIf);
    heads.compute_at(out, qi).vectorize(d, vector, TailStrategy::GuardWithIf);
    heads.update()
        .reorder(d, r.x, r.y, r.z)
        .vectorize(d, vector, TailStrategy::GuardWithIf);
    scheduleCornerCells(corners, Halide::LoopLevel(out, qi),
                        points ? *points : 0, levels ? *levels : 0, vector);
    return;
  }
  // One head's D channels at a time: a whole vector of D up to a few
  // native vectors (LLVM splits it into registers), else vector chunks.
  int channels = static_cast<int>(depth);
  int width = channels <= p.maxChannelVectors * vector ? channels : vector;
  TailStrategy tail = channels % width == 0 ? TailStrategy::RoundUp
                                            : TailStrategy::ShiftInwards;
  // An update may not shift its tail inwards (Halide rejects it: the
  // overlap would add twice), nor round it up (it would read channels of
  // `value` past D): a D past the one-vector limit that is not a multiple
  // of the vector guards its last vector (the shape sweep found D = 65).
  TailStrategy updateTail = channels % width == 0
                                ? TailStrategy::RoundUp
                                : TailStrategy::GuardWithIf;
  Var head("head"), channel("channel"), co("co"), ci("ci");
  out.split(c, head, channel, channels, TailStrategy::RoundUp)
      .split(channel, co, ci, width, tail)
      .reorder(ci, co, head, qi)
      .vectorize(ci);
  heads.compute_at(out, head).vectorize(d, width, tail);
  heads.update()
      .reorder(d, r.x, r.y, r.z)
      .vectorize(d, width, updateTail)
      .unroll(r.x);
  scheduleCornerCells(corners, Halide::LoopLevel(out, head),
                      points ? *points : 0, levels ? *levels : 0, vector);
}

/// scatter_pixels, out (d, h, row, n): the zeros as any output, then the
/// update over the samples (RDom p, l, q) with the D channels in vectors
/// innermost and the (head, batch) pairs in parallel. The samples stay
/// serial inside a task: two of them may add into the same row.
static void scheduleScatter(OpStages &op, int vector) {
  Func out = op.result.func;
  Halide::RDom r = op.domains.at("scatter");
  std::vector<Var> args = out.args(); // d, h, row, n
  Var d = args[0], h = args[1], n = args[3];
  Var task(out.name() + "_hn");
  out.update()
      .reorder(d, r.x, r.y, r.z, h, n)
      .vectorize(d, vector, TailStrategy::GuardWithIf)
      .fuse(h, n, task)
      .parallel(task);
}

/// The D channels of a head in one vector up to maxChannelVectors native
/// vectors, else in native vectors (0: D is dynamic).
static int channelWidth(int64_t depth, const DeformableParams &p,
                        int vector) {
  if (depth <= 0)
    return vector;
  int channels = static_cast<int>(depth);
  return channels <= p.maxChannelVectors * vector ? channels : vector;
}

/// deformable_grad's sample pass, grads (x, p, l, h, q, n): blocks of
/// queriesPerTask queries in parallel (with the batch); per (query, head)
/// the corner cells (scheduleCornerCells) and the corners' dots with the
/// cotangent: each corner's D channels summed into one native vector, then
/// one vector reduction per level of its 4 P corners' vectors (D a multiple
/// of the vector and P static; else serial over D), then the 3 gradients
/// of each sample, vectorized across the L x P samples.
void mlir::attn::codegen::scheduleDeformableGradSamples(
    OpStages &op, const ScheduleContext &ctx) {
  const DeformableParams &p = ctx.params.deformable;
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  Func dots = op.stages.at("dots");
  Halide::RDom rd = op.domains.at("dots");
  std::vector<Var> args = out.args(); // x, p, l, h, q, n
  Var x = args[0], point = args[1], level = args[2], head = args[3],
      q = args[4];
  SplitChoice block = chooseSplit(op.result.shape[1], p.queriesPerTask);
  Var qblock(out.name() + "_qblock"), qi(out.name() + "_qi");
  out.split(q, qblock, qi, block.factor, block.tail);
  int64_t points = op.info.at("points");
  auto levels = Halide::Internal::as_const_int(op.result.shape[3]);
  if (points > 0 && levels && !ctx.isOutput(out)) {
    // The 3 gradients of every sample of a (query, head), vectorized
    // across its L x P samples (stored innermost, so the stores are dense;
    // the slices read them back).
    int lanes = static_cast<int>(points * *levels);
    Var pl(out.name() + "_pl");
    out.reorder_storage(point, level, x, head, q, args[5])
        .reorder(point, level, x, head, qi, qblock)
        .fuse(point, level, pl)
        .vectorize(pl, std::min(lanes, vector),
                   lanes % vector == 0 || lanes < vector
                       ? TailStrategy::RoundUp
                       : TailStrategy::GuardWithIf)
        .unroll(x);
  } else {
    out.unroll(x);
  }
  parallelOuter(out, qblock, 5);
  Halide::LoopLevel perHead(out, head);
  scheduleCornerCells(op.stages.at("cells"), perHead, op.info.at("points"),
                      op.info.at("levels"), vector);
  dots.compute_at(perHead);
  int64_t depth = op.info.at("depth");
  std::vector<Var> dotArgs = dots.args(); // k, p, l, h, q, n
  dots.update().reorder(rd.x, dotArgs[0], dotArgs[1], dotArgs[2]);
  if (depth > 0 && depth % vector == 0 && points > 0) {
    // Each corner's D channels summed into one vector (u), then the
    // vectors of all 4 P corners of a level summed across their lanes at
    // once (a vector reduction of 4 P x vector lanes into 4 P, which
    // Halide lowers to shuffles and vector adds). A horizontal add per
    // corner was an ordered chain of scalar adds (LLVM's float reduction
    // without reassociation): 420 instead of 150 ms for this pass at the
    // deformable_encoder bench shape, under load.
    Halide::RVar ro(dots.name() + "_ro"), ri(dots.name() + "_ri");
    Var u(dots.name() + "_u");
    Func lanes = dots.update().split(rd.x, ro, ri, vector).rfactor(ri, u);
    // u is the intermediate's last dim; stored innermost, the lanes of
    // one level's corners are contiguous.
    lanes.reorder_storage(u, dotArgs[0], dotArgs[1], dotArgs[2], dotArgs[3],
                          dotArgs[4], dotArgs[5])
        .compute_at(perHead)
        .vectorize(u);
    lanes.update()
        .reorder(u, ro, dotArgs[0], dotArgs[1], dotArgs[2])
        .vectorize(u)
        .unroll(ro);
    dots.update()
        .reorder(ri, dotArgs[0], dotArgs[1], dotArgs[2])
        .atomic()
        .vectorize(ri)
        .vectorize(dotArgs[0])
        .vectorize(dotArgs[1]);
    op.form += ": query blocks of " + std::to_string(block.factor) +
               ", dots over D in vectors of " + std::to_string(vector);
  } else {
    op.form += ": query blocks of " + std::to_string(block.factor) +
               ", dots over D serial";
  }
}

/// A slice of deformable_grad's sample pass (dlocations (x, p, l, h, q,
/// n), dweights (p, l, h, q, n)): inlined, or as an output blocks of
/// queriesPerTask queries in parallel (with the batch), vectorized across
/// the points (the outer dim N is 1 at batch 1, too few tasks for
/// vectorizeAndParallelize).
void mlir::attn::codegen::scheduleDeformableGradSlice(
    OpStages &op, ScheduleContext &ctx) {
  Func f = op.result.func;
  if (!ctx.isOutput(f)) {
    ctx.inlined.insert(f.name());
    return;
  }
  const DeformableParams &p = ctx.params.deformable;
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  std::vector<Var> args = f.args();
  size_t rank = args.size();
  Var point = args[rank - 5], q = args[rank - 2];
  SplitChoice block = chooseSplit(op.result.shape[1], p.queriesPerTask);
  Var qblock(f.name() + "_qblock"), qi(f.name() + "_qi");
  f.split(q, qblock, qi, block.factor, block.tail);
  if (rank == 6)
    f.reorder(point, args[0]).unroll(args[0]); // x (2) inside the points
  auto points = Halide::Internal::as_const_int(op.result.shape[4]);
  if (points)
    f.vectorize(point, dividingWidth(static_cast<int>(*points), vector));
  else
    f.vectorize(point, vector, TailStrategy::GuardWithIf);
  parallelOuter(f, qblock, rank - 1);
}

/// deformable_grad's value pass, dvalue (d, h, row, n): the zeros as any
/// output, then the update over the corners (RDom k, p, l, q) with the D
/// channels in vectors innermost, the 4 corners unrolled, the corner cells
/// of each (query, head) computed once (scheduleCornerCells), and the (head,
/// batch) pairs in parallel: they own disjoint value rows. The corners stay
/// serial inside a task: two of them may add into the same row.
void mlir::attn::codegen::scheduleDeformableGradValue(
    OpStages &op, const ScheduleContext &ctx) {
  const DeformableParams &p = ctx.params.deformable;
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  vectorizeAndParallelize(out, op.result, vector);
  Halide::RDom r = op.domains.at("scatter");
  std::vector<Var> args = out.args(); // d, h, row, n
  Var d = args[0], h = args[1], n = args[3];
  int64_t depth = op.info.at("depth");
  int width = channelWidth(depth, p, vector);
  Var task(out.name() + "_hn");
  Halide::Stage update = out.update();
  update.reorder(d, r.x, r.y, r.z, r.w, h, n)
      .vectorize(d, width,
                 depth > 0 && depth % width == 0 ? TailStrategy::RoundUp
                                                 : TailStrategy::GuardWithIf)
      .unroll(r.x)
      .fuse(h, n, task)
      .parallel(task);
  scheduleCornerCells(op.stages.at("cells"), Halide::LoopLevel(out, r.w),
                      op.info.at("points"), op.info.at("levels"), vector);
  op.form += ": each (head, batch index) a parallel task over all queries";
}

void mlir::attn::codegen::scheduleGather(OpStages &op,
                                         const ScheduleContext &ctx) {
  Func f = op.result.func;
  if (!ctx.isOutput(f))
    f.compute_root();
  if (op.domains.count("scatter")) {
    int vector =
        ctx.vectorWidth(ctx.params.elementwise.vectorWidth, op.result.type);
    vectorizeAndParallelize(f, op.result, vector);
    scheduleScatter(op, vector);
    return;
  }
  if (op.stages.count("heads")) {
    scheduleDeformable(
        op, ctx,
        ctx.vectorWidth(ctx.params.deformable.vectorWidth, op.result.type));
    return;
  }
  // bilinear_gather (n, q, h, l, p, d): channels d innermost.
  vectorizeAndParallelize(
      f, op.result,
      ctx.vectorWidth(ctx.params.elementwise.vectorWidth, op.result.type));
}

void mlir::attn::codegen::scheduleChoice(OpStages &op,
                                         const ScheduleContext &ctx) {
  // Specializing needs a loop nest of its own (an inlined Func has none);
  // the copy costs one elementwise pass over the result.
  Func f = op.result.func;
  if (!ctx.isOutput(f))
    f.compute_root();
  vectorizeAndParallelize(
      f, op.result,
      ctx.vectorWidth(ctx.params.elementwise.vectorWidth, op.result.type));
  // After the schedule: a specialization starts as a copy of it.
  f.specialize(op.condition);
}
