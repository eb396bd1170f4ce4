//===- ScheduleGpu.cpp - Schedules for GPU targets (CUDA, OpenCL) ---------===//
//
// Chosen by scheduleKernel when the target has a GPU feature. The same
// schedules serve CUDA (PTX, validated with ptxas; nothing runs CUDA here)
// and OpenCL (run on PoCL's CPU device and checked against the reference).
//
// - Loop nests of their own (outputs, root Funcs, every update stage) are
//   2-D thread tiles (tileX x tileY) over their two innermost pure dims, with
//   the remaining pure dims fused into one block dim. Reduction loops stay
//   serial inside a thread. Elementwise ops are inlined.
// - Products (matmul, Q context, materialized attention) keep the
//   accumulator of one output element in a register of its thread.
// - Reductions over positions (K^T V, column statistics) split the positions
//   into chunks with rfactor; each chunk is reduced by other threads, then the
//   partial results are merged.
// - Row attention runs a block per queryBlock queries: the block's scores
//   (queryBlock x m) are computed once into shared memory (or, when they do
//   not fit or m is dynamic, a global scratch allocated per launch of
//   queriesPerLaunch queries), the row statistics in shared memory, and each
//   thread accumulates one output element. Never an n x m buffer for n larger
//   than queriesPerLaunch.
// - attn.deformable_grad: the sample pass a thread per gradient (its
//   corners' dots in registers), the value pass as scatter_pixels (threads
//   over channels and heads, the corners serial in each).
// - attn.attention_grad (the fused softmax backward) runs every stage as a
//   kernel of its own, its score-sized stages stored whole: correct, not
//   yet blocked like the CPU schedule.
//
//===----------------------------------------------------------------------===//

#include "codegen/Schedule.h"

using namespace mlir::attn::codegen;
using Halide::Func;
using Halide::MemoryType;
using Halide::Stage;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

namespace {

/// The pure vars of `f` that stage `stage` (0: the pure definition, k > 0:
/// update k-1) keeps as plain variables, innermost first.
std::vector<Var> pureVarsOf(const Func &f, int stage) {
  std::vector<Var> args = f.args();
  if (stage == 0)
    return args;
  std::vector<Halide::Expr> lhs = f.function().update(stage - 1).args();
  std::vector<Var> result;
  for (const Var &v : args)
    for (const Halide::Expr &e : lhs)
      if (const auto *var = e.as<Halide::Internal::Variable>())
        if (var->name == v.name() && !var->reduction_domain.defined()) {
          result.push_back(v);
          break;
        }
  return result;
}

struct ThreadVars {
  Var tx, ty; ///< thread vars (ty unused for 1-D)
};

/// Maps a stage onto the GPU: thread tile over its two innermost pure vars,
/// the other pure vars fused into a block dim. Returns the thread vars.
ThreadVars gpuStage(Stage s, const std::vector<Var> &vars, const Func &f,
                    const GpuParams &p) {
  std::string name = f.name();
  ThreadVars threads{Var(name + "_tx"), Var(name + "_ty")};
  if (vars.empty()) {
    s.gpu_single_thread();
    return threads;
  }
  Var bx(name + "_bx"), by(name + "_by");
  if (vars.size() == 1) {
    s.gpu_tile(vars[0], bx, threads.tx, p.threads1D, TailStrategy::GuardWithIf);
    return threads;
  }
  s.gpu_tile(vars[0], vars[1], bx, by, threads.tx, threads.ty, p.tileX, p.tileY,
             TailStrategy::GuardWithIf);
  if (vars.size() > 2) {
    Var fused = vars[2];
    for (size_t i = 3; i < vars.size(); ++i) {
      Var next(fused.name() + "_" + vars[i].name());
      s.fuse(fused, vars[i], next);
      fused = next;
    }
    // Outside the tile's block and thread loops: an rfactor intermediate
    // (pure vars j, b..., chunk) otherwise keeps its chunk loop innermost,
    // a block loop inside thread loops, which Halide rejects.
    s.reorder(threads.tx, threads.ty, bx, by, fused);
    s.gpu_blocks(fused);
  }
  return threads;
}

/// A loop nest of its own on the GPU: every stage of `f` tiled over its pure
/// vars. Returns the thread vars of the pure definition.
ThreadVars gpuRoot(Func f, const ScheduleContext &ctx) {
  const GpuParams &p = ctx.params.gpu;
  if (!ctx.isOutput(f))
    f.compute_root();
  ThreadVars threads = gpuStage(f, f.args(), f, p);
  for (int k = 0; k < f.num_update_definitions(); ++k)
    gpuStage(f.update(k), pureVarsOf(f, k + 1), f, p);
  return threads;
}

/// A reduction over positions `r`: chunks of p.chunk positions reduce in
/// parallel threads into an rfactor intermediate, which is then merged.
void gpuPositionReduction(Func f, const Halide::RDom &r,
                          const ScheduleContext &ctx) {
  const GpuParams &p = ctx.params.gpu;
  int chunk = std::max(1, p.chunk);
  auto extent = Halide::Internal::as_const_int(r.x.extent());
  if (!extent || *extent >= 2 * chunk) {
    Halide::RVar chunkOuter(f.name() + "_chunk_outer"),
        chunkInner(f.name() + "_chunk_inner");
    Var u(f.name() + "_chunk");
    Func partial = f.update()
                       .split(r.x, chunkOuter, chunkInner, chunk,
                              TailStrategy::GuardWithIf)
                       .rfactor(chunkOuter, u);
    gpuRoot(partial, ctx);
  }
  gpuRoot(f, ctx);
}

/// A product `out` = Σ_k acc: one output element per thread, its
/// accumulator in a register.
void gpuProduct(Func out, Func acc, const ScheduleContext &ctx) {
  ThreadVars threads = gpuRoot(out, ctx);
  acc.compute_at(out, threads.tx);
}

void gpuRowAttention(OpStages &op, const ScheduleContext &ctx) {
  const GpuParams &p = ctx.params.gpu;
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  gpuRoot(op.stages.at("query"), ctx);
  gpuRoot(op.stages.at("keyT"), ctx);
  Func scores = op.stages.at("scores"), dot = op.stages.at("dot");
  Func acc = op.stages.at("acc");
  Halide::Expr m = op.domains.at("acc").x.extent();
  int bytes = op.result.type.bytes();

  // Queries per block: the block's scores and row statistics (one value
  // per statistic and query) should fit in shared memory.
  int64_t statistics = 0;
  for (auto &[role, f] : op.stages) {
    if (role.rfind("maxlanes", 0) == 0)
      statistics += Halide::Internal::as_const_int(
                        op.domains.at("rl" + role.substr(8)).x.extent())
                        .value_or(1);
    else
      statistics += role.rfind("max", 0) == 0 || role.rfind("den", 0) == 0;
  }
  int queryBlock = std::max(1, p.queryBlock);
  auto keys = Halide::Internal::as_const_int(m);
  bool shared = false;
  if (keys && *keys > 0) {
    int64_t fit = p.sharedBytes / ((*keys + statistics) * bytes);
    if (fit >= 1) {
      shared = true;
      queryBlock = static_cast<int>(std::min<int64_t>(queryBlock, fit));
    }
  }

  std::vector<Var> args = out.args(); // e, i, b...
  Var e = args[0], i = args[1];
  Var launch("qlaunch"), qblock("qblock"), qi("qi"), eo("eo"), ei("ei");
  // A whole number of blocks per launch, and no more than n queries.
  int perLaunch = std::max(1, p.queriesPerLaunch / queryBlock) * queryBlock;
  if (auto queries =
          Halide::Internal::as_const_int(op.result.shape[args.size() - 2]))
    perLaunch = static_cast<int>(std::min<int64_t>(
        perLaunch, (std::max<int64_t>(*queries, 1) + queryBlock - 1) /
                       queryBlock * queryBlock));
  out.split(i, launch, i, perLaunch, TailStrategy::GuardWithIf)
      .split(i, qblock, qi, queryBlock, TailStrategy::GuardWithIf)
      .split(e, eo, ei, p.valueThreads, TailStrategy::GuardWithIf);
  // Batch dims fused into one block dim, launches serial on the host.
  std::vector<VarOrRVar> order = {ei, qi, eo, qblock};
  Var batch;
  bool hasBatch = args.size() > 2;
  if (hasBatch) {
    batch = args[2];
    for (size_t k = 3; k < args.size(); ++k) {
      Var next(batch.name() + "_" + args[k].name());
      out.fuse(batch, args[k], next);
      batch = next;
    }
    order.push_back(batch);
  }
  order.push_back(launch);
  out.reorder(order).gpu_threads(ei, qi);
  if (hasBatch)
    out.gpu_blocks(qblock, batch);
  else
    out.gpu_blocks(qblock);

  // The block's scores, computed once per block.
  std::vector<Var> sArgs = scores.args(); // j, i, b...
  Var jo("jo"), ji("ji");
  scores.compute_at(out, qblock)
      .store_in(shared ? MemoryType::GPUShared : MemoryType::Heap)
      .split(sArgs[0], jo, ji, p.keyThreads, TailStrategy::GuardWithIf)
      .reorder(ji, sArgs[1], jo)
      .gpu_threads(ji, sArgs[1]);
  dot.compute_at(scores, ji);

  // Row statistics: one thread per query of the block, in shared memory.
  for (auto &[role, f] : op.stages) {
    if (role.rfind("max", 0) != 0 && role.rfind("den", 0) != 0)
      continue;
    Func stat = f;
    stat.compute_at(out, qblock).store_in(MemoryType::GPUShared);
    if (role.rfind("maxlanes", 0) == 0) {
      // (lane, i): a thread per lane and query.
      Var lane = stat.args()[0], row = stat.args()[1];
      stat.gpu_threads(lane, row);
      stat.update().gpu_threads(lane, row);
      continue;
    }
    Var row = stat.args()[0];
    stat.gpu_threads(row);
    for (int k = 0; k < stat.num_update_definitions(); ++k)
      stat.update(k).gpu_threads(row);
  }
  // num/p stay inlined: exp is recomputed where it is read.
  acc.compute_at(out, ei);
}

void gpuMaterializedAttention(OpStages &op, const ScheduleContext &ctx) {
  gpuRoot(op.stages.at("query"), ctx);
  gpuRoot(op.stages.at("keyT"), ctx);
  gpuProduct(op.stages.at("scores"), op.stages.at("dot"), ctx);
  for (int64_t t = 0; t < op.info.at("steps"); ++t) {
    std::string suffix = std::to_string(t);
    auto num = op.stages.find("num" + suffix);
    if (num == op.stages.end())
      continue; // a `none` step
    gpuRoot(num->second, ctx);
    bool overKeys = op.info.at("overKeys" + suffix);
    for (const char *kind : {"max", "den"}) {
      auto stat = op.stages.find(kind + suffix);
      if (stat == op.stages.end())
        continue;
      if (overKeys)
        gpuRoot(stat->second, ctx);
      else
        gpuPositionReduction(stat->second, op.domains.at("r" + suffix), ctx);
    }
    auto lanes = op.stages.find("maxlanes" + suffix);
    if (lanes != op.stages.end())
      gpuRoot(lanes->second, ctx);
  }
  auto plain = op.stages.find("num");
  if (plain != op.stages.end())
    gpuRoot(plain->second, ctx);
  gpuProduct(op.result.func, op.stages.at("acc"), ctx);
}

void gpuNormalize(OpStages &op, const ScheduleContext &ctx) {
  gpuRoot(op.result.func, ctx);
  size_t rank = op.result.rank();
  // A scalar sum (rank 0) is one thread, like a row.
  size_t halideDim = rank == 0 ? 0 : rank - 1 - op.info.at("dim");
  for (const char *role : {"max", "sum"}) {
    auto stage = op.stages.find(role);
    if (stage == op.stages.end())
      continue;
    if (halideDim == 0) // one thread per row
      gpuRoot(stage->second, ctx);
    else
      gpuPositionReduction(stage->second, op.domains.at("r"), ctx);
  }
  auto exp = op.stages.find("exp");
  if (exp != op.stages.end())
    gpuRoot(exp->second, ctx);
}

void gpuEfficient(OpStages &op, const ScheduleContext &ctx) {
  if (op.info.at("softmax")) {
    for (const char *role :
         {"qexp", "qmax", "qsum", "kexp", "context_norm"})
      gpuRoot(op.stages.at(role), ctx);
    gpuPositionReduction(op.stages.at("kmax"), op.domains.at("kmax"), ctx);
    gpuPositionReduction(op.stages.at("ksum"), op.domains.at("kmax"), ctx);
  }
  gpuPositionReduction(op.stages.at("context"), op.domains.at("context"), ctx);
  gpuProduct(op.result.func, op.stages.at("acc"), ctx);
}

void gpuGather(OpStages &op, const ScheduleContext &ctx) {
  // scatter_pixels too: its update's pure vars (d, h, n) are the threads
  // and blocks, and each thread adds its samples in order (two samples may
  // hit the same row, so they cannot run in parallel).
  ThreadVars threads = gpuRoot(op.result.func, ctx);
  // deformable: each thread sums its channel of its head over levels and
  // points.
  auto heads = op.stages.find("heads");
  if (heads != op.stages.end())
    heads->second.compute_at(op.result.func, threads.tx);
}

} // namespace

void mlir::attn::codegen::scheduleGpu(OpStages &op,
                                      const ScheduleContext &ctx) {
  switch (op.family) {
  case Family::Elementwise:
    if (ctx.isOutput(op.result.func))
      gpuRoot(op.result.func, ctx);
    return; // inlined otherwise
  case Family::Gather:
    gpuGather(op, ctx);
    return;
  case Family::Gemm:
    gpuProduct(op.result.func, op.stages.at("acc"), ctx);
    return;
  case Family::Normalize:
    gpuNormalize(op, ctx);
    return;
  case Family::Scan:
    // Serial along the scanned dim inside a thread, threads across the rest.
    gpuRoot(op.result.func, ctx);
    return;
  case Family::Efficient:
    gpuEfficient(op, ctx);
    return;
  case Family::RowAttention:
    gpuRowAttention(op, ctx);
    return;
  case Family::MaterializedAttention:
    gpuMaterializedAttention(op, ctx);
    return;
  case Family::Choice:
    gpuRoot(op.result.func, ctx);
    op.result.func.specialize(op.condition);
    return;
  case Family::DeformableGradSamples: {
    // A thread per gradient of a sample; its 4 corner dots in registers.
    ThreadVars threads = gpuRoot(op.result.func, ctx);
    op.stages.at("dots").compute_at(op.result.func, threads.tx);
    return;
  }
  case Family::DeformableGradSlice:
    if (ctx.isOutput(op.result.func))
      gpuRoot(op.result.func, ctx);
    return; // inlined otherwise
  case Family::DeformableGradValue:
    // Threads over (d, h) and blocks over n of the update's pure vars; each
    // thread adds its corners in order (two may hit the same row).
    gpuRoot(op.result.func, ctx);
    return;
  case Family::AttentionGradRows:
  case Family::AttentionGradKeys:
  case Family::AttentionGradOnePass: // CPU hand schedules only (Codegen.cpp)
    // Every stage a kernel of its own: the products' reductions stay
    // serial in a thread each, and the score-sized stages are stored whole
    // (global memory; the CPU schedule's blocking is not done here).
    for (auto &[role, f] : op.stages)
      gpuRoot(f, ctx);
    gpuRoot(op.result.func, ctx);
    return;
  }
}
