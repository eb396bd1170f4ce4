//===- AlgorithmEfficient.cpp - Efficient attention -----------------------===//
//
// attn.efficient as one fused algorithm: the context K^T V first, then the
// product with Q; with AlgorithmOptions::efficientChunk, the softmax over
// positions per chunk of positions, merged by rescaling.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"

using namespace mlir;
using namespace mlir::attn::codegen::detail;

// E = rho_q(Q) (rho_k(K)^T V). Softmax variant: <name>_qmax/_qexp/_qsum
// (per query over dk), <name>_kmax/_kexp/_ksum (per key feature over the m
// positions: reductions over positions), <name>_context = kexp^T V / ksum
// (dk x dv, a reduction over positions), result = qexp context / qsum.
// Scaling variant: context = K^T V / n, result = Q context (rho = x/sqrt(n)
// on both sides is one division by n). With the op's opt-in to bf16
// products (softmax, per-chunk form), kexp, qexp and context_norm are bf16
// and both products reduce in pairs (docs/precision.md).
LogicalResult KernelBuilder::lowerEfficient(Operation *operation) {
  auto op = cast<EfficientAttentionOp>(operation);
  const TensorFunc &q = get(op.getQuery());
  const TensorFunc &k = get(op.getKey());
  const TensorFunc &v = get(op.getValue());
  std::string name = opFuncName(op);
  Halide::Type type = q.type;
  FailureOr<AttentionLayout> layout =
      attentionLayout(op, q, k, v, /*mask=*/nullptr, name);
  if (failed(layout))
    return failure();
  const AttentionLayout &batch = *layout;
  Expr n = batch.n, dk = batch.dk, m = batch.m;
  Var i("i"), j("j"), e("e"), d("d");
  Expr zero = constant(type, 0.0);
  std::map<std::string, Func> stages;
  std::map<std::string, RDom> domains;
  RDom rj(0, m, name + "_rj"), rd(0, dk, name + "_rd");
  Func context(name + "_context"), acc(name + "_acc"), result(name);
  Func contextNorm(name + "_context_norm");
  // The chunk tasks' register tiles need static positions and columns.
  auto keys = Halide::Internal::as_const_int(m);
  int64_t chunk = options.efficientChunk;
  bool chunked = chunk > 0 && keys && *keys % chunk == 0 &&
                 *keys >= 2 * chunk && Halide::Internal::as_const_int(batch.dv);
  // The op's opt-in (kAllowBf16Products): the weights of both softmaxes and
  // the normalized context are rounded to bf16, so K^T V reduces positions
  // and Q context features in pairs (vdpbf16ps).
  std::string bf16Unused;
  std::optional<TensorFunc> queryBf16 = storedBf16(op.getQuery());
  std::optional<TensorFunc> valueBf16 = storedBf16(op.getValue());
  auto staticDk = Halide::Internal::as_const_int(dk);
  if (op->hasAttr(kAllowBf16Products)) {
    if (!options.bf16DotProducts)
      bf16Unused = kNoBf16PairsReason;
    else if (op.getVariant() != EfficientVariant::softmax)
      bf16Unused = "the variant is not softmax";
    else if (!queryBf16 || !storedBf16(op.getKey()) || !valueBf16)
      bf16Unused = "Q, K and V are not all bf16";
    else if (!staticDk || *staticDk % 2 != 0)
      bf16Unused = "dk is not static and even";
    else if (!chunked || chunk % 2 != 0)
      bf16Unused = "the positions are not in chunks (a static m, a multiple "
                   "of chunkedProduct.chunk, even, and at least two chunks; "
                   "a static dv)";
  }
  bool bf16Products = op->hasAttr(kAllowBf16Products) && bf16Unused.empty();
  Halide::Type bf16 = Halide::BFloat(16);
  auto widen = [](Expr x) { return Halide::cast<float>(x); };
  if (op.getVariant() == EfficientVariant::softmax) {
    Func qmax(name + "_qmax"), qexp(name + "_qexp"), qsum(name + "_qsum");
    Func kmax(name + "_kmax"), kexp(name + "_kexp"), ksum(name + "_ksum");
    // The row sums share the final product's domain, so the schedule can
    // compute them in its loop (compute_with). In bf16 pairs the product
    // reduces (feature in pair, pair) and the sums take a domain of their
    // own.
    if (bf16Products)
      rd = RDom(0, 2, 0, dk / 2, name + "_rd");
    RDom rdq = bf16Products ? RDom(0, dk, name + "_rdq") : rd;
    // One stage: a row has only dk entries, so the schedule reduces each
    // row in vectors with one horizontal max (no lanes stage, unlike the
    // rows of attention scores, defineLaneMax).
    RDom rqmax(0, dk, name + "_rqmax");
    define(qmax, batch.vars({i}), lowest(type));
    update(qmax, batch.index({i}),
           Halide::max(call(qmax, batch.index({i})),
                       batch.operand(q, {i, rqmax})));
    // bf16 products: the weights are rounded, and their sums add the
    // rounded values, so the weights a product reads still sum to 1 after
    // the division (docs/precision.md).
    Expr queryExp =
        softmaxExp(batch.operand(q, {i, d}) - call(qmax, batch.index({i})));
    define(qexp, batch.vars({i, d}),
           bf16Products ? Halide::cast(bf16, queryExp) : queryExp);
    define(qsum, batch.vars({i}), zero);
    Expr rowWeight = call(qexp, batch.index({i, rdq}));
    update(qsum, batch.index({i}),
           call(qsum, batch.index({i})) +
               (bf16Products ? widen(rowWeight) : rowWeight));
    stages = {{"qmax", qmax}, {"qexp", qexp}, {"qsum", qsum},
              {"kmax", kmax}, {"kexp", kexp}, {"ksum", ksum}};
    domains = {{"qmax", rqmax}, {"qsum", rdq}};
    if (chunked) {
      // Per-chunk softmax over positions (AlgorithmOptions::efficientChunk):
      // chunk c's weights exp(K - max of the chunk) give its partial
      // context and sums; the merge rescales each chunk's by
      // exp(chunk max - max). No pass over K for the max alone.
      Var c("c");
      Expr size = static_cast<int32_t>(chunk);
      RDom rc(0, size, name + "_rc");
      RDom chunks(0, static_cast<int32_t>(*keys / chunk), name + "_rchunk");
      Func kmaxChunk(name + "_chunk_max"), ksumChunk(name + "_chunk_sum");
      Func contextChunk(name + "_chunk_context"), rescale(name + "_rescale");
      define(kmaxChunk, batch.vars({c, d}), lowest(type));
      update(kmaxChunk, batch.index({c, d}),
             Halide::max(call(kmaxChunk, batch.index({c, d})),
                         batch.operand(k, {c * size + rc, d})));
      define(ksumChunk, batch.vars({c, d}), zero);
      define(contextChunk, batch.vars({c, d, e}), zero);
      if (bf16Products) {
        // kexp (2, feature, position pair) and V (2, column, position
        // pair): a vector of either is 16 columns x the 2 positions one
        // vdpbf16ps reduces; a pair of kexp is one 32-bit broadcast.
        Var pair("pair");
        Expr half = static_cast<int32_t>(chunk / 2);
        Expr position = 2 * j + pair;
        define(
            kexp, batch.vars({j, d, pair}),
            Halide::cast(
                bf16, softmaxExp(batch.operand(k, {position, d}) -
                                 call(kmaxChunk, batch.index({j / half, d})))));
        Func valuePairs(name + "_valuePairs");
        define(valuePairs, batch.vars({j, e, pair}),
               batch.operand(*valueBf16, {position, e}));
        stages["valuePairs"] = valuePairs;
        update(
            ksumChunk, batch.index({c, d}),
            call(ksumChunk, batch.index({c, d})) +
                widen(call(kexp, batch.index({c * half + rc / 2, d, rc % 2}))));
        RDom rcp(0, 2, 0, half, name + "_rc_pairs");
        Expr positionPair = c * half + rcp.y;
        update(contextChunk, batch.index({c, d, e}),
               call(contextChunk, batch.index({c, d, e})) +
                   widen(call(kexp, batch.index({positionPair, d, rcp.x}))) *
                       widen(call(valuePairs,
                                  batch.index({positionPair, e, rcp.x}))));
        domains["chunk_context"] = rcp;
      } else {
        define(kexp, batch.vars({j, d}),
               softmaxExp(batch.operand(k, {j, d}) -
                          call(kmaxChunk, batch.index({j / size, d}))));
        Expr weight = call(kexp, batch.index({c * size + rc, d}));
        update(ksumChunk, batch.index({c, d}),
               call(ksumChunk, batch.index({c, d})) + weight);
        update(contextChunk, batch.index({c, d, e}),
               call(contextChunk, batch.index({c, d, e})) +
                   weight * batch.operand(v, {c * size + rc, e}));
        domains["chunk_context"] = rc;
      }
      define(kmax, batch.vars({d}), lowest(type));
      update(kmax, batch.index({d}),
             Halide::max(call(kmax, batch.index({d})),
                         call(kmaxChunk, batch.index({chunks, d}))));
      define(rescale, batch.vars({c, d}),
             softmaxExp(call(kmaxChunk, batch.index({c, d})) -
                        call(kmax, batch.index({d}))));
      Expr factor = call(rescale, batch.index({chunks, d}));
      define(ksum, batch.vars({d}), zero);
      update(ksum, batch.index({d}),
             call(ksum, batch.index({d})) +
                 factor * call(ksumChunk, batch.index({chunks, d})));
      define(context, batch.vars({d, e}), zero);
      update(context, batch.index({d, e}),
             call(context, batch.index({d, e})) +
                 factor * call(contextChunk, batch.index({chunks, d, e})));
      stages.insert({{"chunk_max", kmaxChunk},
                     {"chunk_sum", ksumChunk},
                     {"chunk_context", contextChunk},
                     {"rescale", rescale}});
      domains.insert({{"chunk_positions", rc}, {"chunks", chunks}});
    } else {
      RDom rjk(0, m, name + "_rjk");
      define(kmax, batch.vars({d}), lowest(type));
      update(kmax, batch.index({d}),
             Halide::max(call(kmax, batch.index({d})),
                         batch.operand(k, {rjk, d})));
      define(kexp, batch.vars({j, d}),
             softmaxExp(batch.operand(k, {j, d}) -
                        call(kmax, batch.index({d}))));
      define(ksum, batch.vars({d}), zero);
      update(ksum, batch.index({d}),
             call(ksum, batch.index({d})) + call(kexp, batch.index({rjk, d})));
      define(context, batch.vars({d, e}), zero);
      update(context, batch.index({d, e}),
             call(context, batch.index({d, e})) +
                 call(kexp, batch.index({rj, d})) * batch.operand(v, {rj, e}));
      domains["kmax"] = rjk;
    }
    Expr normalized = call(context, batch.index({d, e})) /
                      softmaxDivisor(call(ksum, batch.index({d})));
    define(acc, batch.vars({i, e}), zero);
    if (bf16Products) {
      // The normalized context (feature pair, column, 2), rounded: a
      // vector is 16 columns x the pair of features one vdpbf16ps reads.
      Var pair("pair");
      define(contextNorm, batch.vars({d, e, pair}),
             Halide::cast(bf16, Halide::Internal::substitute(
                                    d.name(), 2 * d + pair, normalized)));
      update(acc, batch.index({i, e}),
             call(acc, batch.index({i, e})) +
                 widen(call(qexp, batch.index({i, 2 * rd.y + rd.x}))) *
                     widen(call(contextNorm, batch.index({rd.y, e, rd.x}))));
    } else {
      define(contextNorm, batch.vars({d, e}), normalized);
      update(acc, batch.index({i, e}),
             call(acc, batch.index({i, e})) +
                 call(qexp, batch.index({i, rd})) *
                     call(contextNorm, batch.index({rd, e})));
    }
    stages["context_norm"] = contextNorm;
    // One division per query instead of one per output element: a divide
    // costs as much as several of the row's 32 FMAs per element.
    Func qinv(name + "_qinv");
    define(qinv, batch.vars({i}),
           constant(type, 1.0) / softmaxDivisor(call(qsum, batch.index({i}))));
    stages["qinv"] = qinv;
    define(result, batch.vars({i, e}),
           call(acc, batch.index({i, e})) * call(qinv, batch.index({i})));
  } else {
    define(context, batch.vars({d, e}), zero);
    update(context, batch.index({d, e}),
           call(context, batch.index({d, e})) +
               batch.operand(k, {rj, d}) * batch.operand(v, {rj, e}));
    define(acc, batch.vars({i, e}), zero);
    update(acc, batch.index({i, e}),
           call(acc, batch.index({i, e})) +
               batch.operand(q, {i, rd}) * call(context, batch.index({rd, e})));
    define(result, batch.vars({i, e}),
           call(acc, batch.index({i, e})) / Halide::cast(type, n));
  }
  stages["context"] = context;
  stages["acc"] = acc;
  stages["value"] = v.func;
  if (!domains.count("chunks"))
    domains["context"] = rj;
  domains["acc"] = rd;
  bind(op, Family::Efficient, {result, batch.shape, type}, stages, domains,
       {{"softmax", op.getVariant() == EfficientVariant::softmax},
        {"chunked", static_cast<int64_t>(domains.count("chunks"))},
        {"bf16Products", bf16Products}});
  if (op->hasAttr(kAllowBf16Products))
    algorithm.ops.back().form =
        bf16Products
            ? "weights and context rounded to bf16 "
              "(attn.allow_bf16_products): K^T V reduces positions and Q "
              "context features in pairs (vdpbf16ps)"
            : "attn.allow_bf16_products not used: " + bf16Unused;
  // `with_context` (softmax, f32 or f64, no broadcast batch: the verifier):
  // the normalized context the product read, copied out.
  if (Value saved = op.getNormalizedContext()) {
    Func contextOut(name + "_context_result");
    define(contextOut, batch.vars({d, e}),
           call(contextNorm, batch.index({d, e})));
    std::vector<Expr> shape = batch.lead;
    shape.push_back(dk);
    shape.push_back(batch.dv);
    values[saved] = {contextOut, shape, type};
    algorithm.ops.push_back(
        {Family::Elementwise, contextOut.name(), values[saved], {}, {}, {}});
    algorithm.ops.back().loc = op.getLoc();
    // The key softmax's log-sum-exp per feature, (..., 1, dk), from the
    // statistics the context used.
    Value keyLse = op.getKeyLse();
    Func lseOut(name + "_key_lse_result");
    define(lseOut, batch.vars({i, d}),
           logSumExp(call(stages.at("kmax"), batch.index({d})),
                     call(stages.at("ksum"), batch.index({d}))));
    std::vector<Expr> lseShape = batch.lead;
    lseShape.push_back(1);
    lseShape.push_back(dk);
    values[keyLse] = {lseOut, lseShape, type};
    algorithm.ops.push_back(
        {Family::Elementwise, lseOut.name(), values[keyLse], {}, {}, {}});
    algorithm.ops.back().loc = op.getLoc();
  }
  return success();
}
