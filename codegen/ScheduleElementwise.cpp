//===- ScheduleElementwise.cpp - Elementwise and gather schedules ---------===//
//
// Elementwise ops (scale, feature_map, add, causal_mask, normalize count,
// reshapes, constants) are inlined into their consumers; only an output is
// a loop nest of its own: vectorized over the innermost dim, parallel over
// the outermost. Gathers (bilinear_gather, deformable) vectorize across the
// D channels of a head and run queries in parallel; the deformable sum over
// points is computed per query. A run-time choice (scf.if) is a loop nest
// of its own, specialized on its condition so each version computes only
// the branch it reads.
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
  SplitChoice split = chooseSplit(tensor.shape.back(), vector);
  f.vectorize(args[0], split.factor, split.tail);
  if (args.size() > 1)
    f.parallel(args.back());
}

void mlir::attn::codegen::scheduleElementwise(OpStages &op,
                                              const ScheduleContext &ctx) {
  Func f = op.result.func;
  if (!ctx.isOutput(f))
    return; // inlined
  vectorizeAndParallelize(
      f, op.result,
      ctx.vectorWidth(ctx.params.elementwise.vectorWidth, op.result.type));
}

void mlir::attn::codegen::scheduleGather(OpStages &op,
                                         const ScheduleContext &ctx) {
  Func f = op.result.func;
  int vector =
      ctx.vectorWidth(ctx.params.elementwise.vectorWidth, op.result.type);
  if (!ctx.isOutput(f))
    f.compute_root();
  std::vector<Var> args = f.args();
  auto heads = op.stages.find("heads");
  if (heads == op.stages.end()) {
    // bilinear_gather (n, q, h, l, p, d): channels d innermost.
    vectorizeAndParallelize(f, op.result, vector);
    return;
  }
  // deformable: out (n, q, c) reads heads (n, q, h, d) computed per query.
  Var q = args[1];
  SplitChoice channels = chooseSplit(op.result.shape.back(), vector);
  f.vectorize(args[0], channels.factor, channels.tail);
  f.parallel(q);
  Func h = heads->second;
  std::vector<Var> headArgs = h.args();
  h.compute_at(f, q).vectorize(headArgs[0], vector, TailStrategy::GuardWithIf);
  h.update().vectorize(headArgs[0], vector, TailStrategy::GuardWithIf);
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
