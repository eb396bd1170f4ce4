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

/// A softmax over positions in chunks (lowerNormalize with
/// AlgorithmOptions::normalizeChunk): one parallel task per chunk takes the
/// chunk's max, then its sum of exps, both over the chunk's entries while
/// they are in L1, the statistics' own dims in vectors; a copy of each
/// chunk's max, fused with the task, is what the merges read. The merges
/// run over the chunks, the exps (the result) where read.
static void scheduleNormalizeChunks(OpStages &op, int vector) {
  Func chunkSum = op.stages.at("chunk_sum"),
       chunkMax = op.stages.at("chunk_max");
  Func max = op.stages.at("max"), sum = op.stages.at("sum");
  std::vector<Var> args = chunkSum.args(); // inner, ..., c
  Var inner = args[0], c = args.back();
  // The statistics of one slice of the chunk at a time (every dim but
  // `inner` fixed): with batch dims, the whole chunk of every batch index
  // would not stay in L1 between the max and the sum.
  Var slice = args[1];
  Halide::RVar positions = op.domains.at("chunk_positions").x;
  Func task = chunkSum.in(sum);
  Func maxima = chunkMax.in({max, sum});
  for (Func copy : {task, maxima})
    copy.compute_root()
        .vectorize(inner, vector, TailStrategy::GuardWithIf)
        .parallel(c);
  maxima.compute_with(task, slice);
  for (Func stat : {chunkMax, chunkSum}) {
    stat.compute_at(task, slice)
        .vectorize(inner, vector, TailStrategy::GuardWithIf);
    stat.update()
        .reorder(inner, positions)
        .vectorize(inner, vector, TailStrategy::GuardWithIf);
  }
  Halide::RVar chunks = op.domains.at("chunks").x;
  for (Func merge : {max, sum}) {
    merge.compute_root().vectorize(inner, vector, TailStrategy::GuardWithIf);
    merge.update()
        .reorder(inner, chunks)
        .vectorize(inner, vector, TailStrategy::GuardWithIf);
  }
}

void mlir::attn::codegen::scheduleNormalize(OpStages &op,
                                            const ScheduleContext &ctx) {
  // A product's chunk tasks reduce it (scheduleGemm).
  if (ctx.fusedSums.count(op.name))
    return;
  Func out = op.result.func;
  int vector =
      ctx.vectorWidth(ctx.params.reduction.vectorWidth, op.result.type);
  std::vector<Var> args = out.args();
  size_t rank = args.size();
  const Halide::RDom &r = op.domains.at("r");
  // Read only by two loop nests that share tasks of row blocks
  // (ScheduleContext::sharedRows): computed in each task, for its rows.
  auto shared = ctx.sharedRows.find(op.name);
  bool perTask = shared != ctx.sharedRows.end() && rank == 2;
  if (perTask)
    out.compute_at(shared->second)
        .vectorize(args[0], vector, TailStrategy::GuardWithIf);
  else if (!ctx.isOutput(out))
    out.compute_root();
  if (rank == 0) {
    // A scalar sum (attn.unbroadcast to a rank-0 `like`): one serial loop.
    op.stages.at("sum").compute_root();
    return;
  }
  size_t halideDim = rank - 1 - op.info.at("dim");
  Var row = perTask ? args[1] : parallelRowBlocks(out, op.result, vector);
  // Along rows (dim innermost): each row's statistics next to it, the exps
  // stored per row; across rows: the statistics over positions in parallel
  // chunks, the exps recomputed where read (a root copy of them was a
  // serial pass writing the whole tensor).
  bool alongRows = halideDim == 0 && rank > 1;
  if (op.stages.count("chunk_sum")) {
    scheduleNormalizeChunks(op, vector);
    return;
  }
  for (const char *role : {"max", "sum"}) {
    auto stage = op.stages.find(role);
    if (stage == op.stages.end())
      continue;
    Func stat = stage->second;
    if (alongRows)
      scheduleRowStatistic(stat, r, out, row, vector, /*oneRowAt=*/true);
    else if (halideDim == 0)
      stat.compute_root();
    else
      schedulePositionReduction(stat, r, ctx);
  }
  auto exp = op.stages.find("exp");
  if (exp != op.stages.end() && alongRows) {
    std::vector<Var> expArgs = exp->second.args();
    exp->second.compute_at(out, row).vectorize(expArgs[0], vector,
                                               TailStrategy::GuardWithIf);
  } else if (exp != op.stages.end() && halideDim == 0) {
    std::vector<Var> expArgs = exp->second.args();
    exp->second.compute_root().vectorize(expArgs[0], vector,
                                         TailStrategy::GuardWithIf);
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

/// The input buffer `f` reads when `f` is the Func of an ImageParam (a kernel
/// argument), else nothing.
static std::optional<Halide::Parameter> inputBuffer(const Func &f) {
  if (!f.defined() || f.has_update_definition() || f.outputs() != 1)
    return std::nullopt;
  const auto *call = f.value().as<Halide::Internal::Call>();
  if (!call || call->call_type != Halide::Internal::Call::Image ||
      !call->param.defined())
    return std::nullopt;
  return call->param;
}

/// Runs `u` and every pure loop outside it (the later arguments of `f`, in
/// their default order) in parallel: the tasks of chunk partials, and the
/// stages fused with them, which must agree on the kind of each loop.
static void parallelFrom(Func f, const Var &u) {
  bool outside = false;
  for (const Var &arg : f.args()) {
    outside = outside || arg.name() == u.name();
    if (outside)
      f.parallel(arg);
  }
}

/// The tasks of a chunk partial `partial` (e, d, ..., with `u` the chunk
/// and an update over `positions`, the chunk's `chunk` positions; `rows`
/// and `cols` static): a root wrapper parallel over `u` computes each
/// chunk's partial in a buffer of its own, block by block of
/// ChunkedProductParams::positionBlock positions in register tiles of
/// tileRows rows (scheduleChunkedProduct says why). When `streamed` (the
/// operand whose rows the tiles read, V) is an input buffer, each tile
/// prefetches the rows it reads, prefetchBlocks blocks ahead.
/// `streamedByRows`: its innermost dim is the columns (a transposed rhs's
/// is the positions, and it gets no panel). With
/// `inPair` (bf16 pairs, vdpbf16ps), `positions` and `chunk` count pairs
/// of positions, and each vector product of the tile reduces a pair.
static ChunkedProduct
tileChunkPartial(Func partial, Halide::RVar positions, Var u, int chunk,
                 const Halide::Expr &rows, const Halide::Expr &cols, int vector,
                 const ScheduleContext &ctx, const Func &streamed,
                 bool streamedByRows,
                 std::optional<Halide::RVar> inPair = std::nullopt) {
  const ChunkedProductParams &p = ctx.params.chunkedProduct;
  int tileRows = chooseSplit(rows, std::max(1, p.tileRows)).factor;
  // Blocks tile the chunk exactly (a partial block would need guards).
  int block = std::max(1, p.positionBlock / (inPair ? 2 : 1));
  if (block > chunk || chunk % block != 0)
    block = chunk;
  std::vector<Var> args = partial.args();
  Var e = args[0], d = args[1];
  std::vector<Var> others; // the batch dims: all but e, d and u
  for (size_t i = 2; i < args.size(); ++i)
    if (args[i].name() != u.name())
      others.push_back(args[i]);
  Halide::RVar blockOuter("block_outer"), blockInner("block_inner");
  Var w(partial.name() + "_block");
  Func blockTile = partial.update()
                       .split(positions, blockOuter, blockInner, block)
                       .rfactor(blockOuter, w);
  Func tiles = partial.in();
  // A width that divides the columns: the vector loops have no tail, and
  // must not read past the last column of V.
  int width = dividingWidth(
      static_cast<int>(*Halide::Internal::as_const_int(cols)), vector);
  // The tasks' loops stay in the partial's argument order, so a stage fused
  // with them (compute_with matches the loops from the outermost down to u
  // by name and kind) needs only the same argument order: a product's
  // rfactor puts u last (outermost), attn.efficient's per-chunk stages put
  // it before the batch dims (which then run outside it, in parallel too).
  tiles.compute_root().vectorize(e, width);
  parallelFrom(tiles, u);
  partial.compute_at(tiles, u).vectorize(e, width);
  Var dOuter("d_outer"), dInner("d_inner");
  // Columns wider than a register tile of gemm.tileVectors vectors run in
  // column tiles, outside the row tiles: the tile keeps tileRows x tileCols
  // accumulators in registers (all 512 columns of external attention's
  // dMk were 128 of them, spilled: 4.6 ms for a 1.2 ms product), and the
  // block's rows of that column tile stay in L1 for every row tile.
  int staticCols = static_cast<int>(*Halide::Internal::as_const_int(cols));
  int tileCols = width * std::max(1, ctx.params.gemm.tileVectors);
  bool columnTiles = staticCols > tileCols && staticCols % tileCols == 0;
  Var eTile("e_tile"), eIn("e_in");
  Halide::Stage update = partial.update();
  update.split(d, dOuter, dInner, tileRows, TailStrategy::GuardWithIf);
  Var lanesOf = e;
  std::vector<Halide::VarOrRVar> order;
  if (columnTiles) {
    update.split(e, eTile, eIn, tileCols);
    lanesOf = eIn;
    order = {eIn, dInner, dOuter, eTile, blockOuter};
  } else {
    order = {e, dInner, dOuter, blockOuter};
  }
  order.insert(order.end(), others.begin(), others.end());
  // The tile's sum into the partial unrolled like the tile itself, so the
  // accumulators go from registers straight into it (not through the
  // stack).
  Var eOuter("e_outer"), eLanes("e_lanes");
  update.reorder(order)
      .split(lanesOf, eOuter, eLanes, width)
      .vectorize(eLanes)
      .unroll(eOuter)
      .unroll(dInner);
  blockTile.compute_at(partial, dOuter).vectorize(e, width).unroll(d);
  if (inPair)
    tilePairProducts(blockTile.update(), *inPair, blockInner, e, d, width);
  else
    blockTile.update()
        .split(e, eOuter, eLanes, width)
        .reorder(eLanes, eOuter, d, blockInner)
        .vectorize(eLanes)
        .unroll(eOuter)
        .unroll(d);
  std::optional<Halide::Parameter> input = inputBuffer(streamed);
  // Where the column tile's rows of a block would collide in L1, the tiles
  // read them from a contiguous copy made once per block and column tile
  // (the prefetches then go with the copy): external attention's dMk
  // (4096 positions x 512 columns) took 4.8 ms, 1.7 with the copy.
  if (columnTiles && streamedByRows && !inPair &&
      !ctx.inlined.count(streamed.name()) &&
      columnPanelConflictsInL1(staticCols * streamed.type().bytes(),
                               tileCols * streamed.type().bytes(), block)) {
    Func panel = Func(streamed).in(blockTile);
    std::vector<Var> panelArgs = panel.args(); // column, position, batch...
    // The copy holds one block of one column tile (Halide cannot prove the
    // bound for a chunk's guarded tail, and would size it at run time, on
    // the heap); it computes only the rows that exist.
    panel.compute_at(partial, eTile)
        .bound_storage(panelArgs[0], tileCols)
        .bound_storage(panelArgs[1], block)
        .vectorize(panelArgs[0], width);
    if (input && p.prefetchBlocks > 0)
      panel.prefetch(*input, panelArgs[1], panelArgs[1],
                     p.prefetchBlocks * block,
                     Halide::PrefetchBoundStrategy::NonFaulting);
    return {tiles, u, blockTile};
  }
  // Every tile of a block reads the same rows of V, so only the first one
  // would wait on memory (the hardware prefetchers do not run a block
  // ahead): each tile prefetches the rows of a later block as it goes, so
  // they arrive during the whole block. The later tiles of the block issue
  // the same prefetches again (lines already on their way or in cache);
  // limiting them to the first tile needs a branch, and a burst per block
  // measured 5% slower. Past the last row the prefetches are harmless
  // (NonFaulting: x86 prefetches do not fault) and need no branch in the
  // tile loop.
  if (input && p.prefetchBlocks > 0)
    blockTile.update().prefetch(*input, blockInner, blockInner,
                                p.prefetchBlocks * block,
                                Halide::PrefetchBoundStrategy::NonFaulting);
  return {tiles, u, blockTile};
}

Var mlir::attn::codegen::chunkLoop(const Func &product) {
  return Var(product.name() + "_chunk");
}

/// context(e, d) = sum over positions j of kweight(j, d) V(j, e): chunks
/// of `chunk` positions reduce in parallel (rfactor) into partials. Each
/// task computes the softmax weights of its chunk of K itself (the m x dk
/// weights are never written to memory), then its partial (`partial`, per
/// task, in L1) block by block of `positionBlock` positions: per block, in
/// register tiles of tileRows features x dv (`blockTile`, a second
/// rfactor), each tile added into the partial. A register tile covers
/// every position of its block, so the rows of V a block reads stay in L1
/// for all dk / tileRows tiles; and V streams in from memory while the
/// tiles compute, block by block, instead of in one burst per chunk (when
/// each tile ran over the whole chunk, the first tile waited on memory and
/// the others on nothing). The tiles are small constant-size buffers that
/// LLVM keeps in registers (a root buffer would be loaded and stored at
/// every position). `ksumPartial` (the chunk partials of the softmax
/// denominators, if any) is fused into the same task with compute_with: it
/// reads the chunk's weights the context already computed, so exp runs
/// once per element of K instead of twice and K is read twice (kmax, this
/// pass) instead of three times.
ChunkedProduct mlir::attn::codegen::scheduleChunkedProduct(
    Func product, const Halide::RDom &rj, const Halide::Expr &cols,
    const Halide::Expr &rows, int vector, const ScheduleContext &ctx,
    const Func &streamed, bool streamedByRows) {
  SplitChoice colSplit = chooseSplit(cols, vector);
  SplitChoice rowSplit =
      chooseSplit(rows, std::max(1, ctx.params.chunkedProduct.tileRows));
  // bf16 pairs (rj is (position in pair, pair)): chunks of chunk / 2 pairs.
  bool pairs = rj.dimensions() == 2;
  Halide::RVar stepOver = pairs ? rj.y : rj.x;
  auto positions = Halide::Internal::as_const_int(stepOver.extent());
  int chunk = std::max(1, ctx.params.chunkedProduct.chunk);
  if (pairs && chunk % 2 != 0)
    return {};
  chunk /= pairs ? 2 : 1;
  if (!colSplit.isStatic || !rowSplit.isStatic || !positions ||
      *positions < 2 * chunk)
    return {};
  product.compute_root();
  std::vector<Var> args = product.args(); // e, d, b...
  Var e = args[0], d = args[1];
  Halide::RVar chunkOuter("chunk_outer"), chunkInner("chunk_inner");
  Var u = chunkLoop(product);
  Func partial = product.update()
                     .split(stepOver, chunkOuter, chunkInner, chunk,
                            TailStrategy::GuardWithIf)
                     .rfactor(chunkOuter, u);
  ChunkedProduct chunked = tileChunkPartial(
      partial, chunkInner, u, chunk, rows, cols, vector, ctx, streamed,
      streamedByRows, pairs ? std::optional<Halide::RVar>(rj.x) : std::nullopt);
  // The merge of the chunks' partials, in parallel over rows (one thread
  // summing 256 partials of 8 KiB took 0.3 ms).
  product.update()
      .reorder(e, chunkOuter, d)
      .vectorize(e, vector, TailStrategy::GuardWithIf)
      .parallel(d);
  return chunked;
}

static void scheduleContext(OpStages &op, const ScheduleContext &ctx,
                            int vector, Func ksumPartial) {
  Func context = op.stages.at("context");
  Halide::RDom rj = op.domains.at("context");
  size_t rank = op.result.rank();
  Func kexp;
  if (op.stages.count("kexp"))
    kexp = op.stages.at("kexp");
  ChunkedProduct chunked = scheduleChunkedProduct(
      context, rj, op.result.shape[rank - 1], op.domains.at("acc").x.extent(),
      vector, ctx, op.stages.at("value"));
  if (!chunked.tiles.defined()) {
    schedulePositionReduction(context, rj, ctx);
    if (kexp.defined()) {
      // The denominators get their own inlined copy of the weights.
      kexp.clone_in(ksumPartial.defined() ? ksumPartial
                                          : op.stages.at("ksum"));
      kexp.compute_root().vectorize(kexp.args()[0], vector,
                                    TailStrategy::GuardWithIf);
    }
    return;
  }
  Func tiles = chunked.tiles;
  Var u = chunked.u;
  if (!kexp.defined())
    return;
  // One task per chunk computes the chunk's weights once, then both the
  // context partial and the denominator partial from them. Both partials
  // split the same positions into the same chunks, so their chunk loops
  // (outermost, parallel) fuse.
  kexp.compute_at(tiles, u).vectorize(kexp.args()[0], vector,
                                      TailStrategy::GuardWithIf);
  if (ksumPartial.defined()) {
    fuseChunkPartial(ksumPartial, op.domains.at("acc").x.extent(), tiles, u,
                     vector);
  } else {
    kexp.clone_in(op.stages.at("ksum"));
  }
}

/// The update of `stat` (feature, ...) over `positions`, features in
/// vectors innermost. When the features are a few whole vectors, their
/// loop is unrolled so LLVM keeps each vector's accumulator in a register:
/// otherwise every position loads the previous one's result back from the
/// stack, a store-to-load chain that cost more per position than the
/// position's exponentials.
static void accumulateFeaturesInRegisters(Func stat, Var feature,
                                          Halide::RVar positions,
                                          const Halide::Expr &features,
                                          int vector) {
  auto count = Halide::Internal::as_const_int(features);
  if (!count || *count % vector != 0 ||
      *count / vector > kMaxRegisterAccumulators) {
    stat.update().reorder(feature, positions).vectorize(
        feature, vector, TailStrategy::GuardWithIf);
    return;
  }
  Var vectors(feature.name() + "_vectors"), lanes(feature.name() + "_lanes");
  stat.update()
      .split(feature, vectors, lanes, vector)
      .reorder(lanes, vectors, positions)
      .vectorize(lanes)
      .unroll(vectors);
}

/// attn.efficient's softmax over positions in chunks (AlgorithmEfficient.cpp,
/// AlgorithmOptions::efficientChunk): one parallel task per chunk computes
/// the chunk's max, its weights (once, in L2), then its context partial
/// (tileChunkPartial) and its sums from them, so K is read once; wrappers
/// fused with the task (compute_with) copy the chunk's sums and max out.
/// The merges over the chunks are small and run at root.
static void scheduleSoftmaxChunks(OpStages &op, const ScheduleContext &ctx,
                                  int vector) {
  Func contextChunk = op.stages.at("chunk_context");
  Halide::RDom rc = op.domains.at("chunk_context");
  Halide::RDom positions = op.domains.at("chunk_positions");
  Halide::RDom chunks = op.domains.at("chunks");
  Var c = contextChunk.args()[2]; // e, d, c, b...
  size_t rank = op.result.rank();
  bool pairs = op.info.at("bf16Products");
  // bf16 pairs: rc is (position in pair, pair), V packed per task.
  Halide::RVar stepOver = pairs ? rc.y : rc.x;
  int chunk =
      static_cast<int>(*Halide::Internal::as_const_int(stepOver.extent()));
  auto valuePairs = op.stages.find("valuePairs");
  // dk (in pairs, the final product's domain is (feature in pair, pair)).
  Halide::Expr features = pairs ? op.domains.at("qsum").x.extent()
                                : op.domains.at("acc").x.extent();
  ChunkedProduct tasks = tileChunkPartial(
      contextChunk, stepOver, c, chunk, features, op.result.shape[rank - 1],
      vector, ctx, pairs ? valuePairs->second : op.stages.at("value"),
      /*streamedByRows=*/true,
      pairs ? std::optional<Halide::RVar>(rc.x) : std::nullopt);
  Func tiles = tasks.tiles;
  Func kmaxChunk = op.stages.at("chunk_max");
  Func ksumChunk = op.stages.at("chunk_sum");
  Func kexp = op.stages.at("kexp");
  // In the task: the chunk's max (positions outer, features in vectors),
  // then its weights.
  Var d = kmaxChunk.args()[0];
  kmaxChunk.compute_at(tiles, c).vectorize(d, vector,
                                           TailStrategy::GuardWithIf);
  accumulateFeaturesInRegisters(kmaxChunk, d, positions.x, features, vector);
  kexp.compute_at(tiles, c);
  if (pairs) {
    // The chunk's weights and rows of V, each pair of positions
    // interleaved, in the task (in L2): V streams in once, in order.
    vectorizePairs(kexp, vector);
    valuePairs->second.compute_at(tiles, c);
    vectorizePairs(valuePairs->second, vector);
  } else {
    kexp.vectorize(kexp.args()[0], vector, TailStrategy::GuardWithIf);
  }
  // Out of the task: the sums, and a copy of the max for the merges (kexp
  // reads the task's own). Fused after the task's context partial.
  Func rescale = op.stages.at("rescale"), kmax = op.stages.at("kmax");
  Func maxima = kmaxChunk.in({kmax, rescale});
  Func sums = ksumChunk.in();
  for (Func copy : {maxima, sums}) {
    copy.compute_root().vectorize(copy.args()[0], vector,
                                  TailStrategy::GuardWithIf);
    parallelFrom(copy, c); // the chunk and batch loops, as in the tasks
    copy.compute_with(tiles, c);
  }
  ksumChunk.compute_at(sums, c).vectorize(d, vector,
                                          TailStrategy::GuardWithIf);
  accumulateFeaturesInRegisters(ksumChunk, d, positions.x, features, vector);
  // The merges: per feature (vectors of features), the context's in
  // parallel over features.
  for (const char *role : {"kmax", "ksum"}) {
    Func merge = op.stages.at(role);
    Var feature = merge.args()[0];
    merge.compute_root().vectorize(feature, vector,
                                   TailStrategy::GuardWithIf);
    merge.update().reorder(feature, chunks.x).vectorize(
        feature, vector, TailStrategy::GuardWithIf);
  }
  rescale.compute_root().vectorize(rescale.args()[0], vector,
                                   TailStrategy::GuardWithIf);
  Func context = op.stages.at("context");
  std::vector<Var> args = context.args(); // e, d, b...
  context.compute_root().vectorize(args[0], vector, TailStrategy::GuardWithIf);
  context.update()
      .reorder(args[0], chunks.x, args[1])
      .vectorize(args[0], vector, TailStrategy::GuardWithIf)
      .parallel(args[1]);
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
  TiledProduct product = scheduleTiledProduct(
      out, op.stages.at("acc"), op.domains.at("acc"), op.result.shape[rank - 1],
      op.result.shape[rank - 2], ctx.vectorWidth(p.vectorWidth, op.result.type),
      p.tileVectors, p.tileRows, p.blockRows, ctx);
  Var task = product.task;
  Func ksumPartial;
  if (op.info.at("softmax")) {
    // Per-query softmax over dk, per output block: the block's weights
    // stay in L1 and are never written to memory.
    Func qexp = op.stages.at("qexp");
    qexp.compute_at(out, task).vectorize(qexp.args()[0], vector,
                                         TailStrategy::GuardWithIf);
    // The row max: a static row is one vector reduction (its vectors
    // maxed, then its lanes by halves: addLaneReductionLoweringFix); 9
    // instructions fewer per row than two stages through a lanes buffer
    // (5% of the kernel at n = 65536). (Halves as rfactor stages, row by
    // row, measured 1.17x slower at n = 4096.) A dynamic one is a serial
    // loop.
    Func qmax = op.stages.at("qmax");
    qmax.compute_at(out, task);
    if (Halide::Internal::as_const_int(op.domains.at("qmax").x.extent()))
      qmax.update().atomic().vectorize(op.domains.at("qmax").x);
    Func qsum = op.stages.at("qsum"), qinv = op.stages.at("qinv");
    // (bf16 pairs: the sums have a domain of their own.)
    bool pairs = op.info.at("bf16Products");
    if (product.registerTile && !pairs) {
      // The row sums in the product's loop over dk (compute_with; the
      // algorithm gives both the same domain): one scalar add per row and
      // feature on the adder pipes, next to the FMAs, on the weight the
      // FMAs broadcast anyway, instead of a pass of loads, adds and a
      // horizontal add per row (9% of the kernel at n = 65536).
      Var row = qsum.args()[0];
      Halide::RVar features = op.domains.at("acc").x;
      qsum.compute_at(*product.registerTile).unroll(row);
      qsum.update().reorder(row, features).unroll(row).compute_with(
          op.stages.at("acc").update(), features);
      qinv.compute_at(*product.registerTile).unroll(qinv.args()[0]);
    } else {
      scheduleRowStatistic(qsum, op.domains.at("qsum"), out, task, vector);
      qinv.compute_at(out, task).vectorize(qinv.args()[0], vector,
                                           TailStrategy::GuardWithIf);
    }
    Func norm = op.stages.at("context_norm");
    std::vector<Var> nArgs = norm.args();
    norm.compute_root();
    if (pairs)
      vectorizePairs(norm, vector);
    else
      norm.vectorize(nArgs[0], vector, TailStrategy::GuardWithIf);
    if (op.info.at("chunked")) {
      scheduleSoftmaxChunks(op, ctx, vector);
      return;
    }
    // Per-feature softmax over the m positions: kmax is its own pass;
    // the denominators are reduced together with the context
    // (scheduleContext).
    schedulePositionReduction(op.stages.at("kmax"), op.domains.at("kmax"), ctx);
    // In the context's chunks (scheduleContext fuses the two).
    ksumPartial =
        schedulePositionReduction(op.stages.at("ksum"), op.domains.at("kmax"),
                                  ctx, ctx.params.chunkedProduct.chunk);
  }
  scheduleContext(op, ctx, vector, ksumPartial);
}
