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
  LoopLevel perChunk(op.stages.at("kvacc"), chunkLoop);
  scheduleProductTile(op.stages.at("pT"), op.stages.at("dotT"),
                      op.domains.at("dotT").x, perChunk, n, m, vector, p);
  scheduleProductTile(op.stages.at("dpT"), op.stages.at("dpTacc"),
                      op.domains.at("dpTacc").x, perChunk, n, m, vector, p);
  Func dST = op.stages.at("dsT");
  dST.compute_at(perChunk).vectorize(dST.args()[0], vector,
                                     TailStrategy::GuardWithIf);
  op.form += "; P and dP per chunk of " + std::to_string(chunk.factor) +
             " queries";
}
