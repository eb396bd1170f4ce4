//===- ScheduleAttention.cpp - Fused dot-product attention ----------------===//
//
// Row attention (every normalization step over keys): queries are processed
// in blocks of queryBlock rows, in parallel. Per block, the scores
// (queryBlock x m, never n x m; in L2), their statistics and weights are
// computed, then the block's output rows. Both products (Q K^T and
// weights V) use register tiles. K is copied once, transposed (keys
// innermost), so score products vectorize over keys; the key tile loop is
// outside the row tiles, so each tile of K stays in L1 for the whole block;
// likewise the key-chunk loop of weights x V, for V. Row statistics are
// vectorized (scheduleRowStatistic). With a key split (Algorithm.h,
// AlgorithmOptions::keySplit), the per-block stages run once per split of
// the keys, inside the split loop of <name>_splits, and a merge follows.
//
// Materialized attention (some step over queries, e.g. EANet's softmax over
// positions): such a step needs whole columns, so the scores are computed at
// root; column statistics are reductions over positions (rfactor, parallel
// chunks), row statistics run rows in parallel.
//
//===----------------------------------------------------------------------===//

#include "codegen/Schedule.h"

using namespace mlir::attn::codegen;
using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

/// query (d, i, b...) at root, vectorized over d, when it applies a
/// feature map (the products read each element many times), else it is
/// inlined: a copy of Q would only cost memory traffic (8 MB for external
/// attention's X at n = 4096, d = 512).
static void scheduleQuery(OpStages &op, int vector) {
  if (op.info.at("plainQuery"))
    return;
  Func query = op.stages.at("query");
  std::vector<Var> args = query.args(); // d, i, b...
  query.compute_root()
      .vectorize(args[0], vector, TailStrategy::GuardWithIf)
      .parallel(args.back());
}

/// Pads the rows of a buffer with the keys innermost when `rowLength` keys
/// are a multiple of kKeyRowPeriodBytes long. Rows a multiple of 1 KiB
/// apart fall into a quarter or less of L1's sets (4 KiB apart: the same 4
/// sets), so a loop that reads a vector of every row in turn evicted its
/// own rows: keyT's score tiles, read again by every row tile of the query
/// block (softmax attention, 8 heads, n = m = 4096: 128 -> 121 ms), and a
/// block's row sums of its scores or weights (n = m = 1024 on AVX2: the
/// sums took 1.6 of 21 ms). 256 padding bytes per row spread them.
static void padKeyRows(Func buffer, const Halide::Expr &rowLength) {
  auto keys = Halide::Internal::as_const_int(rowLength);
  int bytes = buffer.type().bytes();
  if (keys && *keys * bytes % kKeyRowPeriodBytes == 0)
    buffer.bound_storage(buffer.args()[0],
                         static_cast<int>(*keys) + kKeyRowPaddingBytes / bytes);
}

void mlir::attn::codegen::scheduleTransposedCopy(Func copy, int vector,
                                                 int64_t rowLength) {
  // Keys per block of the transposition: 4 vectors (64 f32 keys; at
  // dk = 64, 16 KiB of K rows, which stay in L1 across the features).
  constexpr int kTransposeBlockVectors = 4;
  // copy (j, d, b...) transposes K (d innermost): one block of keys at a
  // time, every feature of the block before the next, so each block's rows
  // of K are read from memory once (a feature-outer loop reads all of K
  // once per feature).
  std::vector<Var> args = copy.args();
  Var block("keyT_block"), lane("keyT_lane");
  copy.compute_root()
      .split(args[0], block, lane, vector * kTransposeBlockVectors,
             TailStrategy::GuardWithIf)
      .reorder(lane, args[1], block)
      .vectorize(lane, vector)
      .parallel(args.back());
  // A score tile reads one row of the copy per feature.
  if (rowLength > 0)
    padKeyRows(copy, Halide::Expr(rowLength));
}

/// Whether the scores reduce features in pairs of bf16 values (vdpbf16ps;
/// AlgorithmOptions::bf16DotProducts): the algorithm then gives them a 2-D
/// domain (feature in pair, pair) and packs K as keyT (pair, key, 2).
static bool scoresInBf16Pairs(const OpStages &op) {
  return op.domains.at("dot").dimensions() == 2;
}

/// Whether weights x V reduces keys in pairs of bf16 weights (the op's
/// attn.allow_bf16_products; vdpbf16ps): "acc" then has a 2-D domain (key
/// in pair, pair) and V is packed as valuePairs (2, column, pair, b...).
static bool weightsInBf16Pairs(const OpStages &op) {
  return op.domains.at("acc").dimensions() == 2;
}

/// The number of keys weights x V reduces over.
static Halide::Expr weightKeys(const OpStages &op) {
  const Halide::RDom &r = op.domains.at("acc");
  return r.dimensions() == 2 ? Halide::Internal::simplify(2 * r.y.extent())
                             : r.x.extent();
}

/// keyT (2, key, pair, b...) of the bf16 scores: blocks of keys as in
/// scheduleTransposedCopy, each key's pair of features next to each other,
/// so a vector of the copy is the 16 keys x 2 features one vdpbf16ps reads.
static void schedulePairedKeys(Func copy, int vector) {
  constexpr int kTransposeBlockVectors = 4;
  std::vector<Var> args = copy.args(); // in pair, key, pair, b...
  Var block("keyT_block"), lane("keyT_lane");
  copy.compute_root()
      .bound(args[0], 0, 2)
      .split(args[1], block, lane, vector * kTransposeBlockVectors,
             TailStrategy::GuardWithIf)
      .reorder(args[0], lane, args[2], block)
      .vectorize(args[0])
      .vectorize(lane, vector)
      .parallel(args.back());
}

/// query (scheduleQuery) and keyT (scheduleTransposedCopy) at root; with
/// `perSplit` the caller moves keyT into the split loop, and its padding
/// is per split.
static void scheduleOperands(OpStages &op, int vector, bool perSplit) {
  scheduleQuery(op, vector);
  auto valueF32 = op.stages.find("valueF32");
  if (valueF32 != op.stages.end()) {
    std::vector<Var> args = valueF32->second.args(); // e, j, b...
    valueF32->second.compute_root()
        .vectorize(args[0], vector, TailStrategy::GuardWithIf)
        .parallel(args.back());
  }
  auto valuePairs = op.stages.find("valuePairs");
  if (valuePairs != op.stages.end()) {
    // A vector is 16 columns x the pair of keys one vdpbf16ps reads.
    std::vector<Var> args = valuePairs->second.args(); // 2, e, pair, b...
    valuePairs->second.compute_root().parallel(args.back());
    vectorizePairs(valuePairs->second, vector);
  }
  if (scoresInBf16Pairs(op))
    return schedulePairedKeys(op.stages.at("keyT"), vector);
  // keyT per split holds one split's keys (scheduleRowAttention).
  auto keys = op.info.find(perSplit ? "keySplit" : "keys");
  scheduleTransposedCopy(op.stages.at("keyT"), vector,
                         keys != op.info.end() ? keys->second : 0);
}

/// f(e, i, b...), an update over `r` into rows of output columns, at `at`:
/// with `tiled`, a register tile (all of f's rows and columns unrolled, in
/// vectors of `width`, the r loop outside them); else one row, vectorized
/// by `width` with a guarded tail. A 2-D `r` is keys in bf16 pairs
/// (weightsInBf16Pairs): in a tile, each vector product reduces its pair
/// (vdpbf16ps); in a guarded row the pair stays a loop.
static void scheduleOutputTile(Func f, const Halide::RDom &r,
                               Halide::LoopLevel at, bool tiled, int width) {
  std::vector<Var> args = f.args(); // e, i, b...
  f.compute_at(at);
  if (r.dimensions() == 2) {
    if (tiled) {
      f.vectorize(args[0], width).unroll(args[1]);
      tilePairProducts(f.update(), r.x, r.y, args[0], args[1], width);
    } else {
      f.vectorize(args[0], width, TailStrategy::GuardWithIf);
      f.update()
          .reorder(args[0], r.x, r.y)
          .vectorize(args[0], width, TailStrategy::GuardWithIf);
    }
    return;
  }
  if (tiled) {
    f.vectorize(args[0], width).unroll(args[1]);
    f.update()
        .reorder(args[0], args[1], r)
        .vectorize(args[0], width)
        .unroll(args[0])
        .unroll(args[1]);
    return;
  }
  f.vectorize(args[0], width, TailStrategy::GuardWithIf);
  f.update().reorder(args[0], r).vectorize(args[0], width,
                                           TailStrategy::GuardWithIf);
}

/// Step funcs of a row-attention op (num<t>, maxlanes<t>, max<t>, den<t>).
static std::vector<std::pair<std::string, Func>> stepStages(OpStages &op) {
  std::vector<std::pair<std::string, Func>> result;
  for (auto &[role, f] : op.stages)
    if (role.rfind("num", 0) == 0 || role.rfind("max", 0) == 0 ||
        role.rfind("den", 0) == 0)
      result.emplace_back(role, f);
  return result;
}

/// Few query rows (AlgorithmOptions::fewRows: decode, a few queries against
/// a long cache): the parts of the keys of every problem are the parallel
/// tasks (FlashDecoding's split-KV), so one query row still keeps every
/// thread busy. A task computes its part's scores for all the rows of its
/// problem, and for all the query heads that share its KV head (the batch
/// dims K and V broadcast over, "kvShared<t>"), one key at a time: each row
/// of K is read once, in place, and meets every query row while in L1; then
/// the part's maxima, sums and weights x V, which reads each row of V once.
/// The merge per output row is small (parts x (dv + 2) values).
static void scheduleFewRowsAttention(OpStages &op, const ScheduleContext &ctx,
                                     int vector) {
  const AttentionParams &p = ctx.params.attention;
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  scheduleQuery(op, vector);
  // The batch vars of the splits (x, i, c, b...), the K/V-shared ones
  // first, as they run inside a part.
  Func splits = op.stages.at("splits");
  std::vector<Var> xArgs = splits.args();
  size_t batchDims = xArgs.size() - 3;
  auto kvShared = [&](size_t arg) {
    size_t dim = batchDims - 1 - (arg - 3); // its MLIR batch dim
    return op.info.count("kvShared" + std::to_string(dim)) != 0;
  };
  std::vector<Halide::VarOrRVar> order = {xArgs[0], xArgs[1]};
  std::vector<Var> shared, others;
  for (size_t a = 3; a < xArgs.size(); ++a)
    (kvShared(a) ? shared : others).push_back(xArgs[a]);
  order.insert(order.end(), shared.begin(), shared.end());
  order.push_back(xArgs[2]);
  order.insert(order.end(), others.begin(), others.end());
  splits.compute_root().reorder(order).vectorize(xArgs[0], vector,
                                                 TailStrategy::GuardWithIf);
  // One parallel loop over (part, problem).
  Var task = xArgs[2];
  for (const Var &outer : others) {
    Var fused(task.name() + "_" + outer.name());
    splits.fuse(task, outer, fused);
    task = fused;
  }
  splits.parallel(task);
  Halide::LoopLevel part(splits, task);

  // Scores: the key loop outside the rows (and shared heads), so a row of
  // K serves them all from L1; each score is a dot product over features,
  // vectorized, with one horizontal add.
  Func scores = op.stages.at("scores"), dot = op.stages.at("dot");
  std::vector<Var> sArgs = scores.args(); // j, i, b...
  std::vector<Halide::VarOrRVar> scoreOrder = {sArgs[1]};
  for (const Var &var : shared)
    scoreOrder.push_back(var);
  scoreOrder.push_back(sArgs[0]);
  scores.compute_at(part).reorder(scoreOrder);
  dot.compute_at(scores, sArgs[1]);
  // Whole vectors of features, up to 512 f32 (head dims to 256 and then
  // some), are one vector reduction; other dims stay a scalar loop.
  Halide::RVar rd = op.domains.at("dot").x;
  auto features = Halide::Internal::as_const_int(rd.extent());
  constexpr int kMaxReducedVectors = 32;
  if (features && *features % vector == 0 &&
      *features <= kMaxReducedVectors * vector)
    dot.update().atomic().vectorize(rd);

  scheduleRowMax(op.stages.at("splitlanes"), op.stages.at("splitmax"),
                 op.domains.at("rl"), part, vector);
  Func num = op.stages.at("num");
  num.compute_at(part).vectorize(num.args()[0], vector,
                                 TailStrategy::GuardWithIf);
  scheduleRowStatistic(op.stages.at("den"), op.domains.at("den"), splits, task,
                       vector);
  // Weights x V: register tiles of valueTileRows rows x valueTileVectors
  // vectors over chunks of valueKeyChunk keys, the chunk loop outermost:
  // a chunk of V stays in L1 for every row (and shared head) of the part.
  Func acc = op.stages.at("acc");
  std::vector<Var> aArgs = acc.args(); // e, i, c, b...
  Halide::RVar rj = op.domains.at("acc").x;
  acc.compute_at(part).vectorize(aArgs[0], vector, TailStrategy::GuardWithIf);
  size_t rank = op.result.rank();
  SplitChoice cols =
      chooseSplit(op.result.shape[rank - 1], vector * p.valueTileVectors);
  int rows = static_cast<int>(
      *Halide::Internal::as_const_int(op.result.shape[rank - 2]));
  int keyChunk = static_cast<int>(std::min<int64_t>(
      p.valueKeyChunk > 0 ? p.valueKeyChunk : 1 << 30,
      op.info.at("keySplit")));
  if (cols.isStatic) {
    int tileRows = std::min(p.valueTileRows, rows);
    int width = dividingWidth(cols.factor, vector);
    Var ao("ao"), ai("ai"), ro("ro"), ri("ri");
    Halide::RVar rjo("rjo"), rji("rji");
    std::vector<Halide::VarOrRVar> accOrder = {ai, ri, rji, ao, ro};
    accOrder.insert(accOrder.end(), shared.begin(), shared.end());
    accOrder.push_back(rjo);
    acc.update()
        .split(rj, rjo, rji, keyChunk, TailStrategy::GuardWithIf)
        .split(aArgs[0], ao, ai, cols.factor, TailStrategy::GuardWithIf)
        .split(aArgs[1], ro, ri, tileRows, TailStrategy::GuardWithIf)
        .reorder(accOrder)
        .vectorize(ai, width)
        .unroll(ai)
        .unroll(ri);
  } else {
    std::vector<Halide::VarOrRVar> accOrder = {aArgs[0], aArgs[1]};
    accOrder.insert(accOrder.end(), shared.begin(), shared.end());
    accOrder.push_back(rj);
    acc.update().reorder(accOrder).vectorize(aArgs[0], vector,
                                             TailStrategy::GuardWithIf);
  }

  // The merge, per output row.
  std::vector<Var> args = out.args(); // e, i, b...
  out.vectorize(args[0], vector, TailStrategy::GuardWithIf);
  if (args.size() > 2)
    out.parallel(args.back());
  for (const char *role : {"rowmax", "weight", "rowden"})
    op.stages.at(role).compute_at(out, args[1]);
  scheduleOutputTile(op.stages.at("merged"), op.domains.at("merge"),
                     Halide::LoopLevel(out, args[1]), false, vector);
}

void mlir::attn::codegen::scheduleRowAttention(OpStages &op,
                                               const ScheduleContext &ctx) {
  const AttentionParams &p = ctx.params.attention;
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  auto fewRows = op.info.find("fewRows");
  if (fewRows != op.info.end() && fewRows->second)
    return scheduleFewRowsAttention(op, ctx, vector);
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  size_t rank = op.result.rank();
  Halide::Expr n = op.result.shape[rank - 2], dv = op.result.shape[rank - 1];
  bool keySplit = op.info.count("keySplit") != 0;
  SplitChoice block =
      chooseSplit(n, keySplit ? p.splitQueryBlock : p.queryBlock);
  // A problem of at most two blocks' rows (window attention's 49) is one
  // block: two would overlap (ShiftInwards) and recompute up to a block.
  if (block.isStatic && *Halide::Internal::as_const_int(n) <= 2 * block.factor)
    block.factor = static_cast<int>(*Halide::Internal::as_const_int(n));
  // With one query block per problem, each split's keys are transposed
  // inside the split (in L2): no other block would reuse a copy of K at
  // root (at 32768 keys a root copy of K cost more than the products).
  bool keyTPerSplit = keySplit && block.isStatic &&
                      *Halide::Internal::as_const_int(n) <= block.factor;
  scheduleOperands(op, vector, keyTPerSplit);
  Func scores = op.stages.at("scores"), dot = op.stages.at("dot");
  Func acc = op.stages.at("acc");
  Halide::Expr m = weightKeys(op);
  std::vector<Var> args = out.args(); // e, i, b...
  Var e = args[0], i = args[1];
  SplitChoice scoreRows = chooseSplit(n, p.tileRows);
  SplitChoice valueRows = chooseSplit(n, p.valueTileRows);
  SplitChoice cols = chooseSplit(dv, vector * p.valueTileVectors);
  SplitChoice keys = chooseSplit(m, vector * p.tileVectors);
  // Keys that are not whole vectors (the algorithm pads their reads,
  // "padKeys"): the score tiles round up to whole vectors.
  TailStrategy keyTail = TailStrategy::ShiftInwards;
  auto padKeys = op.info.find("padKeys");
  if (keys.isStatic && padKeys != op.info.end() && padKeys->second &&
      keys.factor % vector != 0) {
    keys.factor = (keys.factor + vector - 1) / vector * vector;
    keyTail = TailStrategy::RoundUp;
  }
  bool tiled = block.isStatic && cols.isStatic && keys.isStatic;
  Var qblock("qblock"), qi("qi"), qii("qii"), eo("eo"), ei("ei");
  if (tiled) {
    int tileRows = std::min(valueRows.factor, block.factor);
    int width = dividingWidth(cols.factor, vector);
    out.split(i, qblock, qi, block.factor, TailStrategy::ShiftInwards)
        .split(qi, qi, qii, tileRows, TailStrategy::ShiftInwards)
        .split(e, eo, ei, cols.factor, TailStrategy::ShiftInwards)
        .reorder(ei, qii, eo, qi, qblock)
        .vectorize(ei, width)
        .unroll(qii);
  } else {
    out.split(i, qblock, qi, block.factor, block.tail)
        .vectorize(e, vector, TailStrategy::GuardWithIf);
  }
  Var task = parallelOuter(out, qblock, 2);
  op.form += "; query blocks of " + std::to_string(block.factor) + " rows" +
             (block.isStatic ? "" : " (n dynamic)") +
             ", each (block, batch index) a parallel task";

  // With a key split, the block's stages below run once per split, inside
  // the split loop of <name>_splits; else once per block.
  Halide::LoopLevel blockLevel(out, task);
  Func splits;
  Var splitVar;
  if (keySplit) {
    splits = op.stages.at("splits");
    std::vector<Var> xArgs = splits.args(); // x, i, c, b...
    splitVar = xArgs[2];
    splits.compute_at(out, task).vectorize(xArgs[0], vector,
                                           TailStrategy::GuardWithIf);
    blockLevel = Halide::LoopLevel(splits, splitVar);
    if (keyTPerSplit)
      op.stages.at("keyT").compute_at(blockLevel);
  }

  // Scores of the block: register-tiled Q K^T. The key tile loop is outside
  // the row tiles, so a tile of keyT (dk x keys) stays in L1 while every
  // row tile of the block uses it.
  scores.compute_at(blockLevel);
  padKeyRows(scores, m);
  std::vector<Var> sArgs = scores.args(); // j, i, b...
  std::vector<Var> dArgs = dot.args();
  Halide::RVar rd = op.domains.at("dot").x;
  if (tiled) {
    int tileRows = std::min(scoreRows.factor, block.factor);
    int width = dividingWidth(keys.factor, vector);
    Var jo("jo"), ji("ji"), si("si"), sii("sii");
    scores.split(sArgs[0], jo, ji, keys.factor, keyTail)
        .split(sArgs[1], si, sii, tileRows, TailStrategy::ShiftInwards)
        .reorder(ji, sii, si, jo)
        .vectorize(ji, width)
        .unroll(sii);
    dot.compute_at(scores, si).vectorize(dArgs[0], width).unroll(dArgs[1]);
    if (scoresInBf16Pairs(op)) {
      // The pair of features and 16 keys in one 32-lane product.
      tilePairProducts(dot.update(), op.domains.at("dot").x,
                       op.domains.at("dot").y, dArgs[0], dArgs[1], width);
    } else {
      dot.update()
          .reorder(dArgs[0], dArgs[1], rd)
          .vectorize(dArgs[0], width)
          .unroll(dArgs[0])
          .unroll(dArgs[1]);
    }
  } else {
    scores.vectorize(sArgs[0], vector, TailStrategy::GuardWithIf);
    dot.compute_at(scores, sArgs[1])
        .vectorize(dArgs[0], vector, TailStrategy::GuardWithIf);
    // Features in pairs (scoresInBf16Pairs) stay a scalar loop here: the
    // guarded key vectors cannot pair with them.
    std::vector<Halide::VarOrRVar> order = {dArgs[0]};
    for (int d = 0; d < op.domains.at("dot").dimensions(); ++d)
      order.push_back(op.domains.at("dot")[d]);
    dot.update().reorder(order).vectorize(dArgs[0], vector,
                                          TailStrategy::GuardWithIf);
  }

  // Statistics and weights of the block's rows.
  if (keySplit) {
    scheduleRowMax(op.stages.at("splitlanes"), op.stages.at("splitmax"),
                   op.domains.at("rl"), blockLevel, vector);
    Func num = op.stages.at("num");
    num.compute_at(blockLevel).vectorize(num.args()[0], vector,
                                         TailStrategy::GuardWithIf);
    padKeyRows(num, m);
    scheduleRowStatistic(op.stages.at("den"), op.domains.at("den"), splits,
                         splitVar, vector);
  } else {
    for (auto &[role, f] : stepStages(op)) {
      if (role.rfind("num", 0) == 0) {
        f.compute_at(out, task).vectorize(f.args()[0], vector,
                                          TailStrategy::GuardWithIf);
        padKeyRows(f, m);
      } else if (role.rfind("maxlanes", 0) == 0) {
        std::string suffix = role.substr(8);
        scheduleRowMax(f, op.stages.at("max" + suffix),
                       op.domains.at("rl" + suffix),
                       Halide::LoopLevel(out, task), vector);
      } else if (role.rfind("max", 0) == 0) {
        if (!op.stages.count("maxlanes" + role.substr(3)))
          f.compute_at(out, task);
      } else {
        scheduleRowStatistic(f, op.domains.at("r" + role.substr(3)), out, task,
                             vector);
      }
    }
  }

  // Output rows: weights x V, register-tiled (valueTileRows rows x
  // valueTileVectors vectors), over chunks of valueKeyChunk keys (else the
  // whole key loop inside the tile).
  std::vector<Var> aArgs = acc.args(); // e, i, b...
  const Halide::RDom &rj = op.domains.at("acc");
  SplitChoice keyChunk = chooseSplit(m, p.valueKeyChunk);
  if (tiled && p.valueKeyChunk > 0 && keyChunk.isStatic) {
    // The whole block's accumulator (queryBlock x dv, in L1) is updated one
    // chunk of keys at a time, every row tile per chunk: the chunk of V is
    // read from memory once per block instead of once per row tile.
    int tileRows = std::min(valueRows.factor, block.factor);
    int width = dividingWidth(cols.factor, vector);
    Var ao("ao"), ai("ai"), ro("ro"), ri("ri");
    Halide::RVar rjo("rjo"), rji("rji");
    acc.compute_at(blockLevel).vectorize(aArgs[0], vector,
                                         TailStrategy::GuardWithIf);
    Halide::Stage update = acc.update();
    if (weightsInBf16Pairs(op)) {
      // Chunks of key pairs; each vector product reduces its pair.
      Halide::RVar inPair = rj.x;
      update
          .split(rj.y, rjo, rji, std::max(1, keyChunk.factor / 2),
                 TailStrategy::GuardWithIf)
          .split(aArgs[0], ao, ai, cols.factor, TailStrategy::GuardWithIf)
          .split(aArgs[1], ro, ri, tileRows, TailStrategy::GuardWithIf)
          .reorder(inPair, ai, ri, rji, ao, ro, rjo)
          .atomic()
          .vectorize(inPair);
    } else {
      update.split(rj.x, rjo, rji, keyChunk.factor, TailStrategy::GuardWithIf)
          .split(aArgs[0], ao, ai, cols.factor, TailStrategy::GuardWithIf)
          .split(aArgs[1], ro, ri, tileRows, TailStrategy::GuardWithIf)
          .reorder(ai, ri, rji, ao, ro, rjo);
    }
    update.vectorize(ai, width).unroll(ai).unroll(ri);
  } else if (tiled && !keySplit) {
    scheduleOutputTile(acc, rj, Halide::LoopLevel(out, eo), true,
                       dividingWidth(cols.factor, vector));
  } else {
    scheduleOutputTile(acc, rj,
                       keySplit ? blockLevel : Halide::LoopLevel(out, qi),
                       false, vector);
  }
  if (!keySplit)
    return;

  // The merge of the splits: per-row weights, then each output tile sums
  // its splits' partial outputs.
  for (const char *role : {"rowmax", "weight", "rowden"})
    op.stages.at(role).compute_at(out, task);
  scheduleOutputTile(op.stages.at("merged"), op.domains.at("merge"),
                     Halide::LoopLevel(out, tiled ? eo : qi), tiled,
                     tiled ? dividingWidth(cols.factor, vector) : vector);
}

void mlir::attn::codegen::scheduleMaterializedAttention(
    OpStages &op, const ScheduleContext &ctx) {
  const AttentionParams &p = ctx.params.attention;
  int vector = ctx.vectorWidth(p.vectorWidth, op.result.type);
  Func out = op.result.func;
  if (!ctx.isOutput(out))
    out.compute_root();
  scheduleOperands(op, vector, false);
  size_t rank = op.result.rank();
  Halide::Expr n = op.result.shape[rank - 2], dv = op.result.shape[rank - 1];
  Halide::Expr m = op.domains.at("acc").x.extent();
  Func scores = op.stages.at("scores");
  scores.compute_root();
  scheduleTiledProduct(scores, op.stages.at("dot"), op.domains.at("dot"), m, n,
                       vector, p.tileVectors, p.tileRows, p.materializedBlock,
                       ctx);
  // The last step, when it is over keys (EANet's sum over slots), only
  // feeds the final product: its weights and row sums are computed per row
  // block of that product, in L1, instead of as n x m passes at root.
  int64_t steps = op.info.at("steps");
  int64_t lastStep = -1;
  for (int64_t t = 0; t < steps; ++t)
    if (op.stages.count("num" + std::to_string(t)))
      lastStep = t;
  bool fuseLast =
      lastStep >= 0 && op.info.at("overKeys" + std::to_string(lastStep));
  SplitChoice rowBlock = chooseSplit(n, p.materializedBlock);
  for (int64_t t = 0; t < steps; ++t) {
    std::string suffix = std::to_string(t);
    auto num = op.stages.find("num" + suffix);
    if (num == op.stages.end())
      continue; // a `none` step
    if (fuseLast && t == lastStep)
      continue; // per row block, below
    // The step feeding the fused last one (EANet's softmax over positions)
    // stays inline: its statistics' passes and each row block recompute
    // its exp, instead of an n x m pass writing it and the blocks reading
    // it back.
    bool feedsFusedLast = fuseLast;
    for (int64_t later = t + 1; feedsFusedLast && later < lastStep; ++later)
      feedsFusedLast = !op.stages.count("num" + std::to_string(later));
    if (!feedsFusedLast) {
      std::vector<Var> args = num->second.args(); // j, i, b...
      Var blocks(num->second.name() + "_blocks"), rows("rows");
      num->second.compute_root()
          .vectorize(args[0], vector, TailStrategy::GuardWithIf)
          .split(args[1], blocks, rows, rowBlock.factor, rowBlock.tail);
      parallelOuter(num->second, blocks, 2);
    }
    bool overKeys = op.info.at("overKeys" + suffix);
    for (const char *kind : {"max", "den"}) {
      auto stat = op.stages.find(kind + suffix);
      if (stat == op.stages.end())
        continue;
      if (!overKeys) {
        // Column statistics: a reduction over the n positions.
        schedulePositionReduction(stat->second, op.domains.at("r" + suffix),
                                  ctx);
      } else {
        std::vector<Var> statArgs = stat->second.args(); // i, b...
        stat->second.compute_root().parallel(statArgs[0]);
        stat->second.update().parallel(statArgs[0]);
      }
    }
    auto lanes = op.stages.find("maxlanes" + suffix);
    if (lanes != op.stages.end()) {
      Func f = lanes->second;
      std::vector<Var> args = f.args(); // lane, i, b...
      f.compute_root().vectorize(args[0]).parallel(args[1]);
      f.update().vectorize(args[0]).parallel(args[1]);
    }
  }
  auto plain = op.stages.find("num");
  if (plain != op.stages.end())
    plain->second.compute_root();
  Var task = scheduleTiledProduct(out, op.stages.at("acc"), op.domains.at("acc"),
                                  dv, n, vector, p.tileVectors, p.tileRows,
                                  p.materializedBlock, ctx)
                 .task;
  if (!fuseLast)
    return;
  std::string suffix = std::to_string(lastStep);
  Func num = op.stages.at("num" + suffix);
  num.compute_at(out, task).vectorize(num.args()[0], vector,
                                      TailStrategy::GuardWithIf);
  // A softmax's max is two stages (lane maxima, then their max).
  auto lanes = op.stages.find("maxlanes" + suffix);
  if (lanes != op.stages.end())
    scheduleRowMax(lanes->second, op.stages.at("max" + suffix),
                   op.domains.at("rl" + suffix), Halide::LoopLevel(out, task),
                   vector);
  else if (op.stages.count("max" + suffix))
    op.stages.at("max" + suffix).compute_at(out, task);
  auto den = op.stages.find("den" + suffix);
  if (den != op.stages.end())
    scheduleRowStatistic(den->second, op.domains.at("r" + suffix), out, task,
                         vector);
}
