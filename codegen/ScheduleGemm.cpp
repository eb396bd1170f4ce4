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

/// An operand (`role`: "lhs" or "rhs"), when another op computes it and
/// that op is inlined (an elementwise op such as elu + 1), is evaluated
/// once per element a block or chunk reads, vectorized, in that block's
/// task: inlined, it was a scalar computation per broadcast of the register
/// tile (elu's exp once per element, in scalar code), or, for the rhs of a
/// chunked product, once per register tile of rows. The lhs blocks of a
/// tiled product partition it, so nothing is computed twice; its rhs is
/// read whole by every block, so only a chunked product (whose chunks
/// partition both operands) computes its rhs per task.
static void computeOperandPerTask(OpStages &op, const char *role,
                                  const ScheduleContext &ctx,
                                  const std::vector<Halide::Func> &consumers,
                                  Halide::LoopLevel task, int vector) {
  auto operand = op.stages.find(role);
  if (operand == op.stages.end() || !ctx.inlined.count(operand->second.name()))
    return;
  // (in(Func) names the wrapper <operand>_in_<consumer>; in(vector) names
  // it <operand>_wrapper.)
  Halide::Func perTask = consumers.size() == 1
                             ? operand->second.in(consumers[0])
                             : operand->second.in(consumers);
  perTask.compute_at(task).vectorize(perTask.args()[0], vector,
                                     Halide::TailStrategy::GuardWithIf);
}

static void computeLhsPerTask(OpStages &op, const ScheduleContext &ctx,
                              const std::vector<Halide::Func> &consumers,
                              Halide::LoopLevel task, int vector) {
  computeOperandPerTask(op, "lhs", ctx, consumers, task, vector);
}

/// The rhs copied per block and column tile into a contiguous panel
/// (scheduleTiledProduct), or an undefined Func where that does not pay:
/// with a single column tile the tile reads the rhs rows in order and the
/// copy is pure overhead (linear attention's Q context, dv = 64: 6.1
/// against 5.7 ms at n = 65536). With several tiles, a rhs row stride that
/// is a multiple of 4 KiB put a column panel on a few cache sets, so every
/// row tile read it from L3 (1024^3: 22.3 -> 9.0 ms). A transposed rhs of
/// several columns is always packed, from a transposed copy of it, so the
/// tile's loads are contiguous instead of strided (1024^3: 130 -> 9.6 ms).
static Halide::Func rhsPanel(OpStages &op, const GemmParams &p,
                             const Halide::Expr &cols, const Halide::Expr &rows,
                             int vector) {
  auto staticCols = Halide::Internal::as_const_int(cols);
  // Only the register-tiled schedule (static sizes) has column tiles; bf16
  // pairs read a packed copy of the rhs already (schedulePairs).
  if (!p.packRhs || !staticCols || !Halide::Internal::as_const_int(rows) ||
      op.info.at("bf16Pairs"))
    return {};
  bool transposed = op.info.at("transposeRhs");
  // One column (a matrix-vector product) has no column loads to make
  // contiguous.
  if (*staticCols <= 1 ||
      (!transposed && *staticCols <= vector * std::max(1, p.tileVectors)))
    return {};
  Halide::Func panel = op.stages.at("rhs").in(op.stages.at("acc"));
  if (transposed) {
    // The whole rhs transposed once, at root, in tiles of vector x vector;
    // the panels then copy contiguous rows of it. (Each block's panels
    // gathering from the rhs itself took 14.1 ms at 1024^3, against 9.6.)
    Halide::Func whole = op.stages.at("rhs").in(panel);
    std::vector<Halide::Var> wholeArgs = whole.args(); // k, j, b...
    Halide::Var kOuter("k_outer"), kInner("k_inner"), jOuter("j_outer"),
        jInner("j_inner");
    whole.compute_root()
        .reorder_storage(wholeArgs[1], wholeArgs[0])
        .split(wholeArgs[1], jOuter, jInner, vector,
               Halide::TailStrategy::GuardWithIf)
        .split(wholeArgs[0], kOuter, kInner, vector,
               Halide::TailStrategy::GuardWithIf)
        .reorder(jInner, kInner, jOuter, kOuter)
        .unroll(kInner)
        .vectorize(jInner)
        .parallel(kOuter);
  }
  std::vector<Halide::Var> args = panel.args(); // rhs dims, Halide order
  // The product's columns (j) innermost in storage and in the copy loop.
  Halide::Var column = transposed ? args[1] : args[0];
  Halide::Var inner = transposed ? args[0] : args[1];
  panel.reorder_storage(column, inner)
      .reorder(column, inner)
      .vectorize(column, vector, Halide::TailStrategy::GuardWithIf);
  return panel;
}

/// A product in bf16 pairs (lowerMatmul) reads its operands packed as
/// (pair of k, row or column, 2): each computed at `lhsAt` / `rhsAt`,
/// interleaved by vectorizePairs. Returns the Funcs that read the operands
/// themselves (the packed copies), for computeOperandPerTask.
static std::pair<Halide::Func, Halide::Func>
schedulePairs(OpStages &op, Halide::LoopLevel lhsAt, Halide::LoopLevel rhsAt,
              int vector) {
  Halide::Func lhsPairs = op.stages.at("lhsPairs");
  Halide::Func rhsPairs = op.stages.at("rhsPairs");
  lhsPairs.compute_at(lhsAt);
  rhsPairs.compute_at(rhsAt);
  vectorizePairs(lhsPairs, vector);
  vectorizePairs(rhsPairs, vector);
  return {lhsPairs, rhsPairs};
}

bool mlir::attn::codegen::canFuseIntoEpilogue(const OpStages &product,
                                              const ScheduleContext &ctx) {
  size_t rank = product.result.rank();
  auto rows = Halide::Internal::as_const_int(product.result.shape[rank - 2]);
  // At most one block of rows: scheduleGemm may reduce it in chunks.
  return !rows || *rows > ctx.params.gemm.blockRows;
}

bool mlir::attn::codegen::reducesInChunks(const OpStages &product,
                                          const ScheduleContext &ctx) {
  size_t rank = product.result.rank();
  auto rows = Halide::Internal::as_const_int(product.result.shape[rank - 2]);
  auto cols = Halide::Internal::as_const_int(product.result.shape[rank - 1]);
  const Halide::RDom &k = product.domains.at("acc");
  auto positions = Halide::Internal::as_const_int(
      (k.dimensions() == 2 ? k.y : k.x).extent());
  int chunk = std::max(1, ctx.params.chunkedProduct.chunk);
  return rows && cols && positions && *rows <= ctx.params.gemm.blockRows &&
         *positions >= 2 * chunk;
}

bool mlir::attn::codegen::tileSpansRows(const OpStages &product,
                                        const ScheduleContext &ctx) {
  const GemmParams &p = ctx.params.gemm;
  size_t rank = product.result.rank();
  auto rows = Halide::Internal::as_const_int(product.result.shape[rank - 2]);
  auto cols = Halide::Internal::as_const_int(product.result.shape[rank - 1]);
  int vector = ctx.vectorWidth(p.vectorWidth, product.result.type);
  return rows && cols && *cols % vector == 0 &&
         *cols <= static_cast<int64_t>(vector) * std::max(1, p.tileVectors);
}

/// An epilogue's row sum (ScheduleContext::rowSums) per register tile, from
/// the tile's values of the product: in vector lanes along the row
/// (rfactor), then one horizontal add per row. Every loop is unrolled, so
/// the tile's accumulators stay in registers (tileSpansRows: the row is a
/// few whole vectors).
static void scheduleTileRowSum(OpStages &rowSum, Halide::LoopLevel tile,
                               int vector) {
  Halide::Func sum = rowSum.stages.at("sum");
  const Halide::RDom &r = rowSum.domains.at("r");
  std::vector<Halide::Var> args = sum.args(); // row, batch...
  Halide::RVar rowVectors("row_vectors"), rowLanes("row_lanes");
  Halide::Var lane(sum.name() + "_lane");
  Halide::Func partial = sum.update()
                             .split(r.x, rowVectors, rowLanes, vector)
                             .rfactor(rowLanes, lane);
  std::vector<Halide::Var> storage = {lane};
  storage.insert(storage.end(), args.begin(), args.end());
  sum.compute_at(tile).unroll(args[0]);
  partial.compute_at(tile).reorder_storage(storage).vectorize(lane).unroll(
      args[0]);
  partial.update()
      .reorder(lane, rowVectors, args[0])
      .vectorize(lane)
      .unroll(rowVectors)
      .unroll(args[0]);
  sum.update().atomic().vectorize(rowLanes).unroll(args[0]);
}

Halide::LoopLevel
mlir::attn::codegen::scheduleProductTiles(OpStages &product, Halide::Func out,
                                          const ScheduleContext &ctx) {
  const GemmParams &p = ctx.params.gemm;
  size_t rank = product.result.rank();
  Halide::Expr rows = product.result.shape[rank - 2];
  Halide::Expr cols = product.result.shape[rank - 1];
  int vector = ctx.vectorWidth(p.vectorWidth, product.result.type);
  Halide::Func panel = rhsPanel(product, p, cols, rows, vector);
  // Blocks another loop nest shares (ScheduleContext::fixedBlocks).
  std::optional<FixedRowBlocks> blocks;
  if (auto fixed = ctx.fixedBlocks.find(out.name());
      fixed != ctx.fixedBlocks.end())
    blocks = fixed->second;
  TiledProduct tiled = scheduleTiledProduct(
      out, product.stages.at("acc"), product.domains.at("acc"), cols, rows,
      vector, p.tileVectors, p.tileRows, p.blockRows, ctx, panel, blocks);
  Halide::Var task = tiled.task;
  Halide::LoopLevel at(out, task);
  auto rowSum = ctx.rowSums.find(out.name());
  if (rowSum != ctx.rowSums.end() && tiled.registerTile)
    scheduleTileRowSum(*rowSum->second, *tiled.registerTile, vector);
  Halide::Func acc = product.stages.at("acc");
  // The lhs reader: acc, or in bf16 pairs the block's packed lhs (the
  // packed rhs, read whole by every block, is computed once).
  Halide::Func lhsReader = acc;
  if (product.info.at("bf16Pairs"))
    lhsReader =
        schedulePairs(product, at, Halide::LoopLevel::root(), vector).first;
  auto rowProduct = ctx.rowProducts.find(out.name());
  if (rowProduct == ctx.rowProducts.end()) {
    computeLhsPerTask(product, ctx, {lhsReader}, at, vector);
    return at;
  }
  // The block's values of a one-column product, each a dot product over k
  // in vector lanes whose lanes then sum by halves (when k is a multiple of
  // the vector; else a scalar loop). A row of a few vectors, a power of two
  // long, is one reduction: its vectors add first, then one tree of halves
  // (addLaneReductionLoweringFix) instead of one per vector.
  OpStages &rowSums = *rowProduct->second;
  Halide::Func rowAcc = rowSums.stages.at("acc");
  rowSums.result.func.compute_at(at);
  rowAcc.compute_at(at);
  auto depth =
      Halide::Internal::as_const_int(rowSums.domains.at("acc").x.extent());
  if (depth && *depth >= vector && *depth % vector == 0) {
    bool wholeRow = reducesAsOneVector(*depth, vector);
    rowAcc.update().atomic().vectorize(rowSums.domains.at("acc").x,
                                       wholeRow ? static_cast<int>(*depth)
                                                : vector);
  }
  // Products of the same lhs (linear attention's phi(Q)) share the block's
  // copy of it.
  auto lhs = product.stages.find("lhs"), rowLhs = rowSums.stages.find("lhs");
  if (lhs != product.stages.end() && rowLhs != rowSums.stages.end() &&
      lhs->second.name() == rowLhs->second.name()) {
    computeLhsPerTask(product, ctx, {lhsReader, rowAcc}, at, vector);
    return at;
  }
  computeLhsPerTask(product, ctx, {lhsReader}, at, vector);
  computeLhsPerTask(rowSums, ctx, {rowAcc}, at, vector);
  return at;
}

void mlir::attn::codegen::scheduleGemm(OpStages &op, ScheduleContext &ctx) {
  // Its epilogue's output tiles compute it (scheduleProductTiles).
  if (ctx.fusedProducts.count(op.name))
    return;
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
  bool pairs = op.info.at("bf16Pairs");
  if (staticRows && *staticRows <= p.blockRows) {
    // (bf16 pairs: the tiles stream the packed rhs, rows of columns.)
    ChunkedProduct chunked = scheduleChunkedProduct(
        op.stages.at("acc"), op.domains.at("acc"), cols, rows, vector, ctx,
        op.stages.at(pairs ? "rhsPairs" : "rhs"),
        pairs || !op.info.at("transposeRhs"));
    if (chunked.tiles.defined()) {
      for (const auto &[epilogue, product] : ctx.chunkCompanions)
        if (product == &op)
          ctx.companionTasks[epilogue] = chunked;
      Halide::LoopLevel task(chunked.tiles, chunked.u);
      if (auto fused = ctx.companionTaskLoops.find(op.name);
          fused != ctx.companionTaskLoops.end())
        task = fused->second;
      // In bf16 pairs each task packs its chunk of both operands (in L2),
      // and the packed copies are what read the operands.
      Halide::Func lhsReader = chunked.operandReader,
                   rhsReader = chunked.operandReader;
      if (pairs)
        std::tie(lhsReader, rhsReader) = schedulePairs(op, task, task, vector);
      std::vector<Halide::Func> lhsReaders = {lhsReader};
      auto sum = ctx.columnSums.find(op.name);
      if (sum != ctx.columnSums.end()) {
        // The sums of the lhs over the same positions (linear attention's
        // phi(K)^T 1), in the same chunks: each chunk's partial sums are
        // fused into the chunk's task (compute_with) and read the chunk's
        // copy of the lhs, which is computed once for both.
        OpStages &sumOp = *sum->second;
        Halide::Func partial = schedulePositionReduction(
            sumOp.stages.at("sum"), sumOp.domains.at("r"), ctx,
            ctx.params.chunkedProduct.chunk);
        if (partial.defined()) {
          // The sums' inner dim is the product's rows (the lhs columns).
          fuseChunkPartial(partial, rows, chunked.tiles, chunked.u, vector);
          lhsReaders.push_back(partial);
          ctx.fusedSums.insert(sumOp.name);
        }
      }
      computeLhsPerTask(op, ctx, lhsReaders, task, vector);
      // Not when the rhs is the lhs (their reader is the same wrapper).
      auto lhs = op.stages.find("lhs");
      if (lhs == op.stages.end() ||
          lhs->second.name() != op.stages.at("rhs").name())
        computeOperandPerTask(op, "rhs", ctx, {rhsReader}, task, vector);
      std::vector<Halide::Var> args = out.args();
      out.vectorize(args[0], vector, Halide::TailStrategy::GuardWithIf);
      return;
    }
  }
  scheduleProductTiles(op, out, ctx);
}
