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
// on both sides is one division by n).
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
  Expr queryWeight;
  if (op.getVariant() == EfficientVariant::softmax) {
    Func qmax(name + "_qmax"), qexp(name + "_qexp"), qsum(name + "_qsum");
    Func kmax(name + "_kmax"), kexp(name + "_kexp"), ksum(name + "_ksum");
    // The row sums share the final product's domain, so the schedule can
    // compute them in its loop (compute_with).
    RDom rdq = rd;
    // One stage: a row has only dk entries, so the schedule reduces each
    // row in vectors with one horizontal max (no lanes stage, unlike the
    // rows of attention scores, defineLaneMax).
    RDom rqmax(0, dk, name + "_rqmax");
    define(qmax, batch.vars({i}), lowest(type));
    update(qmax, batch.index({i}),
           Halide::max(call(qmax, batch.index({i})),
                       batch.operand(q, {i, rqmax})));
    define(qexp, batch.vars({i, d}),
           softmaxExp(batch.operand(q, {i, d}) - call(qmax, batch.index({i}))));
    define(qsum, batch.vars({i}), zero);
    update(qsum, batch.index({i}),
           call(qsum, batch.index({i})) + call(qexp, batch.index({i, rdq})));
    stages = {{"qmax", qmax}, {"qexp", qexp}, {"qsum", qsum},
              {"kmax", kmax}, {"kexp", kexp}, {"ksum", ksum}};
    domains = {{"qmax", rqmax}, {"qsum", rdq}};
    // The chunk tasks' register tiles need static positions and columns.
    auto keys = Halide::Internal::as_const_int(m);
    int64_t chunk = options.efficientChunk;
    if (chunk > 0 && keys && *keys % chunk == 0 && *keys >= 2 * chunk &&
        Halide::Internal::as_const_int(batch.dv)) {
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
      define(kexp, batch.vars({j, d}),
             softmaxExp(batch.operand(k, {j, d}) -
                        call(kmaxChunk, batch.index({j / size, d}))));
      Expr weight = call(kexp, batch.index({c * size + rc, d}));
      define(ksumChunk, batch.vars({c, d}), zero);
      update(ksumChunk, batch.index({c, d}),
             call(ksumChunk, batch.index({c, d})) + weight);
      define(contextChunk, batch.vars({c, d, e}), zero);
      update(contextChunk, batch.index({c, d, e}),
             call(contextChunk, batch.index({c, d, e})) +
                 weight * batch.operand(v, {c * size + rc, e}));
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
      domains.insert({{"chunk_context", rc}, {"chunks", chunks}});
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
    queryWeight = call(qexp, batch.index({i, rd}));
    Func contextNorm(name + "_context_norm");
    define(contextNorm, batch.vars({d, e}),
           call(context, batch.index({d, e})) /
               softmaxDivisor(call(ksum, batch.index({d}))));
    stages["context_norm"] = contextNorm;
    define(acc, batch.vars({i, e}), zero);
    update(acc, batch.index({i, e}),
           call(acc, batch.index({i, e})) +
               queryWeight * call(contextNorm, batch.index({rd, e})));
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
        {"chunked", static_cast<int64_t>(domains.count("chunks"))}});
  return success();
}
