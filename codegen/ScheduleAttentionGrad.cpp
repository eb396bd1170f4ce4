//===- ScheduleAttentionGrad.cpp - The fused softmax backward -------------===//
//
// attn.attention_grad's two passes (AlgorithmAttention.cpp):
//
// Row pass: blocks of query rows in parallel. Per block, its scores and dP
// (rows x m, register-tiled products over the transposed K and V copies),
// the row statistics (max, exp sum, rowsum(P dP)) and the exponentials are
// computed into buffers the size of AttentionGradParams::rowBlockBytes (in
// L2), then dQ = dS K accumulates over chunks of keys in register tiles.
//
// Key pass: blocks of keyBlock keys in parallel. The block's accumulator
// [dK dV] (keyBlock x (dk + dv), in L1) is updated one chunk of queryChunk
// queries at a time: the chunk's P and dP (keyBlock x queryChunk, from the
// row log-sum-exp, so nothing spans a row) are computed first, then every
// register tile of the accumulator reads them.
//
// One pass (saved lse and output): per batch index in parallel, key block
// J, query block I; the block's P, dP and dS feed [dK dV]_J and dQ_I, whose
// two update loops compute_with fuses at I.
//
//===----------------------------------------------------------------------===//

#include "codegen/Schedule.h"

#include <algorithm>

using namespace mlir::attn::codegen;
using Halide::Func;
using Halide::LoopLevel;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

namespace {

/// out(c, r, b...) = a product acc(c, r, b...) over `k`, computed at `at`
/// for the rows and columns it needs there: register tiles of tileRows rows
/// x tileVectors vectors, acc in registers (static sizes), else one row at
/// a time vectorized with a guarded tail.
void scheduleProductTile(Func out, Func acc, RVar k, LoopLevel at,
                         const Halide::Expr &cols, const Halide::Expr &rows,
                         int vector, const AttentionGradParams &p) {
  out.compute_at(at);
  std::vector<Var> args = out.args(), accArgs = acc.args();
  SplitChoice colTile = chooseSplit(cols, vector * p.tileVectors);
  SplitChoice rowTile = chooseSplit(rows, p.tileRows);
  if (colTile.isStatic && rowTile.isStatic) {
    int width = dividingWidth(colTile.factor, vector);
    Var co("co"), ci("ci"), ro("ro"), ri("ri");
    out.split(args[0], co, ci, colTile.factor, TailStrategy::ShiftInwards)
        .split(args[1], ro, ri, rowTile.factor, TailStrategy::ShiftInwards)
        .reorder(ci, ri, ro, co)
        .vectorize(ci, width)
        .unroll(ri);
    acc.compute_at(out, ro).vectorize(accArgs[0], width).unroll(accArgs[1]);
    acc.update()
        .reorder(accArgs[0], accArgs[1], k)
        .vectorize(accArgs[0], width)
        .unroll(accArgs[0])
        .unroll(accArgs[1]);
    return;
  }
  out.vectorize(args[0], vector, TailStrategy::GuardWithIf);
  acc.compute_at(out, args[1])
      .vectorize(accArgs[0], vector, TailStrategy::GuardWithIf);
  acc.update().reorder(accArgs[0], k).vectorize(accArgs[0], vector,
                                                 TailStrategy::GuardWithIf);
}

/// acc(c, r, b...), an update over `k` computed at `at`, over chunks of
/// `chunk` entries of k (the chunk loop outermost, so a chunk's operands
/// stay in L1 for every tile), in register tiles of tileRows rows x
/// tileVectors vectors whose column tiles are unrolled too (so a column
/// select on a static tile resolves at compile time). Returns the chunk
/// loop, where per-chunk producers can be computed.
RVar scheduleChunkedAccumulator(Func acc, RVar k, LoopLevel at,
                                const Halide::Expr &cols,
                                const Halide::Expr &rows, int chunk,
                                int vector, const AttentionGradParams &p) {
  std::vector<Var> args = acc.args();
  acc.compute_at(at).vectorize(args[0], vector, TailStrategy::GuardWithIf);
  SplitChoice colTile = chooseSplit(cols, vector * p.tileVectors);
  SplitChoice rowTile = chooseSplit(rows, p.tileRows);
  RVar ko(k.name() + "o"), ki(k.name() + "i");
  if (!colTile.isStatic || !rowTile.isStatic) {
    acc.update()
        .split(k, ko, ki, chunk, TailStrategy::GuardWithIf)
        .reorder(args[0], ki, args[1], ko)
        .vectorize(args[0], vector, TailStrategy::GuardWithIf);
    return ko;
  }
  int width = dividingWidth(colTile.factor, vector);
  Var co("co"), ci("ci"), ro("ro"), ri("ri");
  auto tiles = Halide::Internal::as_const_int(cols);
  Halide::Stage update = acc.update();
  update.split(k, ko, ki, chunk, TailStrategy::GuardWithIf)
      .split(args[0], co, ci, colTile.factor, TailStrategy::GuardWithIf)
      .split(args[1], ro, ri, rowTile.factor, TailStrategy::GuardWithIf)
      .reorder(ci, ri, ki, co, ro, ko)
      .vectorize(ci, width)
      .unroll(ci)
      .unroll(ri);
  // At most 8 column tiles (dk + dv <= 512 at 4 vectors): unrolled.
  if (tiles && *tiles % colTile.factor == 0 && *tiles / colTile.factor <= 8)
    update.unroll(co);
  return ko;
}

/// The key-side P, dP and dS (keys x queries, queries innermost) at `at`
/// for the `cols` queries and `rows` keys they are needed for there: P and
/// dP in register tiles, dS vectorized over the queries.
void scheduleKeyScores(OpStages &op, const LoopLevel &at,
                       const Halide::Expr &cols, const Halide::Expr &rows,
                       int vector, const AttentionGradParams &p) {
  scheduleProductTile(op.stages.at("pT"), op.stages.at("dotT"),
                      op.domains.at("dotT").x, at, cols, rows, vector, p);
  scheduleProductTile(op.stages.at("dpT"), op.stages.at("dpTacc"),
                      op.domains.at("dpTacc").x, at, cols, rows, vector, p);
  Func dST = op.stages.at("dsT");
  dST.compute_at(at).vectorize(dST.args()[0], vector,
                               TailStrategy::GuardWithIf);
}

/// Rows of `f`(c, r, b...) in blocks of `blockRows` in parallel with its
/// columns vectorized; returns the parallel task loop.
Var scheduleBlocks(Func f, const Halide::Expr &rows, int blockRows,
                   int vector, std::string &form, const char *what) {
  std::vector<Var> args = f.args();
  SplitChoice block = chooseSplit(rows, blockRows);
  Var blockVar(f.name() + "_block"), inner(f.name() + "_row");
  f.compute_root()
      .split(args[1], blockVar, inner, block.factor, block.tail)
      .vectorize(args[0], vector, TailStrategy::GuardWithIf);
  form += std::string(": ") + what + std::to_string(block.factor) +
          (block.isStatic ? "" : " (dynamic)") +
          ", each (block, batch index) a parallel task";
  return parallelOuter(f, blockVar, 2);
}

} // namespace

void mlir::attn::codegen::scheduleAttentionGradRows(OpStages &op,
                                                    const ScheduleContext &ctx) {
  const AttentionGradParams &p = ctx.params.attentionGrad;
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  Func out = op.result.func; // x, i, b...
  size_t rank = op.result.rank();
  Halide::Expr n = op.result.shape[rank - 2];
  Halide::Expr m = op.domains.at("dqacc").x.extent();
  Halide::Expr dk = op.domains.at("dot").x.extent();
  // Rows per block: the three rows x m buffers fit rowBlockBytes.
  int64_t keys = op.info.at("keys");
  int64_t rowBytes = 3 * std::max<int64_t>(keys, 1024) * op.result.type.bytes();
  int blockRows = static_cast<int>(std::clamp<int64_t>(
      p.rowBlockBytes / rowBytes / p.tileRows * p.tileRows, p.tileRows, 64));
  Var task = scheduleBlocks(out, n, blockRows, vector, op.form,
                            "query blocks of ");
  LoopLevel block(out, task);
  scheduleTransposedCopy(op.stages.at("keyT"), vector, keys);
  scheduleTransposedCopy(op.stages.at("valueT"), vector, keys);
  scheduleProductTile(op.stages.at("scores"), op.stages.at("dot"),
                      op.domains.at("dot").x, block, m, n, vector, p);
  scheduleProductTile(op.stages.at("dp"), op.stages.at("dpacc"),
                      op.domains.at("dpacc").x, block, m, n, vector, p);
  // The row max and exp sum, unless the forward saved the log-sum-exp.
  bool savedLse = !op.stages.count("max");
  if (!savedLse)
    scheduleRowMax(op.stages.at("maxlanes"), op.stages.at("max"),
                   op.domains.at("rl"), block, vector);
  Func num = op.stages.at("num");
  num.compute_at(block).vectorize(num.args()[0], vector,
                                  TailStrategy::GuardWithIf);
  if (!savedLse)
    scheduleRowStatistic(op.stages.at("den"), op.domains.at("den"), out, task,
                         vector);
  scheduleRowStatistic(op.stages.at("rowdot"), op.domains.at("rowdot"), out,
                       task, vector);
  RVar keyChunk = scheduleChunkedAccumulator(
      op.stages.at("dqacc"), op.domains.at("dqacc").x, block, dk, n,
      ctx.params.attention.valueKeyChunk, vector, p);
  Func dS = op.stages.at("ds");
  dS.compute_at(op.stages.at("dqacc"), keyChunk)
      .vectorize(dS.args()[0], vector, TailStrategy::GuardWithIf);
}

void mlir::attn::codegen::scheduleAttentionGradKeys(OpStages &op,
                                                    const ScheduleContext &ctx) {
  const AttentionGradParams &p = ctx.params.attentionGrad;
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  Func out = op.result.func; // x, j, b...
  size_t rank = op.result.rank();
  Halide::Expr m = op.result.shape[rank - 2], cols = op.result.shape[rank - 1];
  Halide::Expr n = op.domains.at("kvacc").x.extent();
  Var task = scheduleBlocks(out, m, p.keyBlock, vector, op.form,
                            "key blocks of ");
  LoopLevel block(out, task);
  for (const char *role : {"lse", "delta"}) {
    Func f = op.stages.at(role);
    f.compute_root().vectorize(f.args()[0], vector, TailStrategy::GuardWithIf);
  }
  int64_t queries = op.info.at("queries");
  scheduleTransposedCopy(op.stages.at("queryT"), vector, queries);
  scheduleTransposedCopy(op.stages.at("cotangentT"), vector, queries);
  if (op.stages.count("maskT")) // the mask by keys, once for every head
    scheduleTransposedCopy(op.stages.at("maskT"), vector, queries);
  SplitChoice chunk = chooseSplit(n, p.queryChunk);
  RVar chunkLoop = scheduleChunkedAccumulator(
      op.stages.at("kvacc"), op.domains.at("kvacc").x, block, cols, m,
      chunk.factor, vector, p);
  scheduleKeyScores(op, LoopLevel(op.stages.at("kvacc"), chunkLoop), n, m,
                    vector, p);
  op.form += "; P and dP per chunk of " + std::to_string(chunk.factor) +
             " queries";
}

namespace {

/// Columns per register tile of a one-pass block product over `cols`
/// columns whose first `split` are one kind (dK) and the rest another (dV):
/// the widest of tileVectors..1 vectors dividing both, so no tile straddles
/// the two and its select resolves at compile time; else one vector.
int blockTileColumns(int64_t split, int64_t cols, int vector,
                     const AttentionGradParams &p) {
  for (int vectors = std::max(1, p.tileVectors); vectors > 1; vectors /= 2) {
    int width = vector * vectors;
    if (split % width == 0 && cols % width == 0)
      return width;
  }
  return vector;
}

/// out(c, r, blk, b...) = acc over its RDom (`k`), a block of `cols`
/// columns computed at `at`: register tiles of `tileCols` columns (vectors,
/// unrolled) x tileRows rows, acc per tile in registers.
void scheduleBlockProduct(Func out, Func acc, RVar k, const LoopLevel &at,
                          int64_t cols, int tileCols, int vector,
                          const AttentionGradParams &p) {
  std::vector<Var> args = out.args(), accArgs = acc.args();
  Var co(out.name() + "_co"), ci(out.name() + "_ci"), ro(out.name() + "_ro"),
      ri(out.name() + "_ri");
  out.compute_at(at)
      .split(args[0], co, ci, tileCols, TailStrategy::RoundUp)
      .split(args[1], ro, ri, p.tileRows, TailStrategy::RoundUp)
      .reorder(ci, ri, co, ro)
      .vectorize(ci, vector)
      .unroll(ri);
  // The column tiles unrolled (at most 8): a tile's select between dK and
  // dV then resolves at compile time, and its loads are dense.
  if ((cols + tileCols - 1) / tileCols <= 8)
    out.unroll(co);
  acc.compute_at(out, co)
      .vectorize(accArgs[0], vector)
      .unroll(accArgs[0])
      .unroll(accArgs[1]);
  acc.update()
      .reorder(accArgs[0], accArgs[1], k)
      .vectorize(accArgs[0], vector)
      .unroll(accArgs[0])
      .unroll(accArgs[1]);
}

/// The pure batch args of `stage` (args from index 2 on) fused into one
/// parallel loop named `name`; a stage without batch args stays serial.
void parallelBatch(Halide::Stage stage, const std::vector<Var> &args,
                   const std::string &name) {
  if (args.size() <= 2)
    return;
  Var fused = args[2];
  for (size_t a = 3; a < args.size(); ++a) {
    Var next(name + "_" + std::to_string(a));
    stage.fuse(fused, args[a], next);
    fused = next;
  }
  stage.parallel(fused);
}

} // namespace

void mlir::attn::codegen::scheduleAttentionGradOnePass(
    OpStages &op, const ScheduleContext &ctx) {
  const AttentionGradParams &p = ctx.params.attentionGrad;
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  int64_t dk = op.info.at("dk"), keyBlock = op.info.at("keyBlock");
  Func keys = op.result.func; // x, j, b...
  std::string form;
  scheduleBlocks(keys, op.result.shape[op.result.rank() - 2],
                 static_cast<int>(keyBlock), vector, form, "key blocks of ");
  for (const char *role : {"lse", "delta"}) {
    Func f = op.stages.at(role);
    f.compute_root().vectorize(f.args()[0], vector, TailStrategy::GuardWithIf);
  }
  Func delta = op.stages.at("delta");
  delta.update()
      .reorder(delta.args()[0], op.domains.at("delta").x)
      .vectorize(delta.args()[0], vector, TailStrategy::GuardWithIf);
  int64_t queries = op.info.at("queries");
  scheduleTransposedCopy(op.stages.at("queryT"), vector, queries);
  scheduleTransposedCopy(op.stages.at("cotangentT"), vector, queries);
  if (op.stages.count("maskT"))
    scheduleTransposedCopy(op.stages.at("maskT"), vector, queries);

  // The two accumulations, fused: per batch index (in parallel), key block
  // J, query block I; kv's body (dK and dV of block J from block I) then
  // dq's (dQ of block I from block J).
  Func kv = op.stages.at("kv"), dq = op.stages.at("dq");
  Halide::RDom rk = op.domains.at("kv"), rq = op.domains.at("dq");
  std::vector<Var> kvArgs = kv.args(), dqArgs = dq.args(); // c|x, j|i, b...
  std::string batchName = op.name + "_batch";
  for (Func f : {kv, dq}) {
    std::vector<Var> args = f.args();
    f.compute_root().vectorize(args[0], vector, TailStrategy::GuardWithIf);
    parallelBatch(f, args, batchName + "_init");
  }
  Halide::Stage kvUpdate = kv.update(), dqUpdate = dq.update();
  std::vector<Halide::VarOrRVar> kvOrder = {kvArgs[0], rk.x, rk.y, rk.z},
                                 dqOrder = {dqArgs[0], rq.x, rq.y, rq.z};
  for (size_t a = 2; a < kvArgs.size(); ++a) {
    kvOrder.push_back(kvArgs[a]);
    dqOrder.push_back(dqArgs[a]);
  }
  kvUpdate.reorder(kvOrder).vectorize(kvArgs[0], vector,
                                      TailStrategy::GuardWithIf);
  dqUpdate.reorder(dqOrder).vectorize(dqArgs[0], vector,
                                      TailStrategy::GuardWithIf);
  parallelBatch(kvUpdate, kvArgs, batchName);
  parallelBatch(dqUpdate, dqArgs, batchName);
  dqUpdate.compute_with(kvUpdate, rk.y);

  // Per (J, I) block: P and dP (key tiles x query vectors), dS, then the
  // two block products that read them.
  LoopLevel block(kv, rk.y);
  scheduleKeyScores(op, block, static_cast<int>(op.info.at("queryBlock")),
                    static_cast<int>(keyBlock), vector, p);
  int64_t kvCols = op.info.at("kvCols");
  scheduleBlockProduct(op.stages.at("kvblock"), op.stages.at("kvblockacc"),
                       op.domains.at("kvblockacc").x, block, kvCols,
                       blockTileColumns(dk, kvCols, vector, p), vector, p);
  scheduleBlockProduct(op.stages.at("dqblock"), op.stages.at("dqblockacc"),
                       op.domains.at("dqblockacc").x, LoopLevel(dq, rq.y), dk,
                       blockTileColumns(dk, dk, vector, p), vector, p);
  op.form += "; " + form.substr(2);
}
