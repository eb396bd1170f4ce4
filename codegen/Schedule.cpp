//===- Schedule.cpp - Schedule dispatch and shared helpers ----------------===//

#include "codegen/Schedule.h"

using namespace mlir::attn::codegen;
using Halide::Expr;
using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

int ScheduleContext::vectorWidth(int requested, Halide::Type type) const {
  if (requested > 0)
    return requested;
  return std::max(1, target.natural_vector_size(type));
}

SplitChoice mlir::attn::codegen::chooseSplit(const Expr &extent, int factor) {
  if (auto size = Halide::Internal::as_const_int(extent)) {
    int fitted = static_cast<int>(
        std::max<int64_t>(1, std::min<int64_t>(factor, *size)));
    return {fitted, TailStrategy::ShiftInwards, true};
  }
  return {std::max(1, factor), TailStrategy::GuardWithIf, false};
}

int mlir::attn::codegen::dividingWidth(int extent, int width) {
  while (width > 1 && extent % width != 0)
    width /= 2;
  return std::max(1, width);
}

Var mlir::attn::codegen::parallelOuter(Func f, Var start, size_t first) {
  std::vector<Var> args = f.args();
  Var fused = start;
  for (size_t i = first; i < args.size(); ++i) {
    Var next(start.name() + "_" + args[i].name());
    f.fuse(fused, args[i], next);
    fused = next;
  }
  f.parallel(fused);
  return fused;
}

int mlir::attn::codegen::rowsPerTask(int64_t elementsPerRow) {
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(
             kElementwiseTaskElements / std::max<int64_t>(1, elementsPerRow),
             1024)));
}

Var mlir::attn::codegen::parallelRowBlocks(Func f, const TensorFunc &tensor,
                                           int vector) {
  std::vector<Var> args = f.args();
  if (args.empty())
    return Var();
  SplitChoice split = chooseSplit(tensor.shape.back(), vector);
  f.vectorize(args[0], split.factor, split.tail);
  if (args.size() < 2)
    return args[0];
  // The row dims fuse into one loop when they are static. (Fused with a
  // dynamic one, Halide's bounds of a root Func read a causal linear
  // gradient's dO at batch index -125: causal-dynamic.test.) Otherwise the
  // tasks split the innermost row dim alone.
  size_t rank = tensor.shape.size();
  bool staticRows = true;
  for (size_t i = 1; i < args.size(); ++i)
    staticRows = staticRows &&
                 Halide::Internal::as_const_int(tensor.shape[rank - 1 - i]);
  Var rows = args[1];
  for (size_t i = 2; i < args.size() && staticRows; ++i) {
    Var fused(rows.name() + "_" + args[i].name());
    f.fuse(rows, args[i], fused);
    rows = fused;
  }
  // One task per row of a 65536 x 32 softmax spent more time in the thread
  // pool than in its 32 elements (14 ms against 1.0 in row blocks).
  auto rowLength = Halide::Internal::as_const_int(tensor.shape.back());
  int block = rowsPerTask(rowLength ? *rowLength : 1);
  if (block == 1) {
    f.parallel(rows);
    return rows;
  }
  Var task(f.name() + "_task"), inner(f.name() + "_row");
  f.split(rows, task, inner, block, TailStrategy::GuardWithIf).parallel(task);
  return inner;
}

void mlir::attn::codegen::tilePairProducts(Halide::Stage update,
                                           Halide::RVar inPair,
                                           Halide::RVar pairs, Var cols,
                                           Var rows, int width) {
  update.reorder(inPair, cols, rows, pairs)
      .atomic()
      .vectorize(inPair)
      .vectorize(cols, width)
      .unroll(cols)
      .unroll(rows);
}

void mlir::attn::codegen::vectorizePairs(Func pairs, int vector) {
  std::vector<Var> args = pairs.args();
  Var columns("pair_columns"), lanes("pair_lanes");
  pairs.bound(args[0], 0, 2)
      .split(args[1], columns, lanes, vector, TailStrategy::GuardWithIf)
      .reorder(lanes, args[0], columns)
      .vectorize(lanes)
      .unroll(args[0]);
}

int mlir::attn::codegen::taskRows(int64_t rows, int64_t cols, Halide::Type type,
                                  int blockRows, const ScheduleContext &ctx) {
  if (ctx.params.gemm.taskBytes <= 0)
    return blockRows;
  int64_t rowBytes = cols * type.bytes();
  int64_t streamRows = (ctx.params.gemm.taskBytes + rowBytes - 1) / rowBytes;
  return static_cast<int>(
      std::max<int64_t>(blockRows, std::min(streamRows, rows / 16)));
}

int mlir::attn::codegen::taskRows(const TensorFunc &out,
                                  const ScheduleContext &ctx) {
  size_t rank = out.rank();
  auto rows = Halide::Internal::as_const_int(out.shape[rank - 2]);
  auto cols = Halide::Internal::as_const_int(out.shape[rank - 1]);
  if (!rows || !cols)
    return ctx.params.gemm.blockRows;
  return taskRows(*rows, *cols, out.type, ctx.params.gemm.blockRows, ctx);
}

TiledProduct mlir::attn::codegen::scheduleTiledProduct(
    Func out, Func acc, const Halide::RDom &k, const Expr &cols,
    const Expr &rows, int vector, int tileVectors, int tileRows, int blockRows,
    const ScheduleContext &ctx, Func rhsPanel,
    std::optional<FixedRowBlocks> fixedBlocks) {
  std::vector<Var> args = out.args();
  Var x = args[0], y = args[1];
  std::vector<Var> accArgs = acc.args();
  Var ax = accArgs[0], ay = accArgs[1];
  SplitChoice colSplit = chooseSplit(cols, vector * tileVectors);
  // More rows per task for a narrow output (GemmParams::taskBytes), while
  // 16 tasks remain.
  auto staticRows = Halide::Internal::as_const_int(rows);
  auto staticCols = Halide::Internal::as_const_int(cols);
  if (fixedBlocks)
    blockRows = fixedBlocks->rows;
  else if (staticRows && staticCols)
    blockRows = taskRows(*staticRows, *staticCols, out.type(), blockRows, ctx);
  SplitChoice blockSplit = chooseSplit(rows, blockRows);
  SplitChoice rowSplit = chooseSplit(rows, tileRows);
  Var xo("xo"), xi("xi"), yo(fixedBlocks ? fixedBlocks->loop : Var("yo")),
      yi("yi"), yii("yii");
  if (colSplit.isStatic && blockSplit.isStatic) {
    // Register tile: acc is tileRows x colSplit.factor, recomputed per
    // tile (ShiftInwards overlaps the last tile instead of guarding it).
    int rowsPerTile = std::min(rowSplit.factor, blockSplit.factor);
    int width = dividingWidth(colSplit.factor, vector);
    out.split(x, xo, xi, colSplit.factor, TailStrategy::ShiftInwards)
        .split(y, yo, yi, blockSplit.factor, TailStrategy::ShiftInwards)
        .split(yi, yi, yii, rowsPerTile, TailStrategy::ShiftInwards);
    if (rhsPanel.defined())
      out.reorder(xi, yii, yi, xo, yo);
    else
      out.reorder(xi, yii, xo, yi, yo);
    // Every vector of the tile unrolled, so LLVM keeps the accumulators in
    // registers through the epilogue instead of storing them to the stack
    // and loading them back once per tile.
    Var xv("xv");
    out.split(xi, xi, xv, width).vectorize(xv).unroll(xi).unroll(yii);
    Var task = parallelOuter(out, yo, 2);
    if (rhsPanel.defined())
      rhsPanel.compute_at(out, xo);
    // The register tile: the innermost tile loop.
    Halide::LoopLevel tile(out, rhsPanel.defined() ? yi : xo);
    acc.compute_at(tile)
        .vectorize(ax, width)
        .unroll(ay);
    if (k.dimensions() == 2)
      tilePairProducts(acc.update(), k.x, k.y, ax, ay, width);
    else
      acc.update()
          .reorder(ax, ay, k.x)
          .vectorize(ax, width)
          .unroll(ax)
          .unroll(ay);
    return {task, tile};
  }
  // Dynamic sizes: one row of acc at a time, guarded vector tails (bf16
  // pairs: the pair a loop of its own).
  out.split(y, yo, yi, blockSplit.factor, blockSplit.tail)
      .vectorize(x, vector, TailStrategy::GuardWithIf);
  Var task = parallelOuter(out, yo, 2);
  acc.compute_at(out, yi).vectorize(ax, vector, TailStrategy::GuardWithIf);
  // Static columns that are whole vectors: each vector product reduces a
  // pair (vdpbf16ps), as in the register tiles.
  if (k.dimensions() == 2 && colSplit.isStatic &&
      *Halide::Internal::as_const_int(cols) % vector == 0) {
    Var xv("xv");
    acc.update()
        .reorder(k.x, ax, k.y)
        .atomic()
        .vectorize(k.x)
        .split(ax, ax, xv, vector)
        .vectorize(xv);
    return {task, std::nullopt};
  }
  std::vector<Halide::VarOrRVar> order = {ax, k.x};
  if (k.dimensions() == 2)
    order.push_back(k.y);
  acc.update().reorder(order).vectorize(ax, vector, TailStrategy::GuardWithIf);
  return {task, std::nullopt};
}

bool mlir::attn::codegen::reducesAsOneVector(int64_t extent, int vector) {
  return extent >= 2 && extent <= kMaxRegisterAccumulators * vector &&
         (extent & (extent - 1)) == 0;
}

void mlir::attn::codegen::scheduleRowStatistic(Func stat, const Halide::RDom &r,
                                               Func out, Var at, int vector,
                                               bool oneRowAt) {
  stat.compute_at(out, at);
  auto extent = Halide::Internal::as_const_int(r.x.extent());
  // One row at `at`, a few vectors a power of two long (a softmax over
  // dk = 32 features): the row is one vector reduction, its vectors
  // combined in registers and then its lanes by halves
  // (addLaneReductionLoweringFix). A 65536 x 32 softmax took 2.4-2.9 ms
  // with the lanes merged serially, 1.3-1.4 ms by halves.
  if (oneRowAt && extent && reducesAsOneVector(*extent, vector)) {
    stat.update().atomic().vectorize(r.x);
    return;
  }
  if (!extent || *extent % vector != 0 || *extent < 2 * vector)
    return; // short or dynamic rows: a scalar loop
  Halide::RVar keysOuter("keys_outer"), lanesR("lanes");
  std::vector<Var> args = stat.args(); // i, b...
  Var lane(stat.name() + "_lane");
  Func partial =
      stat.update().split(r.x, keysOuter, lanesR, vector).rfactor(lanesR, lane);
  std::vector<Var> storage = {lane};
  storage.insert(storage.end(), args.begin(), args.end());
  partial.compute_at(out, at).reorder_storage(storage).vectorize(lane);
  partial.update().reorder(lane, args[0], keysOuter).vectorize(lane);
  // One row at `at`, of a few vectors: they combine in registers.
  if (oneRowAt && *extent <= kMaxRegisterAccumulators * vector)
    partial.update().unroll(keysOuter);
  // The lanes merge in one horizontal reduction per row, by halves.
  stat.update().atomic().vectorize(lanesR);
}

void mlir::attn::codegen::scheduleRowMax(Func lanes, Func max,
                                         const Halide::RDom &lanesR,
                                         const Halide::LoopLevel &at,
                                         int vector) {
  std::vector<Var> args = lanes.args(); // lane, i, b...
  lanes.compute_at(at).vectorize(args[0], vector);
  lanes.update().reorder(args[0], args[1]).vectorize(args[0], vector);
  // A serial chain of kMaxLanes scalar maxima per row would cost more than
  // one horizontal vector max.
  max.compute_at(at);
  max.update().atomic().vectorize(lanesR.x);
}

Func mlir::attn::codegen::schedulePositionReduction(
    Func f, const Halide::RDom &r, const ScheduleContext &ctx, int chunk) {
  f.compute_root();
  std::vector<Var> args = f.args();
  Var inner = args[0];
  int vector = ctx.vectorWidth(ctx.params.reduction.vectorWidth, f.type());
  chunk = std::max(1, chunk ? chunk : ctx.params.reduction.chunk);
  auto extent = Halide::Internal::as_const_int(r.x.extent());
  bool split = !extent || *extent >= 2 * chunk;
  f.vectorize(inner, vector, TailStrategy::GuardWithIf);
  if (!split) {
    f.update()
        .reorder(inner, r.x)
        .vectorize(inner, vector, TailStrategy::GuardWithIf);
    if (args.size() > 1)
      f.update().parallel(args.back());
    return Func();
  }
  // Chunks of positions reduce in parallel into `u`, then merge serially.
  Halide::RVar chunkOuter("chunk_outer"), chunkInner("chunk_inner");
  Var u(f.name() + "_chunk");
  Func partial =
      f.update()
          .split(r.x, chunkOuter, chunkInner, chunk, TailStrategy::GuardWithIf)
          .rfactor(chunkOuter, u);
  // Each parallel task (u) runs its whole chunk into a buffer of its own
  // (in registers when small), which `chunks` copies out: accumulating in
  // the root buffer made every position wait on the previous one's store.
  // Positions outer, the vectorized var innermost.
  Func chunks = partial.in();
  chunks.compute_root()
      .vectorize(inner, vector, TailStrategy::GuardWithIf)
      .parallel(u);
  partial.compute_at(chunks, u).vectorize(inner, vector,
                                         TailStrategy::GuardWithIf);
  std::vector<Halide::VarOrRVar> order = {inner, chunkInner};
  for (size_t i = 1; i < args.size(); ++i)
    order.push_back(args[i]);
  order.push_back(u);
  partial.update().reorder(order).vectorize(inner, vector,
                                            TailStrategy::GuardWithIf);
  f.update().vectorize(inner, vector, TailStrategy::GuardWithIf);
  return partial;
}

void mlir::attn::codegen::fuseChunkPartial(Func partial,
                                           const Expr &innerExtent,
                                           Func tiles, Var u, int vector) {
  std::vector<Var> args = partial.args(); // inner, b..., chunk
  Var inner = args[0], chunk = args.back();
  // The wrapper schedulePositionReduction computes the partial in (Func::in
  // returns it again); compute_with matches loops by name and kind.
  Func chunks = partial.in();
  chunks.rename(chunk, u).compute_with(tiles, u);
  partial.compute_at(chunks, u); // the loop's new name
  auto extent = Halide::Internal::as_const_int(innerExtent);
  // schedulePositionReduction vectorized `inner` already (so `inner` now
  // names the loop over its vectors). At most 8 vectors of accumulators:
  // the rest of the registers are the loads'.
  if (extent && *extent % vector == 0 &&
      *extent <= kMaxRegisterAccumulators * vector)
    partial.update().unroll(inner);
}

/// Vector registers of a CPU target: 32 with AVX-512 (and on AArch64),
/// 16 on x86 without it.
static int vectorRegisters(const Halide::Target &target) {
  if (target.arch != Halide::Target::X86)
    return 32;
  return target.features_any_of(
             {Halide::Target::AVX512, Halide::Target::AVX512_KNL,
              Halide::Target::AVX512_Skylake, Halide::Target::AVX512_Cannonlake,
              Halide::Target::AVX512_SapphireRapids,
              Halide::Target::AVX512_Zen4, Halide::Target::AVX512_Zen5})
             ? 32
             : 16;
}

/// A register tile's rows x vectors accumulators, the step's vectors of
/// the other operand (LLVM keeps them in registers) and one broadcast must
/// fit the register file; otherwise LLVM spills accumulators around the
/// FMAs (on AVX2, 16 registers, the 4 x 4 tiles of efficient attention's
/// gradient spilled at every step: 2.5x slower than on AVX-512 for 15%
/// less FMA peak, and 3 x 4 still spilled one). Rows go first, so the
/// vectors loaded per step stay shared by more rows.
static void fitRegisterTile(int &rows, int vectors, int registers) {
  vectors = std::max(1, vectors);
  while (rows > 1 && rows * vectors + vectors + 1 > registers)
    --rows;
}

/// Whether the target is an AMD Zen core: Halide's host detection names
/// them by processor tune (tune_znver*) and, from Zen 4, by features only
/// AMD cores get.
static bool amdZenTarget(const Halide::Target &target) {
  using T = Halide::Target;
  switch (target.processor_tune) {
  case T::ZnVer1:
  case T::ZnVer2:
  case T::ZnVer3:
  case T::ZnVer4:
  case T::ZnVer5:
    return true;
  default:
    return target.features_any_of({T::AVX512_Zen4, T::AVX512_Zen5});
  }
}

/// ChunkedProductParams::prefetchBlocks -1: software prefetch of the
/// streamed rows on AMD Zen cores. On Zen 5 it made efficient attention at
/// n = 65536 7% faster (the hardware prefetchers ran too few lines ahead);
/// the other Zen hosts have run with it since. On an Intel Emerald Rapids
/// host the same prefetches made it 1.7x slower on two threads, 1.8x on
/// one, and 1.2x with every row in L2 (efficient attention at n = 4096),
/// and external attention's backward 1.4x: there the instructions cost
/// more than the misses they save.
static int defaultPrefetchBlocks(const Halide::Target &target) {
  return amdZenTarget(target) ? 1 : 0;
}

void mlir::attn::codegen::scheduleKernel(KernelAlgorithm &algorithm,
                                         const ScheduleParams &requested,
                                         const Halide::Target &target) {
  ScheduleParams params = requested;
  if (params.chunkedProduct.prefetchBlocks < 0)
    params.chunkedProduct.prefetchBlocks = defaultPrefetchBlocks(target);
  if (!target.has_gpu_feature()) {
    int registers = vectorRegisters(target);
    fitRegisterTile(params.gemm.tileRows, params.gemm.tileVectors, registers);
    fitRegisterTile(params.attention.tileRows, params.attention.tileVectors,
                    registers);
    fitRegisterTile(params.attention.valueTileRows,
                    params.attention.valueTileVectors, registers);
    fitRegisterTile(params.attentionGrad.tileRows,
                    params.attentionGrad.tileVectors, registers);
    fitRegisterTile(params.chunkedProduct.tileRows, params.gemm.tileVectors,
                    registers);
  }
  ScheduleContext ctx{target, params, {}, {}};
  for (const TensorFunc &output : algorithm.outputs)
    ctx.outputs.insert(output.func.name());
  if (target.has_gpu_feature()) {
    for (OpStages &op : algorithm.ops)
      scheduleGpu(op, ctx);
    return;
  }
  for (OpStages &op : algorithm.ops) {
    auto sum = op.info.find("columnSum");
    if (sum != op.info.end() && op.family == Family::Gemm)
      ctx.columnSums[op.name] = &algorithm.ops[sum->second];
    auto of = op.info.find("epilogueOf");
    if (of == op.info.end() || !ctx.isOutput(op.result.func))
      continue;
    OpStages &product = algorithm.ops[of->second];
    if (product.family != Family::Gemm || !canFuseIntoEpilogue(product, ctx))
      continue;
    // A row sum that reads the product (markEpilogue) is computed in the
    // tiles too, which then must span whole rows.
    auto rowSumOf = op.info.find("epilogueRowSum");
    if (rowSumOf != op.info.end()) {
      if (!tileSpansRows(product, ctx))
        continue;
      OpStages &rowSum = algorithm.ops[rowSumOf->second];
      ctx.rowSums[op.name] = &rowSum;
      ctx.fusedSums.insert(rowSum.name);
    }
    ctx.epilogues[op.name] = &product;
    ctx.fusedProducts.insert(product.name);
    auto rowsOf = op.info.find("epilogueRowsOf");
    if (rowsOf == op.info.end())
      continue;
    OpStages &rowProduct = algorithm.ops[rowsOf->second];
    if (rowProduct.family != Family::Gemm ||
        !canFuseIntoEpilogue(rowProduct, ctx))
      continue;
    ctx.rowProducts[op.name] = &rowProduct;
    ctx.fusedProducts.insert(rowProduct.name);
  }
  // Products that read the rows an epilogue's tiles read
  // (markRowCompanions) share the epilogue's tasks of those rows.
  for (OpStages &op : algorithm.ops) {
    if (op.family != Family::Gemm || op.info.at("bf16Pairs"))
      continue;
    auto chunk = op.info.find("chunkCompanion");
    auto rows = op.info.find("rowCompanion");
    auto of = chunk != op.info.end() ? chunk : rows;
    if (of == op.info.end())
      continue;
    const OpStages &epilogue = algorithm.ops[of->second];
    if (!ctx.epilogues.count(epilogue.name) ||
        ctx.fixedBlocks.count(epilogue.name))
      continue;
    Halide::Func epilogueOut = epilogue.result.func;
    if (chunk != op.info.end()) {
      // (Not with column sums fused into its chunk tasks already.)
      if (!reducesInChunks(op, ctx) || ctx.columnSums.count(op.name))
        continue;
      Halide::Var loop = chunkLoop(op.stages.at("acc"));
      ctx.chunkCompanions[epilogue.name] = &op;
      ctx.fixedBlocks[epilogue.name] = {
          std::max(1, ctx.params.chunkedProduct.chunk), loop};
      ctx.companionTaskLoops[op.name] = Halide::LoopLevel(epilogueOut, loop);
    } else {
      // A returned product in its own tiles (no epilogue of its own, more
      // than one block of rows); the smaller of the two outputs' blocks
      // (taskRows).
      if (!ctx.isOutput(op.result.func) || ctx.fusedProducts.count(op.name) ||
          !canFuseIntoEpilogue(op, ctx))
        continue;
      const OpStages &epilogueProduct = *ctx.epilogues.at(epilogue.name);
      int blockRows = std::min(taskRows(op.result, ctx),
                               taskRows(epilogueProduct.result, ctx));
      Halide::Var loop(epilogue.name + "_row_blocks");
      ctx.rowCompanions[epilogue.name] = &op;
      ctx.fixedBlocks[epilogue.name] = {blockRows, loop};
      ctx.fixedBlocks[op.name] = {blockRows, loop};
    }
    // (The epilogue computes first in the shared loop: its loop is the one
    // producers of both go to.)
    auto shared = op.info.find("sharedRows");
    if (shared != op.info.end() &&
        !ctx.isOutput(algorithm.ops[shared->second].result.func))
      ctx.sharedRows[algorithm.ops[shared->second].name] =
          Halide::LoopLevel(epilogueOut, ctx.fixedBlocks[epilogue.name].loop);
  }
  // A returned rounding of an op's pure result (no update definition) takes
  // the result's place in that op's schedule: the result is inlined into it,
  // so the f32 values are never stored and read back.
  for (OpStages &op : algorithm.ops) {
    auto of = op.info.find("roundingOf");
    if (of == op.info.end() || !ctx.isOutput(op.result.func) ||
        ctx.epilogues.count(op.name))
      continue;
    OpStages &producer = algorithm.ops[of->second];
    if (producer.result.func.has_update_definition() ||
        ctx.fusedProducts.count(producer.name))
      continue;
    producer.result.func.compute_inline();
    producer.result.func = op.result.func;
    ctx.fusedRoundings.insert(op.name);
  }
  auto scheduleOp = [&](OpStages &op) {
    switch (op.family) {
    case Family::Elementwise:
      scheduleElementwise(op, ctx);
      break;
    case Family::Gather:
      scheduleGather(op, ctx);
      break;
    case Family::Gemm:
      scheduleGemm(op, ctx);
      break;
    case Family::Normalize:
      scheduleNormalize(op, ctx);
      break;
    case Family::Scan:
      scheduleScan(op, ctx);
      break;
    case Family::Efficient:
      scheduleEfficient(op, ctx);
      break;
    case Family::RowAttention:
      scheduleRowAttention(op, ctx);
      break;
    case Family::MaterializedAttention:
      scheduleMaterializedAttention(op, ctx);
      break;
    case Family::Choice:
      scheduleChoice(op, ctx);
      break;
    case Family::AttentionGradRows:
      scheduleAttentionGradRows(op, ctx);
      break;
    case Family::AttentionGradKeys:
      scheduleAttentionGradKeys(op, ctx);
      break;
    case Family::AttentionGradOnePass:
      scheduleAttentionGradOnePass(op, ctx);
      break;
    case Family::DeformableGradSamples:
      scheduleDeformableGradSamples(op, ctx);
      break;
    case Family::DeformableGradValue:
      scheduleDeformableGradValue(op, ctx);
      break;
    case Family::DeformableGradSlice:
      scheduleDeformableGradSlice(op, ctx);
      break;
    }
  };
  // A column sum that a product may reduce in its chunk tasks
  // (ctx.columnSums) is scheduled right after that product, which decides
  // whether it takes the sum (ctx.fusedSums), wherever the sum comes in
  // the kernel (a gradient computes phi(K)^T 1 before phi(K)^T V).
  std::set<const OpStages *> sumsOfProducts;
  for (const auto &[product, sum] : ctx.columnSums)
    sumsOfProducts.insert(sum);
  for (OpStages &op : algorithm.ops) {
    if (sumsOfProducts.count(&op))
      continue;
    if (!ctx.fusedRoundings.count(op.name))
      scheduleOp(op);
    auto sum = ctx.columnSums.find(op.name);
    if (sum != ctx.columnSums.end() &&
        !ctx.fusedRoundings.count(sum->second->name))
      scheduleOp(*sum->second);
  }
  // Each companion runs after the epilogue's block of the same rows, in
  // the same parallel iteration, so it reads those rows from L2.
  for (OpStages &op : algorithm.ops) {
    auto tasks = ctx.companionTasks.find(op.name);
    if (tasks != ctx.companionTasks.end())
      tasks->second.tiles.compute_with(op.result.func, tasks->second.u);
    auto rows = ctx.rowCompanions.find(op.name);
    if (rows != ctx.rowCompanions.end()) {
      Halide::Func companion = rows->second->result.func; // (a handle)
      companion.compute_with(op.result.func, ctx.fixedBlocks.at(op.name).loop);
    }
  }
}
