//===- AlgorithmAttention.cpp - Dot-product attention ---------------------===//
//
// attn.dot_product and attn.external (EANet) as one fused algorithm, the
// shared lowering of a DotProductSpec: scores, the normalization steps,
// weights x V; with AlgorithmOptions::keySplit, a softmax over keys in
// splits that a merge rescales.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"
#include "codegen/ShapeThresholds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <array>
#include <sstream>

using namespace mlir;
using namespace mlir::attn::codegen::detail;

namespace {

/// What the schedule remark says of the opt-in: used, or why not.
std::string bf16WeightsForm(Operation *op, const std::string &unused) {
  if (!op->hasAttr(kAllowBf16Products))
    return "";
  if (!unused.empty())
    return "; attn.allow_bf16_products not used: " + unused;
  return "; weights rounded to bf16 (attn.allow_bf16_products): weights x V "
         "reduce keys in pairs (vdpbf16ps)";
}

/// Whether `_query` is Q itself, needing no copy: no feature map, and Q not
/// widened from a 16-bit type. A widened Q read in place costs the score
/// products a 16-bit load, a shift and a broadcast per element, where an
/// f32 one folds into the FMA: bf16 softmax on FMAs (8 heads, n = 1024, on
/// an Intel host) ran at 0.89x its f32 twin with it. The copy widens once.
bool plainQuery(attn::FeatureMap featureMap, Value query) {
  return featureMap == attn::FeatureMap::identity &&
         !query.getDefiningOp<arith::ExtFOp>();
}

/// Lanes of the first stage of a row maximum over keys (one AVX-512 f32
/// vector; see lowerDotProductSpec). Listed with the other sizes where a
/// schedule changes form (ShapeThresholds.h), so the shape sweep covers it.
constexpr int kMaxLanes = mlir::attn::codegen::kRowMaxLanes;

/// The first stage of a row maximum over `count` keys from `first`:
/// lanes(slice..., lane) = the largest `entry(key)` over the keys
/// first + lane, first + lane + kMaxLanes, ... where `kept(key)` (the lowest
/// float if none). `max` then takes the largest of its slice's kMaxLanes
/// lanes. Vertical and vectorizable; the max is exact in any order, so the
/// grouping changes no value. Halide's rfactor cannot do this, as its
/// intermediate would start at -inf (undefined under the no-infs flags).
struct LaneMax {
  Func lanes;
  RDom groups, lanesR; ///< over key groups; over the lanes
};
/// `names` are those of lanes and of the two RDoms.
LaneMax defineLaneMax(Func max, const std::vector<Var> &sliceVars,
                      const Index &sliceAt, Expr first, Expr count,
                      const std::function<Expr(Expr)> &entry,
                      const std::function<Expr(Expr)> &kept,
                      const std::array<std::string, 3> &names,
                      Halide::Type type) {
  Func lanes(names[0]);
  Var lane("lane");
  RDom groups(0, (count + kMaxLanes - 1) / kMaxLanes, names[1]);
  Expr key = first + groups * kMaxLanes + lane;
  std::vector<Var> laneVars = sliceVars;
  laneVars.push_back(lane);
  Index laneAt = sliceAt;
  laneAt.push_back(lane);
  define(lanes, laneVars, lowest(type));
  update(lanes, laneAt,
         Halide::max(call(lanes, laneAt),
                     Halide::select(kept(key), entry(key), lowest(type))));
  RDom lanesR(0, kMaxLanes, names[2]);
  Index laneR = sliceAt;
  laneR.push_back(lanesR);
  update(max, sliceAt, Halide::max(call(max, sliceAt), call(lanes, laneR)));
  return {lanes, groups, lanesR};
}

} // namespace

LogicalResult KernelBuilder::lowerDotProduct(Operation *operation) {
  auto op = cast<DotProductAttentionOp>(operation);
  DotProductSpec spec;
  spec.query = op.getQuery();
  spec.key = op.getKey();
  spec.value = op.getValue();
  spec.mask = op.getMask();
  for (Attribute attr : op.getNorm()) {
    auto step = cast<NormStepAttr>(attr);
    spec.steps.emplace_back(step.getKind(), step.getAxis(), step.getEpsValue());
  }
  spec.scale = op.getScale().convertToDouble();
  spec.featureMap = op.getFeatureMap();
  spec.causal = op.getCausal();
  spec.lse = static_cast<bool>(op.getLse());
  return lowerDotProductSpec(op, spec);
}

LogicalResult KernelBuilder::lowerExternal(Operation *operation) {
  auto op = cast<ExternalAttentionOp>(operation);
  DotProductSpec spec;
  spec.query = op.getInput();
  spec.key = op.getMemoryKey();
  spec.value = op.getMemoryValue();
  spec.steps = {{NormKind::softmax, NormAxis::queries, 0.0},
                {NormKind::sum, NormAxis::keys, op.getEps().convertToDouble()}};
  return lowerDotProductSpec(op, spec);
}

// Scores S[i, j] (query i, key j) are built in stages:
//   <name>_query (b, i, d) = phi(Q), <name>_keyT (b, d, j) = phi(K) with j
//   innermost (so score products vectorize over keys), <name>_dot = Q K^T,
//   <name>_scores = scale * dot + mask. Step t of the norm list defines
//   <name>_num<t> (hidden entries 0) and a per-slice <name>_den<t> (and
//   <name>_max<t> for softmax); the normalized scores are num / den. The
//   last step's division is applied after the product with V when that
//   step is over keys (one division per output instead of per score).
LogicalResult KernelBuilder::lowerDotProductSpec(Operation *op,
                                                 const DotProductSpec &spec) {
  const TensorFunc &q = get(spec.query);
  const TensorFunc &k = get(spec.key);
  const TensorFunc &v = get(spec.value);
  std::optional<TensorFunc> maskFunc;
  if (spec.mask)
    maskFunc = get(spec.mask);
  const TensorFunc *mask = maskFunc ? &*maskFunc : nullptr;
  std::string name = opFuncName(op);
  Halide::Type type = q.type;
  FailureOr<AttentionLayout> layout = attentionLayout(op, q, k, v, mask, name);
  if (failed(layout))
    return failure();
  const AttentionLayout &batch = *layout;
  Expr n = batch.n, dk = batch.dk, m = batch.m;
  Var i("i"), j("j"), e("e"), d("d");

  // The form: few query rows split the keys into parts (split-KV); a
  // softmax over many static keys may split them per query block.
  auto staticKeys = Halide::Internal::as_const_int(m);
  auto staticRows = Halide::Internal::as_const_int(n);
  bool softmaxOverKeys = spec.steps.size() == 1 &&
                         std::get<0>(spec.steps[0]) == NormKind::softmax &&
                         std::get<1>(spec.steps[0]) == NormAxis::keys;
  bool fewRows = softmaxOverKeys && options.fewRows > 0 &&
                 options.keyPart > 0 && options.keyPart % kMaxLanes == 0 &&
                 staticRows && *staticRows <= options.fewRows;
  int64_t split = spec.causal ? options.causalKeySplit : options.keySplit;
  bool keySplit = !fewRows && softmaxOverKeys && split > 0 &&
                  split % kMaxLanes == 0 && staticKeys &&
                  *staticKeys > split;

  // bf16 Q and K (the arith.extf that attn-widen-to-f32 put before the op)
  // on a target whose vdpbf16ps pays: the scores reduce features in pairs of
  // the stored bf16 values, in vdpbf16ps (AlgorithmOptions::bf16DotProducts).
  std::optional<TensorFunc> queryBf16 = storedBf16(spec.query);
  std::optional<TensorFunc> keyBf16 = storedBf16(spec.key);
  auto staticDk = Halide::Internal::as_const_int(dk);
  bool stepsOverKeys = llvm::all_of(spec.steps, [](const auto &step) {
    return std::get<1>(step) == NormAxis::keys;
  });
  bool bf16Pairs = options.bf16DotProducts && !fewRows && stepsOverKeys &&
                   spec.featureMap == FeatureMap::identity && queryBf16 &&
                   keyBf16 && staticDk && *staticDk % 2 == 0;
  // With the op's opt-in, the softmax weights are rounded to bf16 as well
  // and P V reduces keys in pairs (vdpbf16ps), V packed as (key pair,
  // column, 2): that needs an even static m. The row statistics a gradient
  // reads (lse) stay those of the unrounded weights, so an op returning
  // them keeps f32 weights.
  std::optional<TensorFunc> valueBf16 = storedBf16(spec.value);
  std::string bf16WeightsUnused;
  if (op->hasAttr(kAllowBf16Products)) {
    if (!options.bf16DotProducts)
      bf16WeightsUnused = kNoBf16PairsReason;
    else if (!bf16Pairs)
      bf16WeightsUnused = "the scores are not bf16 pairs (bf16 Q and K, an "
                          "even static dk, no feature map, not few rows)";
    else if (!softmaxOverKeys)
      bf16WeightsUnused = "the normalization is not one softmax over keys";
    else if (!valueBf16)
      bf16WeightsUnused = "V is not bf16";
    else if (!staticKeys || *staticKeys % 2 != 0)
      bf16WeightsUnused = "m is not static and even";
    else if (spec.lse)
      bf16WeightsUnused = "the op returns its row log-sum-exp";
  }
  bool bf16Weights =
      op->hasAttr(kAllowBf16Products) && bf16WeightsUnused.empty();

  Func query(name + "_query"), keyT(name + "_keyT"), dot(name + "_dot"),
      scores(name + "_scores");
  define(query, batch.vars({i, d}),
         featureMapExpr(spec.featureMap, batch.operand(q, {i, d})));
  // In pairs: rd.x is the feature within a pair, rd.y the pair.
  RDom rd = bf16Pairs ? RDom(0, 2, 0, dk / 2, name + "_rd")
                      : RDom(0, dk, name + "_rd");
  Var pair("pair");
  // With few rows, Q's rows meet K's rows in place (a dot product over
  // features per score); else K is copied transposed, keys innermost, so
  // the score products vectorize over keys.
  // A static key count that is not a multiple of the widest vector (a
  // 7 x 7 window's 49 keys): the schedule rounds the score tiles up to
  // whole vectors, so keyT and the mask are read at m - 1 past the last
  // key (those scores are never used).
  bool padKeys = !fewRows && staticKeys && *staticKeys % kMaxLanes != 0;
  // A causal query block needs the keys up to its last row only: for the
  // first rows, fewer than one score tile, which then starts before key 0
  // (ShiftInwards), so keyT and the mask are read from key 0 there too.
  bool shiftedKeys = !fewRows && spec.causal;
  auto keyIndex = [&](Expr key) -> Expr {
    if (shiftedKeys)
      key = Halide::max(key, 0);
    return padKeys ? Halide::min(key, m - 1) : key;
  };
  if (bf16Pairs)
    define(keyT, batch.vars({d, j, pair}),
           batch.operand(*keyBf16, {keyIndex(j), 2 * d + pair}));
  else if (!fewRows)
    define(keyT, batch.vars({d, j}),
           featureMapExpr(spec.featureMap,
                          batch.operand(k, {keyIndex(j), d})));
  Expr queryAt, keyAt;
  if (bf16Pairs) {
    // Products of bf16 values, exact in f32: the pattern of vdpbf16ps.
    queryAt = Halide::cast<float>(
        batch.operand(*queryBf16, {i, 2 * rd.y + rd.x}));
    keyAt = Halide::cast<float>(call(keyT, batch.index({rd.y, j, rd.x})));
  } else {
    queryAt = call(query, batch.index({i, rd}));
    keyAt = fewRows
                ? featureMapExpr(spec.featureMap, batch.operand(k, {j, rd}))
                : call(keyT, batch.index({rd, j}));
  }
  define(dot, batch.vars({i, j}), constant(type, 0.0));
  update(dot, batch.index({i, j}), call(dot, batch.index({i, j})) + queryAt * keyAt);
  Expr s = call(dot, batch.index({i, j}));
  if (spec.scale != 1.0)
    s = s * constant(type, spec.scale);
  if (mask) {
    s = s + batch.operand(*mask, {i, keyIndex(j)});
  }
  define(scores, batch.vars({i, j}), s);

  std::map<std::string, Func> stages = {
      {"query", query}, {"dot", dot}, {"scores", scores}};
  if (!fewRows)
    stages["keyT"] = keyT;
  // A bf16/f16 V (the arith.extf of it) that every query block reads:
  // converted to f32 once (a root copy), not in the inner loop of P V. A
  // few rows read V once, so they convert it in place.
  TensorFunc value = v;
  if (bf16Weights) {
    // V (key pair, column, 2) from the stored bf16 V: a vector of it is the
    // 16 columns x 2 keys one vdpbf16ps reads.
    Func valuePairs(name + "_valuePairs");
    define(valuePairs, batch.vars({j, e, pair}),
           batch.operand(*valueBf16, {2 * j + pair, e}));
    stages["valuePairs"] = valuePairs;
  } else if (!fewRows && spec.value.getDefiningOp<arith::ExtFOp>()) {
    Func valueF32(name + "_valueF32");
    std::vector<Var> vars = makeVars(v.rank());
    define(valueF32, vars, v(toExprs(vars)));
    value.func = valueF32;
    stages["valueF32"] = valueF32;
  }
  std::map<std::string, RDom> domains = {{"dot", rd}};
  if (fewRows || keySplit)
    return lowerKeySplitSoftmax(op, name, batch, spec, q, k, value, stages,
                                domains, fewRows ? options.keyPart : split,
                                fewRows, bf16WeightsUnused);
  auto visible = [&](Expr row, Expr col) -> Expr {
    return spec.causal ? col <= row : Halide::Internal::const_true();
  };

  // The current normalized scores as a Func of (b..., i, j); hidden entries
  // are excluded by `visible` in every step.
  Func current = scores;
  // Static key count (0: dynamic), for the layout of keyT.
  std::map<std::string, int64_t> info = {
      {"keys", staticKeys ? *staticKeys : 0}, {"padKeys", padKeys}};
  Func lastNum;
  Expr lastDen; // per-row divisor of the last step when it is over keys
  Expr lastLse; // its row log-sum-exp when it is a softmax over keys
  bool allKeys = true;
  for (auto [t, step] : llvm::enumerate(spec.steps)) {
    auto [kind, axis, eps] = step;
    if (kind == NormKind::none)
      continue;
    bool overKeys = axis == NormAxis::keys;
    allKeys &= overKeys;
    std::string suffix = std::to_string(t);
    // The slice of (i, j) is the other index; reduce over r.
    RDom r(0, overKeys ? m : n, name + "_r" + suffix);
    Index sliceAt = batch.index({overKeys ? Expr(i) : Expr(j)});
    std::vector<Var> sliceVars = batch.vars({overKeys ? i : j});
    Index rAt = overKeys ? batch.index({i, r}) : batch.index({r, j});
    Expr visibleR = overKeys ? visible(i, r) : visible(r, j);
    Expr cur = call(current, batch.index({i, j})), curR = call(current, rAt);
    Expr rRow = overKeys ? Expr(i) : Expr(r), rCol = overKeys ? Expr(r) : Expr(j);
    // -inf entries are hidden: the mask's, in the step on the scores (later
    // steps see normalized values, never -inf).
    bool onScores = !lastNum.defined();
    auto hidden = [&](Expr row, Expr col, Expr value) -> Expr {
      return onScores ? maskHides(batch, spec, row, col) : isNegInf(value);
    };
    Func num(name + "_num" + suffix), den(name + "_den" + suffix);
    Expr divisor;
    if (kind == NormKind::softmax) {
      Func max(name + "_max" + suffix);
      define(max, sliceVars, lowest(type));
      if (overKeys) {
        // Two stages (defineLaneMax): kMaxLanes running maxima per row.
        auto entry = [&](Expr key) {
          return call(current, batch.index({i, Halide::min(key, m - 1)}));
        };
        auto kept = [&](Expr key) {
          return key < m && visible(i, key) &&
                 !hidden(i, Halide::min(key, m - 1), entry(key));
        };
        LaneMax laneMax =
            defineLaneMax(max, sliceVars, sliceAt, 0, m, entry, kept,
                          {name + "_maxlanes" + suffix, name + "_rg" + suffix,
                           name + "_rl" + suffix},
                          type);
        stages["maxlanes" + suffix] = laneMax.lanes;
        domains["rg" + suffix] = laneMax.groups;
        domains["rl" + suffix] = laneMax.lanesR;
      } else {
        update(max, sliceAt,
               Halide::max(call(max, sliceAt),
                           Halide::select(visibleR && !hidden(rRow, rCol, curR),
                                          curR,
                                          lowest(type))));
      }
      Expr weight = Halide::select(visible(i, j) && !hidden(i, j, cur),
                                   softmaxExp(cur - call(max, sliceAt)),
                                   constant(type, 0.0));
      // bf16 weights (bf16Weights): the sum is of the rounded values, so
      // the weights P V reads still sum to 1 after the division.
      define(num, batch.vars({i, j}),
             bf16Weights ? Halide::cast(Halide::BFloat(16), weight) : weight);
      define(den, sliceVars, constant(type, 0.0));
      update(den, sliceAt,
             call(den, sliceAt) + Halide::cast(type, call(num, rAt)));
      Expr total = call(den, sliceAt);
      divisor = softmaxDivisor(total);
      if (overKeys)
        lastLse = logSumExp(call(max, sliceAt), total);
      stages["max" + suffix] = max;
      stages["den" + suffix] = den;
    } else {
      define(num, batch.vars({i, j}),
             Halide::select(visible(i, j), cur, constant(type, 0.0)));
      if (kind == NormKind::sum) {
        // Sums num (not the step's input) so that a num computed per row
        // block (EANet's last step) is read from that block's buffer.
        define(den, sliceVars, constant(type, eps));
        update(den, sliceAt, call(den, sliceAt) + call(num, rAt));
        divisor = call(den, sliceAt);
        stages["den" + suffix] = den;
      } else { // count divides by the full axis length
        divisor = Halide::cast(type, overKeys ? m : n);
      }
    }
    stages["num" + suffix] = num;
    domains["r" + suffix] = r;
    info["overKeys" + suffix] = overKeys;
    Func normalized(name + "_p" + suffix);
    define(normalized, batch.vars({i, j}),
           Halide::cast(type, call(num, batch.index({i, j}))) / divisor);
    stages["p" + suffix] = normalized;
    current = normalized;
    lastNum = num;
    lastDen = overKeys ? divisor : Expr();
  }
  // With no step (or only `none`), hidden entries still contribute 0.
  if (!lastNum.defined()) {
    Func num(name + "_num");
    define(num, batch.vars({i, j}),
           Halide::select(visible(i, j), call(scores, batch.index({i, j})),
                          constant(type, 0.0)));
    stages["num"] = num;
    current = num;
  }
  bool divideLast = lastDen.defined();
  Func weights = divideLast ? lastNum : current;

  Func acc(name + "_acc"), result(name);
  // bf16 weights: rj.x is the key within a pair, rj.y the pair. A causal
  // pair that straddles the diagonal has weight 0 past it.
  RDom rj = bf16Weights ? RDom(0, 2, 0, m / 2, name + "_rj")
                        : RDom(0, m, name + "_rj");
  if (spec.causal)
    rj.where((bf16Weights ? 2 * rj.y : Expr(rj.x)) <= i);
  Expr weightTimesValue =
      bf16Weights
          ? Halide::cast<float>(
                call(weights, batch.index({i, 2 * rj.y + rj.x}))) *
                Halide::cast<float>(
                    call(stages.at("valuePairs"), batch.index({rj.y, e, rj.x})))
          : call(weights, batch.index({i, rj})) * batch.operand(value, {rj, e});
  define(acc, batch.vars({i, e}), constant(type, 0.0));
  update(acc, batch.index({i, e}),
         call(acc, batch.index({i, e})) + weightTimesValue);
  Expr out = call(acc, batch.index({i, e}));
  if (divideLast)
    out = out / lastDen;
  stages["acc"] = acc;
  domains["acc"] = rj;
  info["steps"] = static_cast<int64_t>(spec.steps.size());
  info["plainQuery"] = plainQuery(spec.featureMap, spec.query);
  if (spec.lse && !lastLse.defined())
    return op->emitError("codegen: the row log-sum-exp needs one softmax "
                         "over keys");
  FailureOr<size_t> opAt = bindAttention(
      op, allKeys ? Family::RowAttention : Family::MaterializedAttention,
      result, batch, i, e, out, spec.lse ? lastLse : Expr(), stages, domains,
      info);
  if (failed(opAt))
    return failure();
  std::ostringstream form;
  if (!allKeys) {
    form << "materialized scores: a normalization step over queries needs "
            "whole columns of scores";
  } else {
    form << "row blocks: every key per query block";
    if (softmaxOverKeys) {
      form << " (";
      if (!staticRows)
        form << "n dynamic";
      else
        form << "n = " << *staticRows << " > attention.fewRows = "
             << options.fewRows;
      form << "; ";
      std::string knob = spec.causal ? "attention.causalKeySplit"
                                     : "attention.keySplit";
      if (!staticKeys)
        form << "m dynamic: no key split";
      else
        form << "m = " << *staticKeys << " <= " << knob << " = " << split
             << ": no key split";
      form << ")";
    }
    if (padKeys)
      form << "; " << *staticKeys
           << " keys are not whole vectors: score tiles round up";
  }
  if (spec.lse)
    form << "; the row log-sum-exp from the same statistics, in the "
            "output's tiles";
  form << bf16WeightsForm(op, bf16WeightsUnused);
  algorithm.ops[*opAt].form = form.str();
  return success();
}

Expr KernelBuilder::logSumExp(Expr max, Expr total) {
  Halide::Type type = max.type();
  // +inf is chosen between bit patterns (as lowerCausalMask's fill): an FP
  // select of inf carries the no-infs fast-math flag.
  Halide::Type bits = Halide::UInt(type.bits());
  Expr inf = constant(type, std::numeric_limits<double>::infinity());
  // A NaN row keeps a NaN lse (the NaN rule; Halide's log would lose it).
  return keepNaN(
      total, Halide::reinterpret(
                 type, Halide::select(
                           total == 0, Halide::reinterpret(bits, inf),
                           Halide::reinterpret(bits, max + Halide::log(total)))));
}

FailureOr<size_t> KernelBuilder::bindAttention(
    Operation *op, Family family, Func result, const AttentionLayout &batch,
    Var i, Var e, Expr out, Expr lse, std::map<std::string, Func> stages,
    std::map<std::string, RDom> domains, std::map<std::string, int64_t> info) {
  Halide::Type type = out.type();
  if (!lse.defined()) {
    define(result, batch.vars({i, e}), out);
    bind(op, family, {result, batch.shape, type}, std::move(stages),
         std::move(domains), std::move(info));
    return algorithm.ops.size() - 1;
  }
  // The output and its row's log-sum-exp as one Tuple Func, computed in the
  // same tiles from the same statistics (the log-sum-exp depends on the row
  // only, so it is hoisted out of the columns); the op's two results are
  // its components.
  auto reversed = [](std::vector<Var> vars) {
    return std::vector<Var>(vars.rbegin(), vars.rend());
  };
  auto at = [](Index index) {
    return std::vector<Expr>(index.rbegin(), index.rend());
  };
  result(reversed(batch.vars({i, e}))) = Halide::Tuple(out, lse);
  size_t opAt = algorithm.ops.size();
  algorithm.ops.push_back(
      {family, result.name(), TensorFunc{result, batch.shape, type},
       std::move(stages), std::move(domains), std::move(info)});
  algorithm.ops.back().loc = op->getLoc();
  Func output(result.name() + "_result"), rowLse(result.name() + "_lse");
  output(reversed(batch.vars({i, e}))) = result(at(batch.index({i, e})))[0];
  TensorFunc outputTensor{output, batch.shape, type};
  values[op->getResult(0)] = outputTensor;
  algorithm.ops.push_back(
      {Family::Elementwise, output.name(), outputTensor, {}, {}, {}});
  rowLse(reversed(batch.vars({i}))) = result(at(batch.index({i, 0})))[1];
  std::vector<Expr> rows = batch.lead;
  rows.push_back(batch.n);
  FailureOr<std::vector<Expr>> shape =
      extents(op, cast<RankedTensorType>(op->getResult(1).getType()), rows);
  if (failed(shape))
    return failure();
  TensorFunc lseTensor{rowLse, *shape, type};
  values[op->getResult(1)] = lseTensor;
  algorithm.ops.push_back(
      {Family::Elementwise, rowLse.name(), lseTensor, {}, {}, {}});
  return opAt;
}

Expr KernelBuilder::maskHides(const AttentionLayout &batch,
                               const DotProductSpec &spec, Expr row,
                               Expr col) {
  if (!spec.mask)
    return Halide::Internal::const_false();
  return isNegInf(batch.operand(get(spec.mask), {row, col}));
}

// Softmax over keys in splits of `split` keys (split-K online softmax).
// For split c of row i, with key = c * split + jj:
//   <name>_splitlanes (b, c, i, lane), <name>_splitmax (b, c, i): the max of
//   the split's visible scores, in two stages as in lowerDotProductSpec;
//   <name>_num (b, c, i, jj) = exp(S - splitmax), 0 where hidden;
//   <name>_den (b, c, i) and <name>_acc (b, c, i, e): its sum and num x V;
//   <name>_splits (b, c, i, x): acc for x < dv, then splitmax, then den, so
//   one Func carries a split's results out of the split loop.
// The merge rescales split c by w = exp(splitmax - rowmax):
//   out = sum_c w acc / sum_c w den. A split with nothing visible has
//   den = acc = 0; its max is the lowest float, and w is set to 0 then.
// When m is dynamic or not a multiple of `split`, the last split is ragged:
// its keys past m read K and V at m - 1 and are hidden.
LogicalResult KernelBuilder::lowerKeySplitSoftmax(
    Operation *op, const std::string &name, const AttentionLayout &batch,
    const DotProductSpec &spec, const TensorFunc &q, const TensorFunc &k,
    const TensorFunc &v, std::map<std::string, Func> stages,
    std::map<std::string, RDom> domains, int64_t split, bool fewRows,
    const std::string &bf16WeightsUnused) {
  Func scores = stages.at("scores");
  auto valuePairs = stages.find("valuePairs");
  bool bf16Weights = valuePairs != stages.end();
  Halide::Type type = v.type;
  Expr m = batch.m, dv = batch.dv;
  auto staticKeys = Halide::Internal::as_const_int(m);
  bool ragged = !staticKeys || *staticKeys % split != 0;
  int splitKeys = static_cast<int>(split);
  Expr splits = staticKeys ? Expr(static_cast<int>(
                                 (*staticKeys + splitKeys - 1) / splitKeys))
                           : (m + splitKeys - 1) / splitKeys;
  Var i("i"), e("e"), c("c"), jj("jj"), x("x");
  auto visible = [&](Expr row, Expr col) -> Expr {
    return spec.causal ? col <= row : Halide::Internal::const_true();
  };
  // Keys past m (a ragged last split) are read at m - 1 and hidden.
  auto clampKey = [&](Expr key) -> Expr {
    return ragged ? Halide::min(key, m - 1) : key;
  };
  auto kept = [&](Expr key) -> Expr {
    Expr shown = visible(i, key) && !maskHides(batch, spec, i, clampKey(key));
    return ragged ? key < m && shown : shown;
  };

  // The split's max, in two stages (defineLaneMax); split is a multiple
  // of kMaxLanes, so every lane's keys are in the split.
  Func splitMax(name + "_splitmax");
  Index maxAt = batch.index({c, i});
  define(splitMax, batch.vars({c, i}), lowest(type));
  LaneMax laneMax = defineLaneMax(
      splitMax, batch.vars({c, i}), maxAt, c * splitKeys, splitKeys,
      [&](Expr key) { return call(scores, batch.index({i, clampKey(key)})); },
      kept, {name + "_splitlanes", name + "_rg", name + "_rl"}, type);

  Func num(name + "_num"), den(name + "_den"), acc(name + "_acc");
  Expr key = c * splitKeys + jj;
  Expr score = call(scores, batch.index({i, clampKey(key)}));
  Expr keyWeight =
      Halide::select(kept(key), softmaxExp(score - call(splitMax, maxAt)),
                     constant(type, 0.0));
  // bf16 weights: the sum is of the rounded values (as in lowerDotProductSpec).
  define(num, batch.vars({c, i, jj}),
         bf16Weights ? Halide::cast(Halide::BFloat(16), keyWeight) : keyWeight);
  RDom rs(0, splitKeys, name + "_rs");
  define(den, batch.vars({c, i}), constant(type, 0.0));
  update(den, maxAt,
         call(den, maxAt) +
             Halide::cast(type, call(num, batch.index({c, i, rs}))));
  // Hidden keys have weight 0. (A causal predicate here, c * split + rj
  // <= i, would put a branch per row into the register tiles of weights x
  // V; splits wholly past the diagonal are skipped by the merge instead.)
  // bf16 weights: rj.x is the key within a pair, rj.y the pair; the pairs
  // of a ragged split past m read V's last pair (their weights are 0).
  RDom rj = bf16Weights ? RDom(0, 2, 0, splitKeys / 2, name + "_rj")
                        : RDom(0, splitKeys, name + "_rj");
  Index accAt = batch.index({c, i, e});
  Expr weightTimesValue;
  if (bf16Weights) {
    Expr keyPair = c * (splitKeys / 2) + rj.y;
    if (ragged)
      keyPair = Halide::min(keyPair, m / 2 - 1);
    weightTimesValue =
        Halide::cast(type, call(num, batch.index({c, i, 2 * rj.y + rj.x}))) *
        Halide::cast(type,
                     call(valuePairs->second, batch.index({keyPair, e, rj.x})));
  } else {
    weightTimesValue = call(num, batch.index({c, i, rj})) *
                       batch.operand(v, {clampKey(c * splitKeys + rj), e});
  }
  define(acc, batch.vars({c, i, e}), constant(type, 0.0));
  update(acc, accAt, call(acc, accAt) + weightTimesValue);

  Func splitResults(name + "_splits");
  define(splitResults, batch.vars({c, i, x}),
         Halide::select(
             x < dv, call(acc, batch.index({c, i, Halide::min(x, dv - 1)})),
             x == dv, call(splitMax, maxAt), call(den, maxAt)));

  // The merge over splits.
  Func rowMax(name + "_rowmax"), weight(name + "_weight"),
      rowDen(name + "_rowden"), merged(name + "_merged"), result(name);
  // Causal: a split whose first key is past the row's own is not merged,
  // so bounds inference never computes a split wholly past the diagonal
  // of a query block.
  RDom rc(0, splits, name + "_rc");
  if (spec.causal)
    rc.where(rc * splitKeys <= i);
  define(rowMax, batch.vars({i}), lowest(type));
  update(rowMax, batch.index({i}),
         Halide::max(call(rowMax, batch.index({i})),
                     call(splitResults, batch.index({rc, i, dv}))));
  Expr splitMaxAt = call(splitResults, batch.index({c, i, dv}));
  define(weight, batch.vars({c, i}),
         Halide::select(splitMaxAt == lowest(type), constant(type, 0.0),
                        softmaxExp(splitMaxAt -
                                   call(rowMax, batch.index({i})))));
  define(rowDen, batch.vars({i}), constant(type, 0.0));
  update(rowDen, batch.index({i}),
         call(rowDen, batch.index({i})) +
             call(weight, batch.index({rc, i})) *
                 call(splitResults, batch.index({rc, i, dv + 1})));
  define(merged, batch.vars({i, e}), constant(type, 0.0));
  update(merged, batch.index({i, e}),
         call(merged, batch.index({i, e})) +
             call(weight, batch.index({rc, i})) *
                 call(splitResults, batch.index({rc, i, e})));
  Expr total = call(rowDen, batch.index({i}));
  Expr out = call(merged, batch.index({i, e})) / softmaxDivisor(total);
  // The log-sum-exp of the whole row from the merged max and sum.
  Expr lse =
      spec.lse ? logSumExp(call(rowMax, batch.index({i})), total) : Expr();

  stages["splitlanes"] = laneMax.lanes;
  stages["splitmax"] = splitMax;
  stages["num"] = num;
  stages["den"] = den;
  stages["acc"] = acc;
  stages["splits"] = splitResults;
  stages["rowmax"] = rowMax;
  stages["weight"] = weight;
  stages["rowden"] = rowDen;
  stages["merged"] = merged;
  domains["rg"] = laneMax.groups;
  domains["rl"] = laneMax.lanesR;
  domains["den"] = rs;
  domains["acc"] = rj;
  domains["merge"] = rc;
  std::map<std::string, int64_t> info = {
      {"keySplit", split},
      {"keys", staticKeys ? *staticKeys : 0},
      {"plainQuery", plainQuery(spec.featureMap, spec.query)},
      {"steps", 1},
      {"fewRows", fewRows}};
  // Batch dims over which K and V broadcast (grouped-query attention: the
  // query heads of a group share one KV head): the schedule runs them
  // inside each split, so the split's K and V are read from memory once
  // for the whole group.
  for (size_t t = 0; t < batch.lead.size(); ++t) {
    auto extent = Halide::Internal::as_const_int(batch.lead[t]);
    bool shared = !extent || *extent != 1;
    for (const TensorFunc *operand : {&k, &v}) {
      size_t lead = operand->rank() - 2, offset = batch.lead.size() - lead;
      // A dim the operand lacks broadcasts too, but is plain batch work
      // here: only an explicit 1 (a KV head's group dim) is run inside a
      // part, so the parts keep the other dims' parallelism.
      if (t < offset) {
        shared = false;
        continue;
      }
      auto own = Halide::Internal::as_const_int(operand->shape[t - offset]);
      shared = shared && own && *own == 1;
    }
    // Q broadcasting too would make the dim plain batch work.
    size_t qLead = q.rank() - 2, qOffset = batch.lead.size() - qLead;
    if (t >= qOffset) {
      auto own = Halide::Internal::as_const_int(q.shape[t - qOffset]);
      shared = shared && !(own && *own == 1);
    } else {
      shared = false;
    }
    if (shared)
      info["kvShared" + std::to_string(t)] = 1;
  }
  FailureOr<size_t> opAt =
      bindAttention(op, Family::RowAttention, result, batch, i, e, out, lse,
                    stages, domains, info);
  if (failed(opAt))
    return failure();
  std::ostringstream form;
  auto staticSplits = Halide::Internal::as_const_int(splits);
  auto describeSplits = [&](const char *what) {
    if (staticSplits && *staticSplits == 1)
      form << *staticKeys << " keys in one of the " << what << " of "
           << split;
    else if (staticSplits)
      form << *staticKeys << " keys in " << *staticSplits << " " << what
           << " of " << split;
    else
      form << what << " of " << split << " keys, as many as m needs at run "
           << "time";
    if (ragged && staticSplits && *staticSplits > 1)
      form << ", the last of " << *staticKeys % split;
  };
  if (fewRows) {
    form << "split-KV for few query rows (n = "
         << *Halide::Internal::as_const_int(batch.n)
         << " <= attention.fewRows = " << options.fewRows << "): ";
    describeSplits("parts");
    form << " (attention.keyPart); every part of every problem is a "
            "parallel task that reads its rows of K and V once, in place";
    std::string dims;
    for (size_t t = 0; t < batch.lead.size(); ++t)
      if (info.count("kvShared" + std::to_string(t)))
        dims += (dims.empty() ? "" : ", ") + std::to_string(t);
    if (!dims.empty())
      form << "; K and V broadcast over batch dim " << dims
           << " (grouped-query): a part serves every query head of its "
              "group";
  } else {
    form << "key splits: ";
    describeSplits("splits");
    form << " (" << (spec.causal ? "attention.causalKeySplit"
                                 : "attention.keySplit")
         << "), merged by their maxima and sums";
  }
  if (spec.causal)
    form << "; causal: the splits after a query block's last row are "
            "skipped";
  if (spec.lse)
    form << "; the row log-sum-exp from the merged max and sum, in the "
            "output's tiles";
  form << bf16WeightsForm(op, bf16WeightsUnused);
  algorithm.ops[*opAt].form = form.str();
  return success();
}

// attn.attention_grad (design §7, FlashAttention-2's recomputation) in two
// passes, neither of which stores an n x m matrix, or, with the forward's
// saved lse and output, in one pass (below, where `onePass` is decided):
//
// The row pass, per block of query rows (over all keys, like row
// attention): <name>_scores (b, i, j) = scale Q K^T (through <name>_keyT,
// keys innermost), its lane maxima and <name>_max, <name>_num = exp(S -
// max) (0 where hidden), <name>_den = sum num, <name>_dp (b, i, j) = dO V^T
// (through <name>_valueT), <name>_rowdot = sum num dp; then
// dS = num / den (dp - rowdot / den) and <name>_dqacc (b, i, d) = sum_j dS
// K. <name>_rows (b, i, x) carries dQ for x < dk, then the row's
// log-sum-exp (x = dk) and D = rowsum(P dP) (x = dk + 1).
//
// The key pass, per block of keys, over the queries in chunks (P needs
// only the row's log-sum-exp, so nothing spans a whole row):
// <name>_pT (b, j, i) = exp(scale K Q^T - lse) (through <name>_queryT,
// queries innermost; 0 where hidden), <name>_dpT (b, j, i) = V dO^T
// (through <name>_cotangentT), and <name>_kvacc (b, j, x) = sum_i
// dS^T Q for x < dk and P^T dO for x >= dk: one accumulator, so both
// products share each chunk's pT and dpT. <name>_keys = kvacc, scaled by
// `scale` for x < dk.
//
// With a mask, the scores of both passes add it (the key pass through
// <name>_maskT, the mask transposed over its own dims), and an entry whose
// mask is -inf is hidden as a causal one is, except in a NaN row, where its
// P is NaN (the softmax rule of the reference: a NaN row is NaN
// everywhere).
//
// The results dQ, dK and dV are slices of rows and keys (elementwise ops).
LogicalResult KernelBuilder::lowerAttentionGrad(Operation *operation) {
  auto op = cast<AttentionGradOp>(operation);
  const TensorFunc &q = get(op.getQuery());
  const TensorFunc &k = get(op.getKey());
  const TensorFunc &v = get(op.getValue());
  const TensorFunc &dO = get(op.getCotangent());
  std::optional<TensorFunc> maskFunc;
  if (op.getMask())
    maskFunc = get(op.getMask());
  const TensorFunc *mask = maskFunc ? &*maskFunc : nullptr;
  std::string name = opFuncName(op);
  Halide::Type type = q.type;
  size_t qr = q.rank(), kr = k.rank(), vr = v.rank(), gr = dO.rank();
  Expr n = q.shape[qr - 2], dk = q.shape[qr - 1], m = k.shape[kr - 2],
       dv = v.shape[vr - 1];
  requireEqual(k.shape[kr - 1], dk, name + " feature dim of key");
  requireEqual(v.shape[vr - 2], m, name + " positions of value");
  requireEqual(dO.shape[gr - 2], n, name + " rows of the cotangent");
  requireEqual(dO.shape[gr - 1], dv, name + " columns of the cotangent");
  std::vector<const TensorFunc *> operands = {&q, &k, &v};
  if (mask) {
    size_t mr = mask->rank();
    requireEqual(mask->shape[mr - 2], n, name + " rows of the mask");
    requireEqual(mask->shape[mr - 1], m, name + " columns of the mask");
    operands.push_back(mask);
  }
  FailureOr<BatchedLayout> layout = batchedLayout(op, operands, n, dk, name);
  if (failed(layout))
    return failure();
  const BatchedLayout &batch = *layout;
  // The cotangent has the forward result's shape: its leading dims are the
  // broadcast of the operands' and do not broadcast themselves.
  for (size_t d = 0; d + 2 < gr && d < batch.lead.size(); ++d)
    requireEqual(dO.shape[gr - 3 - d], batch.lead[batch.lead.size() - 1 - d],
                 name + " leading dim " +
                     std::to_string(batch.lead.size() - 1 - d) +
                     " of the cotangent");
  bool causal = op.getCausal();
  Expr scale = constant(type, op.getScale().convertToDouble());
  auto visible = [&](Expr row, Expr col) -> Expr {
    return causal ? col <= row : Halide::Internal::const_true();
  };
  Var i("i"), j("j"), x("x");

  // The row pass.
  Func keyT(name + "_keyT"), valueT(name + "_valueT"), dot(name + "_dot"),
      scores(name + "_scores"), dpAcc(name + "_dpacc"), dp(name + "_dp"),
      max(name + "_max"), num(name + "_num"), den(name + "_den"),
      rowDot(name + "_rowdot"), dqAcc(name + "_dqacc"), rows(name + "_rows");
  // The copies clamp their row index: a register tile that overlaps the
  // end of a ragged block or chunk computes (and never uses) entries past
  // it, which must still read inside the operands.
  Expr lastKey = Halide::min(j, m - 1), lastQuery = Halide::min(i, n - 1);
  // Rows of Q, dO, K and V read in place by the products: a dynamic size
  // splits with guards, whose producers are still computed for whole
  // blocks, so those reads clamp too (static sizes shift the last block
  // inwards and need no clamp).
  bool dynamicRows = !Halide::Internal::as_const_int(n),
       dynamicKeys = !Halide::Internal::as_const_int(m);
  Expr queryRow = dynamicRows ? lastQuery : Expr(i);
  Expr keyRow = dynamicKeys ? lastKey : Expr(j);
  // The mask's entry of (i, j), and whether it hides the score (-inf, as
  // in the forward). The scores add it with -inf replaced by the lowest
  // float (chosen between bit patterns: no inf reaches the arithmetic,
  // which the fast-math flags assume), so a hidden score stays finite.
  auto maskAt = [&](Expr row, Expr col) -> Expr {
    return batch.operand(*mask, {row, col});
  };
  auto finiteMask = [&](Expr value) -> Expr {
    Halide::Type bits = Halide::UInt(type.bits());
    return Halide::reinterpret(
        type,
        Halide::select(isNegInf(value), Halide::reinterpret(bits, lowest(type)),
                       Halide::reinterpret(bits, value)));
  };
  auto shown = [&](Expr row, Expr col, Expr maskValue) -> Expr {
    Expr open = visible(row, col);
    return mask ? open && !isNegInf(maskValue) : open;
  };
  // The key pass's P and dS by keys (b, j, i), queries innermost, from the
  // row log-sum-exp and D (Funcs over (b, i)): per key block, shared by
  // the two-pass key pass and the one pass.
  struct KeyScores {
    Func queryT, cotangentT, maskT, dotT, pT, dpTAcc, dpT, dST;
    RDom rdT, reT;
  };
  auto keyScores = [&](Func rowLse, Func rowDelta) {
    Func queryT(name + "_queryT"), cotangentT(name + "_cotangentT"),
        maskT(name + "_maskT"), dotT(name + "_dotT"), pT(name + "_pT"),
        dpTAcc(name + "_dpTacc"), dpT(name + "_dpT"), dST(name + "_dsT");
    define(queryT, batch.vars({x, i}), batch.operand(q, {lastQuery, x}));
    define(cotangentT, batch.vars({x, i}), batch.operand(dO, {lastQuery, x}));
    RDom rdT(0, dk, name + "_rdT"), reT(0, dv, name + "_reT");
    define(dotT, batch.vars({j, i}), constant(type, 0.0));
    update(dotT, batch.index({j, i}),
           call(dotT, batch.index({j, i})) +
               batch.operand(k, {keyRow, rdT}) *
                   call(queryT, batch.index({rdT, i})));
    // Hidden entries by a factor of 0, not a select: a call inside a select
    // would need only the visible queries of a key tile, a region of varying
    // size that the tile's unrolled product cannot compute (f64, n below a
    // tile). The exponent of a visible entry is <= 0 (the row's log-sum-exp
    // bounds its scores); capping it keeps a hidden one finite.
    // keepNaN where visible: the cap would turn a NaN row's exponent into 0
    // (x86's min returns its second operand for a NaN first); a hidden entry
    // keeps the capped, finite exponent, so its factor 0 gives exactly 0.
    // The call is in both arms of the select, so its bounds stay the tile's.
    // The mask by keys (queries innermost, as pT): a transposed copy over
    // the mask's own dims, so a mask shared by the heads is transposed once.
    Expr keyMask;
    if (mask) {
      size_t mr = mask->rank();
      std::vector<Var> vars = makeVars(mr);
      Index at = toExprs(vars);
      std::swap(at[mr - 2], at[mr - 1]);
      define(maskT, vars, (*mask)(at));
      std::vector<Expr> shape = mask->shape;
      std::swap(shape[mr - 2], shape[mr - 1]);
      keyMask =
          batch.operand(TensorFunc{maskT, shape, type}, {lastKey, lastQuery});
    }
    Expr scoreT = call(dotT, batch.index({j, i})) * scale;
    if (mask)
      scoreT = scoreT + finiteMask(keyMask);
    Expr keyLse = call(rowLse, batch.index({i}));
    Expr exponentT = scoreT - keyLse;
    Expr cappedT = Halide::min(exponentT, constant(type, 0.0));
    Expr shownT = shown(i, j, keyMask);
    // A masked entry's P is 0, or NaN in a NaN row (its lse NaN): the
    // softmax of a row with a NaN is NaN at every entry, a -inf one included
    // (the reference's rule); an entry hidden by `causal` is always 0.
    Expr hiddenFactor = constant(type, 0.0);
    if (mask)
      hiddenFactor =
          Halide::select(visible(i, j), keepNaN(keyLse, constant(type, 0.0)),
                         constant(type, 0.0));
    define(pT, batch.vars({j, i}),
           softmaxExp(
               Halide::select(shownT, keepNaN(exponentT, cappedT), cappedT)) *
               Halide::select(shownT, constant(type, 1.0), hiddenFactor));
    define(dpTAcc, batch.vars({j, i}), constant(type, 0.0));
    update(dpTAcc, batch.index({j, i}),
           call(dpTAcc, batch.index({j, i})) +
               batch.operand(v, {keyRow, reT}) *
                   call(cotangentT, batch.index({reT, i})));
    define(dpT, batch.vars({j, i}), call(dpTAcc, batch.index({j, i})));
    define(dST, batch.vars({j, i}),
           call(pT, batch.index({j, i})) * (call(dpT, batch.index({j, i})) -
                                            call(rowDelta, batch.index({i}))));
    return KeyScores{queryT, cotangentT, maskT, dotT, pT,
                     dpTAcc, dpT,        dST,   rdT,  reT};
  };

  // The forward's row log-sum-exp (b, i): P = exp(S - lse) directly, no
  // max or exp sum; an empty row's exponentials are 0 in every pass
  // (finiteSavedLse).
  auto savedRowLse = [&](Value saved) {
    const TensorFunc &savedLse = get(saved);
    for (size_t t = 0; t < batch.lead.size(); ++t)
      requireEqual(savedLse.shape[t], batch.lead[t],
                   name + " leading dim " + std::to_string(t) + " of lse");
    requireEqual(savedLse.shape.back(), n, name + " rows of lse");
    Index lseAt = toExprs(batch.batchVars);
    lseAt.push_back(i);
    Func rowLse(name + "_savedlse");
    define(rowLse, batch.vars({i}), finiteSavedLse(savedLse(lseAt)));
    return rowLse;
  };

  // The results: slices of the passes' outputs (inlined, or copied out
  // when returned).
  auto result = [&](Value value, const std::string &suffix, Func from,
                    Expr offset, Expr rowsExtent, Expr cols) -> LogicalResult {
    std::vector<Expr> computed = batch.lead;
    computed.push_back(rowsExtent);
    computed.push_back(cols);
    FailureOr<std::vector<Expr>> shape =
        extents(op, cast<RankedTensorType>(value.getType()), computed);
    if (failed(shape))
      return failure();
    Func f(name + suffix);
    define(f, batch.vars({i, x}), call(from, batch.index({i, x + offset})));
    TensorFunc tensor{f, *shape, type};
    values[value] = tensor;
    algorithm.ops.push_back(
        {Family::Elementwise, f.name(), tensor, {}, {}, {}});
    return success();
  };

  // One pass (FlashAttention-2's loop) when the forward saved lse and O and
  // the static sizes split into whole blocks: per batch index (the parallel
  // tasks), key blocks J of gradKeyBlock keys, then query blocks I of
  // gradQueryBlock queries. Each (J, I) block's P and dS are computed once
  // and read by both the dK/dV accumulator (<name>_kv, over I) and dQ
  // (<name>_dq, over J): five products, no row pass. The two updates run
  // over RDoms of one name and shape (row in block, I, J), which lets the
  // schedule fuse their loops (compute_with matches loops by name).
  using Halide::Internal::as_const_int;
  // The number of batch indices, when every leading dim is static.
  std::optional<int64_t> tasks = 1;
  for (const Expr &lead : batch.lead) {
    std::optional<int64_t> extent = as_const_int(lead);
    tasks = tasks && extent ? std::optional<int64_t>(*tasks * *extent)
                            : std::nullopt;
  }
  std::optional<int64_t> rowsN = as_const_int(n), keysM = as_const_int(m),
                         staticDk = as_const_int(dk),
                         staticDv = as_const_int(dv);
  int64_t queryBlock = options.gradQueryBlock, keyBlock = options.gradKeyBlock;
  bool onePass = op.getOutput() && op.getLse() && queryBlock > 0 &&
                 keyBlock > 0 && rowsN && keysM && *rowsN % queryBlock == 0 &&
                 *keysM % keyBlock == 0 && staticDk && staticDv && tasks &&
                 *tasks >= 2;
  if (onePass) {
    const TensorFunc &forward = get(op.getOutput());
    Func lseRows = savedRowLse(op.getLse()), delta(name + "_delta");
    RDom ro(0, dv, name + "_ro");
    define(delta, batch.vars({i}), constant(type, 0.0));
    update(delta, batch.index({i}),
           call(delta, batch.index({i})) +
               batch.operand(dO, {i, ro}) * batch.operand(forward, {i, ro}));
    KeyScores sc = keyScores(lseRows, delta);
    int qb = static_cast<int>(queryBlock), kb = static_cast<int>(keyBlock);
    Expr queryBlocks = static_cast<int>(*rowsN / queryBlock),
         keyBlocks = static_cast<int>(*keysM / keyBlock);
    Var blk("blk"), c("c");
    // The reads of Q, dO and K clamp their column: register tiles round the
    // columns up to whole vectors (computed, never read).
    // dK and dV of a key block from one query block: [dS^T Q, P^T dO].
    RDom rii(0, qb, name + "_rii");
    Expr query = blk * qb + rii;
    Func kvBlockAcc(name + "_kvblockacc"), kvBlock(name + "_kvblock"),
        kv(name + "_kv");
    define(kvBlockAcc, batch.vars({blk, j, c}), constant(type, 0.0));
    update(kvBlockAcc, batch.index({blk, j, c}),
           call(kvBlockAcc, batch.index({blk, j, c})) +
               Halide::select(
                   c < dk,
                   call(sc.dST, batch.index({j, query})) *
                       batch.operand(q, {query, Halide::min(c, dk - 1)}),
                   call(sc.pT, batch.index({j, query})) *
                       batch.operand(
                           dO, {query, Halide::clamp(c - dk, 0, dv - 1)})));
    define(kvBlock, batch.vars({blk, j, c}),
           call(kvBlockAcc, batch.index({blk, j, c})));
    RDom rk(0, kb, 0, queryBlocks, 0, keyBlocks, name + "_blocks");
    // Causal: a key block after the last query of a query block is hidden
    // there (P = 0, adds exactly 0); the same condition on both RDoms keeps
    // their loops alike, and Halide narrows the query-block loop by it, so
    // the block's P and dS are not computed either.
    auto someVisible = [&](Expr queryBlockIndex, Expr keyBlockIndex) {
      return keyBlockIndex * kb <= queryBlockIndex * qb + (qb - 1);
    };
    if (causal)
      rk.where(someVisible(rk.y, rk.z));
    Expr key = rk.z * kb + rk.x;
    define(kv, batch.vars({j, c}), constant(type, 0.0));
    update(kv, batch.index({key, c}),
           call(kv, batch.index({key, c})) +
               call(kvBlock, batch.index({rk.y, key, c})));
    // dQ of a query block from one key block: dS K.
    RDom rjj(0, kb, name + "_rjj");
    Expr keyInBlock = blk * kb + rjj;
    Func dqBlockAcc(name + "_dqblockacc"), dqBlock(name + "_dqblock"),
        dq(name + "_dq"), dQuery(name + "_dqscaled");
    define(dqBlockAcc, batch.vars({blk, i, x}), constant(type, 0.0));
    update(dqBlockAcc, batch.index({blk, i, x}),
           call(dqBlockAcc, batch.index({blk, i, x})) +
               call(sc.dST, batch.index({keyInBlock, i})) *
                   batch.operand(k, {keyInBlock, Halide::min(x, dk - 1)}));
    define(dqBlock, batch.vars({blk, i, x}),
           call(dqBlockAcc, batch.index({blk, i, x})));
    RDom rq(0, qb, 0, queryBlocks, 0, keyBlocks, name + "_blocks");
    if (causal)
      rq.where(someVisible(rq.y, rq.z));
    Expr row = rq.y * qb + rq.x;
    define(dq, batch.vars({i, x}), constant(type, 0.0));
    update(dq, batch.index({row, x}),
           call(dq, batch.index({row, x})) +
               call(dqBlock, batch.index({rq.z, row, x})));
    define(dQuery, batch.vars({i, x}), call(dq, batch.index({i, x})) * scale);
    Func keys(name + "_keys");
    Expr kvValue = call(kv, batch.index({j, x}));
    define(keys, batch.vars({j, x}),
           Halide::select(x < dk, kvValue * scale, kvValue));
    std::vector<Expr> keysShape = batch.lead;
    keysShape.push_back(m);
    keysShape.push_back(Halide::Internal::simplify(dk + dv));
    std::map<std::string, Func> stages = {{"lse", lseRows},
                                          {"delta", delta},
                                          {"queryT", sc.queryT},
                                          {"cotangentT", sc.cotangentT},
                                          {"dotT", sc.dotT},
                                          {"pT", sc.pT},
                                          {"dpTacc", sc.dpTAcc},
                                          {"dpT", sc.dpT},
                                          {"dsT", sc.dST},
                                          {"kvblockacc", kvBlockAcc},
                                          {"kvblock", kvBlock},
                                          {"kv", kv},
                                          {"dqblockacc", dqBlockAcc},
                                          {"dqblock", dqBlock},
                                          {"dq", dq}};
    if (mask)
      stages["maskT"] = sc.maskT;
    std::map<std::string, RDom> domains = {
        {"delta", ro},       {"dotT", sc.rdT},    {"dpTacc", sc.reT},
        {"kvblockacc", rii}, {"dqblockacc", rjj}, {"kv", rk},
        {"dq", rq}};
    std::map<std::string, int64_t> info = {
        {"queryBlock", queryBlock}, {"keyBlock", keyBlock},
        {"queries", *rowsN},        {"keys", *keysM},
        {"dk", *staticDk},          {"kvCols", *staticDk + *staticDv},
        {"causal", causal}};
    algorithm.ops.push_back({Family::AttentionGradOnePass, keys.name(),
                             TensorFunc{keys, keysShape, type}, stages, domains,
                             info});
    algorithm.ops.back().loc = op.getLoc();
    algorithm.ops.back().form =
        "fused softmax backward, one pass (per batch index: key blocks of " +
        std::to_string(keyBlock) + ", query blocks of " +
        std::to_string(queryBlock) +
        "; P from the saved log-sum-exp, D = rowsum(dO O) of the saved "
        "output; each block's P and dS feed dK, dV and dQ)" +
        (causal ? "; causal: blocks past the diagonal skipped, hidden "
                  "entries of the others computed and masked"
                : "");
    if (failed(result(op.getDquery(), "_dquery", dQuery, 0, n, dk)) ||
        failed(result(op.getDkey(), "_dkey", keys, 0, m, dk)) ||
        failed(result(op.getDvalue(), "_dvalue", keys, dk, m, dv)))
      return failure();
    return success();
  }

  define(keyT, batch.vars({x, j}), batch.operand(k, {lastKey, x}));
  define(valueT, batch.vars({x, j}), batch.operand(v, {lastKey, x}));
  RDom rd(0, dk, name + "_rd"), re(0, dv, name + "_re");
  define(dot, batch.vars({i, j}), constant(type, 0.0));
  update(dot, batch.index({i, j}),
         call(dot, batch.index({i, j})) +
             batch.operand(q, {queryRow, rd}) *
                 call(keyT, batch.index({rd, j})));
  Expr rowMask = mask ? maskAt(queryRow, keyRow) : Expr();
  define(scores, batch.vars({i, j}),
         mask ? call(dot, batch.index({i, j})) * scale + finiteMask(rowMask)
              : call(dot, batch.index({i, j})) * scale);
  define(dpAcc, batch.vars({i, j}), constant(type, 0.0));
  update(dpAcc, batch.index({i, j}),
         call(dpAcc, batch.index({i, j})) +
             batch.operand(dO, {queryRow, re}) *
                 call(valueT, batch.index({re, j})));
  define(dp, batch.vars({i, j}), call(dpAcc, batch.index({i, j})));
  Index rowAt = batch.index({i});
  RDom rs(0, m, name + "_rs"), rt(0, m, name + "_rt");
  LaneMax laneMax;
  Expr inverse, lse;
  if (Value saved = op.getLse()) {
    Func rowLse = savedRowLse(saved);
    lse = call(rowLse, rowAt);
    // Capped at 0 as in the key pass, keeping a NaN row's NaN.
    Expr exponent = call(scores, batch.index({i, j})) - lse;
    define(num, batch.vars({i, j}),
           Halide::select(
               shown(i, j, rowMask),
               softmaxExp(keepNaN(exponent,
                                  Halide::min(exponent, constant(type, 0.0)))),
               constant(type, 0.0)));
    inverse = constant(type, 1.0);
  } else {
    define(max, batch.vars({i}), lowest(type));
    laneMax = defineLaneMax(
        max, batch.vars({i}), rowAt, 0, m,
        [&](Expr key) {
          return call(scores, batch.index({i, Halide::min(key, m - 1)}));
        },
        [&](Expr key) {
          Expr at = Halide::min(key, m - 1);
          return key < m && shown(i, key, mask ? maskAt(queryRow, at) : Expr());
        },
        {name + "_maxlanes", name + "_rg", name + "_rl"}, type);
    define(num, batch.vars({i, j}),
           Halide::select(
               shown(i, j, rowMask),
               softmaxExp(call(scores, batch.index({i, j})) - call(max, rowAt)),
               constant(type, 0.0)));
    define(den, batch.vars({i}), constant(type, 0.0));
    update(den, rowAt, call(den, rowAt) + call(num, batch.index({i, rs})));
    // Only a row whose visible scores are all -inf sums to 0: its P is 0
    // (the softmax rule, docs/reliability.md), and so are its dS and D.
    Expr rowSum = softmaxDivisor(call(den, rowAt));
    inverse = constant(type, 1.0) / rowSum;
    // Halide's log turns NaN into a number; a NaN row keeps a NaN lse, so
    // the key pass's P of the row is NaN too. An all -inf row has the
    // lowest max and log 1: exp(-inf - lse) is 0.
    lse = keepNaN(rowSum, call(max, rowAt) + Halide::log(rowSum));
  }
  define(rowDot, batch.vars({i}), constant(type, 0.0));
  update(rowDot, rowAt,
         call(rowDot, rowAt) +
             call(num, batch.index({i, rt})) * call(dp, batch.index({i, rt})));
  Expr delta = call(rowDot, rowAt) * inverse;
  // dS once per score (computed per chunk of keys), not once per register
  // tile of dQ that reads it.
  Func dS(name + "_ds");
  define(dS, batch.vars({i, j}),
         call(num, batch.index({i, j})) * inverse *
             (call(dp, batch.index({i, j})) - delta));
  RDom rj(0, m, name + "_rj");
  define(dqAcc, batch.vars({i, x}), constant(type, 0.0));
  update(dqAcc, batch.index({i, x}),
         call(dqAcc, batch.index({i, x})) +
             call(dS, batch.index({i, rj})) * batch.operand(k, {rj, x}));
  define(rows, batch.vars({i, x}),
         Halide::select(x < dk,
                        call(dqAcc, batch.index({i, Halide::min(x, dk - 1)})) *
                            scale,
                        x == dk, lse, delta));
  std::vector<Expr> rowsShape = batch.lead;
  rowsShape.push_back(n);
  rowsShape.push_back(Halide::Internal::simplify(dk + 2));
  std::map<std::string, Func> rowStages = {
      {"keyT", keyT},   {"valueT", valueT}, {"dot", dot}, {"scores", scores},
      {"dpacc", dpAcc}, {"dp", dp},         {"num", num}, {"rowdot", rowDot},
      {"ds", dS},       {"dqacc", dqAcc}};
  std::map<std::string, RDom> rowDomains = {
      {"dot", rd}, {"dpacc", re}, {"rowdot", rt}, {"dqacc", rj}};
  if (!op.getLse()) { // the row statistics, else saved by the forward
    rowStages["maxlanes"] = laneMax.lanes;
    rowStages["max"] = max;
    rowStages["den"] = den;
    rowDomains["rg"] = laneMax.groups;
    rowDomains["rl"] = laneMax.lanesR;
    rowDomains["den"] = rs;
  }
  auto staticKeys = Halide::Internal::as_const_int(m);
  size_t rowPass = algorithm.ops.size();
  std::map<std::string, int64_t> rowInfo = {
      {"keys", staticKeys ? *staticKeys : 0}, {"causal", causal}};
  algorithm.ops.push_back({Family::AttentionGradRows, rows.name(),
                           TensorFunc{rows, rowsShape, type}, rowStages,
                           rowDomains, rowInfo});
  algorithm.ops.back().loc = op.getLoc();

  // The key pass.
  Func rowLse(name + "_lse"), rowDelta(name + "_delta"), kvAcc(name + "_kvacc"),
      keys(name + "_keys");
  define(rowLse, batch.vars({i}), call(rows, batch.index({lastQuery, dk})));
  define(rowDelta, batch.vars({i}),
         call(rows, batch.index({lastQuery, dk + 1})));
  KeyScores scoresT = keyScores(rowLse, rowDelta);
  auto [queryT, cotangentT, maskT, dotT, pT, dpTAcc, dpT, dST, rdT, reT] =
      scoresT;
  RDom ri(0, n, name + "_ri");
  define(kvAcc, batch.vars({j, x}), constant(type, 0.0));
  update(kvAcc, batch.index({j, x}),
         call(kvAcc, batch.index({j, x})) +
             Halide::select(
                 x < dk,
                 call(dST, batch.index({j, ri})) *
                     batch.operand(q, {ri, Halide::min(x, dk - 1)}),
                 call(pT, batch.index({j, ri})) *
                     batch.operand(dO, {ri, Halide::max(x - dk, 0)})));
  Expr kv = call(kvAcc, batch.index({j, x}));
  define(keys, batch.vars({j, x}), Halide::select(x < dk, kv * scale, kv));
  std::vector<Expr> keysShape = batch.lead;
  keysShape.push_back(m);
  keysShape.push_back(Halide::Internal::simplify(dk + dv));
  std::map<std::string, Func> keyStages = {
      {"lse", rowLse},   {"delta", rowDelta}, {"queryT", queryT},
      {"cotangentT", cotangentT}, {"dotT", dotT}, {"pT", pT},
      {"dpTacc", dpTAcc}, {"dpT", dpT},        {"dsT", dST},
      {"kvacc", kvAcc}};
  if (mask)
    keyStages["maskT"] = maskT;
  std::map<std::string, RDom> keyDomains = {
      {"dotT", rdT}, {"dpTacc", reT}, {"kvacc", ri}};
  auto staticRows = Halide::Internal::as_const_int(n);
  std::map<std::string, int64_t> keyInfo = {
      {"queries", staticRows ? *staticRows : 0}, {"causal", causal}};
  algorithm.ops.push_back({Family::AttentionGradKeys, keys.name(),
                           TensorFunc{keys, keysShape, type}, keyStages,
                           keyDomains, keyInfo});
  algorithm.ops.back().loc = op.getLoc();

  if (failed(result(op.getDquery(), "_dquery", rows, 0, n, dk)) ||
      failed(result(op.getDkey(), "_dkey", keys, 0, m, dk)) ||
      failed(result(op.getDvalue(), "_dvalue", keys, dk, m, dv)))
    return failure();
  std::string hidden =
      causal ? "; causal: hidden entries are computed and masked" : "";
  algorithm.ops[rowPass].form =
      std::string("fused softmax backward, row pass (scores, dP and dQ over "
                  "every key of a query block; ") +
      (op.getLse() ? "P from the saved row log-sum-exp, "
                   : "the row log-sum-exp, ") +
      "D = rowsum(P dP))" + hidden;
  algorithm.ops[rowPass + 1].form =
      "fused softmax backward, key pass (P from the row log-sum-exp and dP "
      "per chunk of queries, then dK and dV in one accumulator)" +
      hidden;
  return success();
}
