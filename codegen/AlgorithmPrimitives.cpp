//===- AlgorithmPrimitives.cpp - Primitive attn ops -----------------------===//
//
// The primitive attn ops, each one Func (plus named helpers for a product's
// accumulator and a reduction's statistics): matmul, normalize, scale,
// feature_map, prefix_sum, causal_mask, add, mul, div (numpy broadcasting),
// reduce_sum, floor (from --attn-lower-deformable), and the primitives of
// gradients (--attn-grad): feature_map_grad, broadcast, unbroadcast.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn::codegen::detail;

LogicalResult KernelBuilder::lowerMatmul(Operation *operation) {
  auto op = cast<MatmulOp>(operation);
  const TensorFunc &lhs = get(op.getLhs());
  const TensorFunc &rhs = get(op.getRhs());
  size_t lr = lhs.rank(), rr = rhs.rank();
  Expr rows = op.getTransposeLhs() ? lhs.shape[lr - 1] : lhs.shape[lr - 2];
  Expr inner = op.getTransposeLhs() ? lhs.shape[lr - 2] : lhs.shape[lr - 1];
  Expr innerR = op.getTransposeRhs() ? rhs.shape[rr - 1] : rhs.shape[rr - 2];
  Expr cols = op.getTransposeRhs() ? rhs.shape[rr - 2] : rhs.shape[rr - 1];
  std::string name = opFuncName(op);
  requireEqual(inner, innerR, name + " contraction dim");
  FailureOr<BatchedLayout> layout =
      batchedLayout(op, {&lhs, &rhs}, rows, cols, name);
  if (failed(layout))
    return failure();
  const BatchedLayout &batch = *layout;
  // Named by the result's dims as elementwise ops name theirs (makeVars), so
  // a product and a pointwise output of the same rows have loops of the
  // same names, which compute_with needs (ScheduleContext::rowCompanions).
  size_t rowDim = batch.batchVars.size();
  Var i("d" + std::to_string(rowDim)), j("d" + std::to_string(rowDim + 1));
  std::vector<Var> vars = batch.vars({i, j});
  Index at = batch.index({i, j});
  Func acc(name + "_acc"), result(name);
  define(acc, vars, constant(lhs.type, 0.0));
  std::map<std::string, Func> stages = {{"acc", acc}, {"rhs", rhs.func}};
  // An lhs computed by another op (e.g. a feature map) is inlined into its
  // consumers; the schedule may compute it per block instead (scheduleGemm).
  if (!isa<BlockArgument>(op.getLhs()))
    stages["lhs"] = lhs.func;
  std::string pairsUnused;
  bool pairs = bf16ProductPairs(op, inner, cols, pairsUnused);
  // (Pairs need a static inner dim; a constant extent, not 2n / 2, lets the
  // schedule see it.)
  RDom k =
      pairs ? RDom(0, 2, 0, Halide::Internal::simplify(inner / 2), name + "_k")
            : RDom(0, inner, name + "_k");
  if (pairs) {
    // Both operands as (pair of k, row or column, 2) in bf16: stored bf16
    // values exactly, computed ones rounded (the op's opt-in); a vector of
    // either is the pairs of `vector` rows or columns, and each product of
    // the tile reduces a pair of k (vdpbf16ps).
    Var kp("kp"), pair("pair");
    Expr kAt = 2 * kp + pair;
    // The rhs as (pair of k, column, 2), so a tile's vector loads are
    // contiguous; the lhs of a plain product keeps its layout (row, pair of
    // k, 2): a bf16 copy of its rows, not an interleave.
    auto packed = [&](Value value, const TensorFunc &operand, bool kFirst,
                      bool pairsFirst, Var other, const char *role) {
      std::optional<TensorFunc> stored = storedBf16(value);
      Expr element =
          batch.operand(stored ? *stored : operand,
                        kFirst ? Index{kAt, other} : Index{other, kAt});
      Func pairsOf(name + "_" + role + "Pairs");
      define(pairsOf,
             pairsFirst ? batch.vars({kp, other, pair})
                        : batch.vars({other, kp, pair}),
             stored ? element : Halide::cast(Halide::BFloat(16), element));
      stages[std::string(role) + "Pairs"] = pairsOf;
      // The Func the copy reads is the operand the schedule may compute per
      // task (the stored bf16 one, not its widening).
      if (stored) {
        Value source = value.getDefiningOp<arith::ExtFOp>().getIn();
        if (isa<BlockArgument>(source) && std::string(role) == "lhs")
          stages.erase("lhs");
        else
          stages[role] = stored->func;
      }
      return pairsOf;
    };
    bool lhsKFirst = op.getTransposeLhs();
    Func lhsPairs = packed(op.getLhs(), lhs, lhsKFirst, lhsKFirst, i, "lhs");
    Func rhsPairs = packed(op.getRhs(), rhs, !op.getTransposeRhs(),
                           /*pairsFirst=*/true, j, "rhs");
    auto widen = [](Expr x) { return Halide::cast<float>(x); };
    Index lhsAt =
        lhsKFirst ? batch.index({k.y, i, k.x}) : batch.index({i, k.y, k.x});
    update(acc, at,
           call(acc, at) +
               widen(call(lhsPairs, lhsAt)) *
                   widen(call(rhsPairs, batch.index({k.y, j, k.x}))));
  } else {
    Expr lhsAt =
        batch.operand(lhs, op.getTransposeLhs() ? Index{k, i} : Index{i, k});
    Expr rhsAt =
        batch.operand(rhs, op.getTransposeRhs() ? Index{j, k} : Index{k, j});
    update(acc, at, call(acc, at) + lhsAt * rhsAt);
  }
  define(result, vars, call(acc, at));
  bind(op, Family::Gemm, {result, batch.shape, lhs.type}, stages, {{"acc", k}},
       {{"transposeRhs", op.getTransposeRhs() ? 1 : 0}, {"bf16Pairs", pairs}});
  if (pairs)
    algorithm.ops.back().form =
        op->hasAttr(kAllowBf16Products)
            ? "operands in bf16 (attn.allow_bf16_products rounds the "
              "computed ones): the product reduces k in pairs (vdpbf16ps)"
            : "bf16 operands: the product reduces k in pairs (vdpbf16ps)";
  else if (op->hasAttr(kAllowBf16Products))
    algorithm.ops.back().form =
        "attn.allow_bf16_products not used: " + pairsUnused;
  return success();
}

bool KernelBuilder::bf16ProductPairs(Operation *op, const Expr &inner,
                                     const Expr &cols, std::string &whyNot) {
  auto matmul = cast<MatmulOp>(op);
  bool optIn = op->hasAttr(kAllowBf16Products);
  bool stored = storedBf16(matmul.getLhs()) && storedBf16(matmul.getRhs());
  if (!optIn && !stored)
    return false;
  auto depth = Halide::Internal::as_const_int(inner);
  if (!options.bf16DotProducts)
    whyNot = kNoBf16PairsReason;
  else if (!depth || *depth % 2 != 0 || *depth < 2)
    whyNot = "the contraction dim is not static and even";
  else if (auto columns = Halide::Internal::as_const_int(cols);
           columns && *columns == 1)
    // (Its row products keep their schedule: one dot product per row in
    // vector lanes, fused into the epilogue of a product of the same lhs.)
    whyNot = "one column (a matrix-vector product)";
  return whyNot.empty();
}

LogicalResult KernelBuilder::lowerNormalize(Operation *operation) {
  auto op = cast<NormalizeOp>(operation);
  const TensorFunc &input = get(op.getInput());
  std::string name = opFuncName(op);
  size_t rank = input.rank();
  int64_t dim = op.getDim();
  std::vector<Var> vars = makeVars(rank);
  Index at = toExprs(vars);
  // Statistics have every dim but `dim`.
  std::vector<Var> statVars;
  for (size_t d = 0; d < rank; ++d)
    if (static_cast<int64_t>(d) != dim)
      statVars.push_back(vars[d]);
  Index statAt = toExprs(statVars);
  RDom r(0, input.shape[dim], name + "_r");
  Index atR = at;
  atR[dim] = r;
  Expr x = input(at), xr = input(atR);
  Halide::Type type = input.type;
  Func result(name);
  std::map<std::string, Func> stages;
  std::map<std::string, RDom> domains;
  switch (op.getKind()) {
  case NormKind::softmax: {
    Func max(name + "_max"), num(name + "_exp"), sum(name + "_sum");
    auto maxEntry = [&](Expr value) {
      return Halide::select(isNegInf(value), lowest(type), value);
    };
    auto weightOf = [&](Expr value, Expr maximum) {
      return Halide::select(isNegInf(value), constant(type, 0.0),
                            softmaxWeightExp(value - maximum));
    };
    // Halide reads only complete Funcs: num is defined after the max's
    // update, and the unchunked sum's update (which reads num) after num.
    define(max, statVars, lowest(type));
    define(sum, statVars, constant(type, 0.0));
    auto extent = Halide::Internal::as_const_int(input.shape[dim]);
    int64_t chunk = options.normalizeChunk;
    if (chunk > 0 && dim != static_cast<int64_t>(rank) - 1 && extent &&
        *extent >= 2 * chunk) {
      // Over positions (AlgorithmOptions::normalizeChunk): each chunk's
      // max and sum of exps, from one read of its entries, merged by
      // rescaling each chunk's sum by exp(chunk max - max).
      Var c(name + "_c");
      RDom rc(0, static_cast<int32_t>(chunk), name + "_rc");
      Expr position = c * static_cast<int32_t>(chunk) + rc;
      rc.where(position < input.shape[dim]); // a ragged last chunk
      RDom chunks(0, static_cast<int32_t>((*extent + chunk - 1) / chunk),
                  name + "_rchunk");
      std::vector<Var> chunkVars = statVars;
      chunkVars.insert(chunkVars.begin(), c); // outermost in Halide
      Index chunkAt = toExprs(chunkVars), mergeAt = statAt;
      mergeAt.insert(mergeAt.begin(), chunks);
      // The predicate skips a ragged chunk's missing positions; the clamp
      // keeps the input's bounds (bounds inference does not use it).
      Index atChunk = at;
      atChunk[dim] = Halide::min(position, input.shape[dim] - 1);
      Expr xc = input(atChunk);
      Func chunkMax(name + "_chunk_max"), chunkSum(name + "_chunk_sum");
      define(chunkMax, chunkVars, lowest(type));
      update(chunkMax, chunkAt,
             Halide::max(call(chunkMax, chunkAt), maxEntry(xc)));
      define(chunkSum, chunkVars, constant(type, 0.0));
      update(chunkSum, chunkAt,
             call(chunkSum, chunkAt) + weightOf(xc, call(chunkMax, chunkAt)));
      update(max, statAt,
             Halide::max(call(max, statAt), call(chunkMax, mergeAt)));
      // An all -inf chunk: max - max of lowest is 0, times a sum of 0.
      update(sum, statAt,
             call(sum, statAt) + call(chunkSum, mergeAt) *
                                     softmaxWeightExp(call(chunkMax, mergeAt) -
                                                      call(max, statAt)));
      define(num, vars, weightOf(x, call(max, statAt)));
      stages = {{"chunk_max", chunkMax}, {"chunk_sum", chunkSum}};
      domains = {{"chunk_positions", rc}, {"chunks", chunks}};
    } else {
      update(max, statAt, Halide::max(call(max, statAt), maxEntry(xr)));
      define(num, vars, weightOf(x, call(max, statAt)));
      Index numR = at;
      numR[dim] = r;
      update(sum, statAt, call(sum, statAt) + call(num, numR));
    }
    Expr total = call(sum, statAt);
    if (dim == static_cast<int64_t>(rank) - 1 && rank > 1) {
      // Along rows: one division per row and a multiply per vector (as
      // lowerDiv's per-row divisors).
      define(result, vars, call(num, at) * softmaxReciprocal(total));
    } else {
      define(result, vars, call(num, at) / softmaxDivisor(total));
    }
    stages.insert({{"max", max}, {"exp", num}, {"sum", sum}});
    break;
  }
  case NormKind::sum: {
    Func sum(name + "_sum");
    define(sum, statVars, constant(type, op.getEps().convertToDouble()));
    update(sum, statAt, call(sum, statAt) + xr);
    define(result, vars, x / call(sum, statAt));
    stages = {{"sum", sum}};
    break;
  }
  case NormKind::count:
    define(result, vars, x / Halide::cast(type, input.shape[dim]));
    break;
  case NormKind::none:
    define(result, vars, x);
    break;
  }
  Family family = stages.empty() ? Family::Elementwise : Family::Normalize;
  domains.insert({"r", r});
  bind(op, family, {result, input.shape, type}, stages, domains,
       {{"dim", dim}});
  return success();
}

LogicalResult KernelBuilder::lowerSoftmaxFromLse(Operation *operation) {
  auto op = cast<SoftmaxFromLseOp>(operation);
  const TensorFunc &input = get(op.getInput());
  const TensorFunc &lse = get(op.getLse());
  std::string name = opFuncName(op);
  int64_t dim = op.getDim();
  for (size_t d = 0; d < input.rank(); ++d)
    requireEqual(lse.shape[d],
                 static_cast<int64_t>(d) == dim ? Expr(1) : input.shape[d],
                 name + " dim " + std::to_string(d) + " of lse");
  std::vector<Var> vars = makeVars(input.rank());
  Index at = toExprs(vars), lseAt = at;
  lseAt[dim] = 0;
  Halide::Type type = input.type;
  // (An all -inf slice's +inf lse gives weights 0: finiteSavedLse.)
  Func result(name);
  define(result, vars,
         softmaxWeightExp(input(at) - finiteSavedLse(lse(lseAt))));
  // The Normalize family's schedule without statistics: stored whole, or
  // per task where two loop nests share its rows (sharedRows).
  bind(op, Family::Normalize, {result, input.shape, type}, {},
       {{"r", RDom(0, input.shape[dim], name + "_r")}}, {{"dim", dim}});
  return success();
}

LogicalResult KernelBuilder::lowerScale(Operation *operation) {
  auto op = cast<ScaleOp>(operation);
  const TensorFunc &input = get(op.getInput());
  Func result(opFuncName(op));
  std::vector<Var> vars = makeVars(input.rank());
  define(result, vars,
         input(toExprs(vars)) *
             constant(input.type, op.getFactor().convertToDouble()));
  bind(op, Family::Elementwise, {result, input.shape, input.type});
  return success();
}

LogicalResult KernelBuilder::lowerFeatureMap(Operation *operation) {
  auto op = cast<FeatureMapOp>(operation);
  const TensorFunc &input = get(op.getInput());
  Func result(opFuncName(op));
  std::vector<Var> vars = makeVars(input.rank());
  define(result, vars, featureMapExpr(op.getKind(), input(toExprs(vars))));
  bind(op, Family::Elementwise, {result, input.shape, input.type});
  return success();
}

LogicalResult KernelBuilder::lowerPrefixSum(Operation *operation) {
  auto op = cast<PrefixSumOp>(operation);
  const TensorFunc &input = get(op.getInput());
  std::string name = opFuncName(op);
  int64_t dim = op.getDim();
  std::vector<Var> vars = makeVars(input.rank());
  Index at = toExprs(vars);
  Func result(name);
  // Exclusive: out[0] = 0 and out[i] = out[i-1] + in[i-1]. Reverse runs
  // the same recurrence from the end: step r writes i = len - 1 - r from
  // its neighbour i + 1, already summed.
  bool exclusive = op.getExclusive();
  define(result, vars, exclusive ? constant(input.type, 0.0) : input(at));
  Expr len = input.shape[dim];
  RDom r(1, len - 1, name + "_r");
  Expr i = op.getReverse() ? len - 1 - r : Expr(r);
  Index atR = at, before = at;
  atR[dim] = i;
  before[dim] = op.getReverse() ? i + 1 : i - 1;
  update(result, atR, call(result, before) + input(exclusive ? before : atR));
  bind(op, Family::Scan, {result, input.shape, input.type}, {}, {{"r", r}},
       {{"dim", dim}});
  return success();
}

LogicalResult KernelBuilder::lowerCausalMask(Operation *operation) {
  auto op = cast<CausalMaskOp>(operation);
  const TensorFunc &input = get(op.getInput());
  Func result(opFuncName(op));
  size_t rank = input.rank();
  std::vector<Var> vars = makeVars(rank);
  Expr x = input(toExprs(vars));
  double fill = op.getFill().convertToDouble();
  Expr hide = vars[rank - 1] > vars[rank - 2];
  Expr value;
  if (input.type.is_float() && !std::isfinite(fill)) {
    // An infinite fill is chosen between bit patterns: an FP select of -inf
    // carries the no-infs fast-math flag, and LLVM then folds a consumer's
    // is_inf test of it to false (a fused attention's mask test).
    Halide::Type bits = Halide::UInt(input.type.bits());
    value = Halide::reinterpret(
        input.type,
        Halide::select(hide,
                       Halide::reinterpret(bits, constant(input.type, fill)),
                       Halide::reinterpret(bits, x)));
  } else {
    value = Halide::select(hide, constant(input.type, fill), x);
  }
  define(result, vars, value);
  bind(op, Family::Elementwise, {result, input.shape, input.type});
  return success();
}

LogicalResult KernelBuilder::lowerBroadcastBinary(
    Operation *op, Value lhsValue, Value rhsValue,
    const std::function<Expr(Expr, Expr)> &combine,
    const TensorFunc *rhsOverride, const std::string &givenName) {
  const TensorFunc &lhs = get(lhsValue);
  const TensorFunc &rhs = rhsOverride ? *rhsOverride : get(rhsValue);
  std::string name = givenName.empty() ? opFuncName(op) : givenName;
  std::vector<Expr> computed = broadcastShape({lhs.shape, rhs.shape}, name);
  FailureOr<std::vector<Expr>> shape =
      extents(op, cast<RankedTensorType>(op->getResult(0).getType()), computed);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(shape->size());
  Index at = toExprs(vars);
  Func result(name);
  define(result, vars,
         combine(lhs(broadcastIndex(lhs.shape, *shape, at)),
                 rhs(broadcastIndex(rhs.shape, *shape, at))));
  bind(op, Family::Elementwise, {result, *shape, lhs.type});
  return success();
}

LogicalResult KernelBuilder::lowerAdd(Operation *operation) {
  auto op = cast<AddOp>(operation);
  return lowerBroadcastBinary(op, op.getLhs(), op.getRhs(),
                              [](Expr a, Expr b) { return a + b; });
}

LogicalResult KernelBuilder::lowerMul(Operation *operation) {
  auto op = cast<MulOp>(operation);
  return lowerBroadcastBinary(op, op.getLhs(), op.getRhs(),
                              [](Expr a, Expr b) { return a * b; });
}

// a / (b + eps); eps = 0 adds nothing, so linear attention's row sums are
// divided as they are. A divisor broadcast along the innermost dim (one per
// row: linear attention's row sums, an L1 normalization's) is inverted once
// per row, in <name>_inverse over b's own shape, and multiplied: the
// vectorized division of every element cost a vdivps per vector, about 10
// cycles of the divider each on Intel cores (linear attention's output: 4
// per row of 64, next to 128 FMAs). Efficient attention's _qinv does the
// same. The schedule may compute the inverses of many rows at once.
LogicalResult KernelBuilder::lowerDiv(Operation *operation) {
  auto op = cast<DivOp>(operation);
  double eps = op.getEps().convertToDouble();
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  bool perRow = rhsType.getRank() > 0 && rhsType.getShape().back() == 1 &&
                resultType.getShape().back() != 1;
  auto shifted = [eps](Expr b) {
    return eps != 0.0 ? b + constant(b.type(), eps) : b;
  };
  if (!perRow)
    return lowerBroadcastBinary(
        op, op.getLhs(), op.getRhs(),
        [&](Expr a, Expr b) { return a / shifted(b); });
  const TensorFunc &rhs = get(op.getRhs());
  std::string name = opFuncName(op);
  Func inverse(name + "_inverse");
  std::vector<Var> rhsVars = makeVars(rhs.rank());
  define(inverse, rhsVars,
         constant(rhs.type, 1.0) / shifted(rhs(toExprs(rhsVars))));
  TensorFunc inverted = rhs;
  inverted.func = inverse;
  if (failed(lowerBroadcastBinary(op, op.getLhs(), op.getRhs(),
                                  [](Expr a, Expr b) { return a * b; },
                                  &inverted, name)))
    return failure();
  algorithm.ops.back().stages["inverse"] = inverse;
  return success();
}

// The sum along `dim` in a helper `<name>_sum` over every other dim, read by
// the result at index 0 of `dim`: the layout of attn.normalize's statistics,
// so the Normalize schedule applies (rfactor when `dim` is not innermost).
LogicalResult KernelBuilder::lowerReduceSum(Operation *operation) {
  auto op = cast<ReduceSumOp>(operation);
  const TensorFunc &input = get(op.getInput());
  std::string name = opFuncName(op);
  size_t rank = input.rank();
  int64_t dim = op.getDim();
  std::vector<Expr> computed = input.shape;
  computed[dim] = Expr(1);
  FailureOr<std::vector<Expr>> shape =
      extents(op, cast<RankedTensorType>(op.getType()), computed);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(rank);
  std::vector<Var> statVars;
  for (size_t d = 0; d < rank; ++d)
    if (static_cast<int64_t>(d) != dim)
      statVars.push_back(vars[d]);
  Index statAt = toExprs(statVars);
  RDom r(0, input.shape[dim], name + "_r");
  Index atR = toExprs(vars);
  atR[dim] = r;
  Func sum(name + "_sum"), result(name);
  define(sum, statVars, constant(input.type, 0.0));
  update(sum, statAt, call(sum, statAt) + input(atR));
  define(result, vars, call(sum, statAt));
  bind(op, Family::Normalize, {result, *shape, input.type}, {{"sum", sum}},
       {{"r", r}}, {{"dim", dim}});
  return success();
}

LogicalResult KernelBuilder::lowerFloor(Operation *operation) {
  auto op = cast<FloorOp>(operation);
  const TensorFunc &input = get(op.getInput());
  Func result(opFuncName(op));
  std::vector<Var> vars = makeVars(input.rank());
  define(result, vars, Halide::floor(input(toExprs(vars))));
  bind(op, Family::Elementwise, {result, input.shape, input.type});
  return success();
}

//===----------------------------------------------------------------------===//
// Primitives of gradients (--attn-grad)
//===----------------------------------------------------------------------===//

// cotangent * phi'(input), written as that product (not a select of the
// cotangent) so a non-finite cotangent gives what the reference gives.
LogicalResult KernelBuilder::lowerFeatureMapGrad(Operation *operation) {
  auto op = cast<FeatureMapGradOp>(operation);
  const TensorFunc &input = get(op.getInput());
  const TensorFunc &cotangent = get(op.getCotangent());
  std::string name = opFuncName(op);
  for (size_t d = 0; d < input.rank(); ++d)
    requireEqual(cotangent.shape[d], input.shape[d],
                 name + " cotangent dim " + std::to_string(d));
  std::vector<Var> vars = makeVars(input.rank());
  Index at = toExprs(vars);
  Expr x = input(at);
  Halide::Type type = input.type;
  Expr zero = constant(type, 0.0), one = constant(type, 1.0);
  Expr dx = cotangent(at);
  switch (op.getKind()) {
  case FeatureMap::identity:
    break;
  case FeatureMap::elu_plus_one:
    // softmaxExp's value for x > 0 is discarded, as in featureMapExpr.
    dx = dx * Halide::select(x > zero, one, softmaxExp(x));
    break;
  case FeatureMap::relu:
    // A select, not a product with 0: the cotangent stops where relu is
    // flat, a non-finite one too (the op's rule).
    dx = keepNaN(x, Halide::select(x > zero, dx, zero));
    break;
  }
  Func result(name);
  define(result, vars, dx);
  bind(op, Family::Elementwise, {result, input.shape, type});
  return success();
}

// out[idx] = input[idx'], idx' the trailing dims of idx with 0 where the
// input has size 1. A dynamic input dim reads min(idx, extent - 1): 0 when
// it is 1 at run time, idx when it equals the result's (the requirement),
// and bounds inference sees the input's own extent either way.
LogicalResult KernelBuilder::lowerBroadcast(Operation *operation) {
  auto op = cast<BroadcastOp>(operation);
  const TensorFunc &input = get(op.getInput());
  const TensorFunc &like = get(op.getLike());
  std::string name = opFuncName(op);
  FailureOr<std::vector<Expr>> shape = extents(op, op.getType(), like.shape);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(shape->size());
  size_t offset = shape->size() - input.rank();
  Index at;
  for (size_t d = 0; d < input.rank(); ++d) {
    Expr from = input.shape[d], to = (*shape)[offset + d];
    Var v = vars[offset + d];
    std::string what = name + " input dim " + std::to_string(d);
    if (Halide::Internal::is_const_one(from)) {
      at.push_back(0);
    } else if (Halide::Internal::as_const_int(from)) {
      requireEqual(from, to, what); // a static size > 1 never stretches
      at.push_back(v);
    } else {
      requireBroadcastable(from, to, what);
      at.push_back(Halide::min(v, from - 1));
    }
  }
  Func result(name);
  define(result, vars, input(at));
  bind(op, Family::Elementwise, {result, *shape, input.type});
  return success();
}

// The sum over the dims in which `like` was broadcast: the leading dims it
// lacks and the dims where it has size 1, in one RDom (innermost dim first)
// into a helper `<name>_sum` over the result's dims, as reduce_sum does, so
// the Normalize schedule applies. A dynamic dim of `like` may be 1 at run
// time or equal the input's: the RDom runs over select(like == 1, input, 1)
// and the input reads index + r, which is r when like is 1 (the index is
// then 0) and the index otherwise (r is then 0).
LogicalResult KernelBuilder::lowerUnbroadcast(Operation *operation) {
  auto op = cast<UnbroadcastOp>(operation);
  const TensorFunc &input = get(op.getInput());
  const TensorFunc &like = get(op.getLike());
  std::string name = opFuncName(op);
  FailureOr<std::vector<Expr>> shape = extents(op, op.getType(), like.shape);
  if (failed(shape))
    return failure();
  size_t rank = shape->size(), offset = input.rank() - rank;
  std::vector<Var> vars = makeVars(rank);
  // Per input dim: the extent summed over, undefined when it is not summed.
  std::vector<Expr> summed(input.rank());
  int64_t innermostSum = -1;
  for (size_t d = 0; d < input.rank(); ++d) {
    Expr to = input.shape[d];
    if (d < offset) {
      summed[d] = to;
      continue;
    }
    Expr from = (*shape)[d - offset];
    std::string what = name + " like dim " + std::to_string(d - offset);
    if (Halide::Internal::is_const_one(from)) {
      if (!Halide::Internal::is_const_one(to))
        summed[d] = to;
    } else if (Halide::Internal::as_const_int(from)) {
      requireEqual(to, from, what); // a static size > 1 was not stretched
    } else {
      requireBroadcastable(from, to, what);
      if (!Halide::Internal::is_const_one(to))
        summed[d] = Halide::select(from == 1, to, 1);
    }
    if (summed[d].defined())
      innermostSum = static_cast<int64_t>(d - offset);
  }
  Halide::Region region;
  std::vector<size_t> summedDims; // innermost first, as the RDom's
  for (size_t d = input.rank(); d-- > 0;)
    if (summed[d].defined()) {
      region.push_back({0, summed[d]});
      summedDims.push_back(d);
    }
  Func result(name);
  if (region.empty()) {
    // Nothing was broadcast (so no leading dims either): a copy.
    define(result, vars, input(toExprs(vars)));
    bind(op, Family::Elementwise, {result, *shape, input.type});
    return success();
  }
  RDom r(region, name + "_r");
  Index at(input.rank());
  for (size_t d = 0; d < input.rank(); ++d)
    if (d >= offset)
      at[d] = vars[d - offset];
  for (size_t k = 0; k < summedDims.size(); ++k) {
    size_t d = summedDims[k];
    at[d] = d < offset || Halide::Internal::as_const_int((*shape)[d - offset])
                ? Expr(r[k])
                : at[d] + r[k];
  }
  Index resultAt = toExprs(vars);
  Func sum(name + "_sum");
  define(sum, vars, constant(input.type, 0.0));
  update(sum, resultAt, call(sum, resultAt) + input(at));
  define(result, vars, call(sum, resultAt));
  // "dim" tells the schedule whether the innermost summed dim is the last
  // (a sum along rows) or not (a sum across them); leading dims count as
  // outer.
  int64_t dim = innermostSum >= 0 ? innermostSum : 0;
  bind(op, Family::Normalize, {result, *shape, input.type}, {{"sum", sum}},
       {{"r", r}}, {{"dim", dim}});
  return success();
}
