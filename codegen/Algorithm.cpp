//===- Algorithm.cpp - attn ops as Halide Func graphs ---------------------===//
//
// The core of the algorithm half: TensorFunc, the pipeline of a
// KernelAlgorithm, and KernelBuilder's driver and shared helpers. Every op is
// lowered by one function, found through a table keyed by op name
// (kLowerings, below); the lowerings live in one file per op family
// (KernelBuilder.h lists them). To support a new op, write `lowerFoo` in its
// family's file, declare it in KernelBuilder.h and add one row to
// kLowerings. Each lowering reads its operands' TensorFuncs, defines the
// result Func (and named helper Funcs), records them in an OpStages entry
// for the schedules, and adds run-time requirements for dynamic sizes that
// must agree.
//
// Masked scores: Halide compiles with no-infs/no-nans fast-math flags, so
// -inf is never relied on in arithmetic. Masked entries are tested with
// is_inf() (exempt from fast-math) or by the causal predicate directly, and
// softmax never subtracts -inf.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"
#include "codegen/LoweringFixes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/SmallBitVector.h"

#include <set>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::codegen;
using namespace mlir::attn::codegen::detail;

Expr TensorFunc::operator()(std::vector<Expr> index) const {
  std::reverse(index.begin(), index.end());
  return func(index);
}

// The method, the fit and the error bound: Algorithm.h.
Expr mlir::attn::codegen::softmaxExp(Expr x) {
  if (x.type() != Halide::Float(32))
    return Halide::exp(x);
  Expr clamped = Halide::max(x, -88.0f);
  Expr n = Halide::cast<int32_t>(clamped * 1.44269504f - 0.5f);
  Expr r = clamped - Halide::cast<float>(n) * 0.693147181f;
  Expr poly = 0.00829031784f;
  for (float c : {0.0418979339f, 0.166676357f, 0.499991506f, 0.999999702f,
                  1.0f})
    poly = poly * r + c;
  return keepNaN(
      x, poly * Halide::reinterpret(Halide::Float(32), (n + 127) << 23));
}

Halide::Pipeline KernelAlgorithm::pipeline() const {
  std::vector<Func> funcs;
  for (const TensorFunc &output : outputs)
    funcs.push_back(output.func);
  Halide::Pipeline pipeline(funcs);
  addPrefetchLoweringFix(pipeline);
  addLaneReductionLoweringFix(pipeline);
  addSmallAllocationFix(pipeline);
  addRequirementsFirstFix(pipeline);
  for (const auto &[condition, message] : requirements)
    pipeline.add_requirement(condition, message);
  return pipeline;
}

std::vector<Halide::Argument> KernelAlgorithm::arguments() const {
  std::vector<Halide::Argument> args;
  for (const Halide::ImageParam &input : inputs)
    args.push_back(input);
  return args;
}

namespace {

using LowerFn = LogicalResult (KernelBuilder::*)(Operation *);
struct Lowering {
  StringLiteral opName;
  LowerFn lower;
};

/// The op -> Func table.
const Lowering kLowerings[] = {
    {"attn.matmul", &KernelBuilder::lowerMatmul},
    {"attn.normalize", &KernelBuilder::lowerNormalize},
    {"attn.softmax_from_lse", &KernelBuilder::lowerSoftmaxFromLse},
    {"attn.scale", &KernelBuilder::lowerScale},
    {"attn.feature_map", &KernelBuilder::lowerFeatureMap},
    {"attn.prefix_sum", &KernelBuilder::lowerPrefixSum},
    {"attn.causal_mask", &KernelBuilder::lowerCausalMask},
    {"attn.add", &KernelBuilder::lowerAdd},
    {"attn.bilinear_gather", &KernelBuilder::lowerBilinearGather},
    {"attn.dot_product", &KernelBuilder::lowerDotProduct},
    {"attn.efficient", &KernelBuilder::lowerEfficient},
    {"attn.external", &KernelBuilder::lowerExternal},
    {"attn.deformable", &KernelBuilder::lowerDeformable},
    {"tensor.expand_shape", &KernelBuilder::lowerExpandShape},
    {"tensor.collapse_shape", &KernelBuilder::lowerCollapseShape},
    {"arith.constant", &KernelBuilder::lowerConstant},
    {"attn.mul", &KernelBuilder::lowerMul},
    {"attn.div", &KernelBuilder::lowerDiv},
    {"attn.reduce_sum", &KernelBuilder::lowerReduceSum},
    {"tensor.cast", &KernelBuilder::lowerCast},
    {"arith.extf", &KernelBuilder::lowerFloatCast},
    {"arith.truncf", &KernelBuilder::lowerFloatCast},
    {"tensor.dim", &KernelBuilder::lowerDim},
    {"arith.addi", &KernelBuilder::lowerIndexArith},
    {"arith.subi", &KernelBuilder::lowerIndexArith},
    {"arith.muli", &KernelBuilder::lowerIndexArith},
    {"arith.maxui", &KernelBuilder::lowerIndexArith},
    {"arith.divui", &KernelBuilder::lowerIndexArith},
    {"arith.divsi", &KernelBuilder::lowerIndexArith},
    {"arith.ceildivui", &KernelBuilder::lowerIndexArith},
    {"tensor.pad", &KernelBuilder::lowerPad},
    {"arith.cmpi", &KernelBuilder::lowerCmpI},
    {"arith.select", &KernelBuilder::lowerSelect},
    {"scf.if", &KernelBuilder::lowerIf},
    {"attn.floor", &KernelBuilder::lowerFloor},
    {"attn.gather_pixels", &KernelBuilder::lowerGatherPixels},
    {"tensor.extract_slice", &KernelBuilder::lowerExtractSlice},
    {"attn.feature_map_grad", &KernelBuilder::lowerFeatureMapGrad},
    {"attn.broadcast", &KernelBuilder::lowerBroadcast},
    {"attn.unbroadcast", &KernelBuilder::lowerUnbroadcast},
    {"attn.scatter_pixels", &KernelBuilder::lowerScatterPixels},
    {"tensor.insert_slice", &KernelBuilder::lowerInsertSlice},
    {"attn.attention_grad", &KernelBuilder::lowerAttentionGrad},
    {"attn.deformable_grad", &KernelBuilder::lowerDeformableGrad},
};

} // namespace

//===----------------------------------------------------------------------===//
// Shapes and helpers
//===----------------------------------------------------------------------===//

FailureOr<Halide::Type> KernelBuilder::elementType(Operation *op, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  Type element = tensor ? tensor.getElementType() : Type();
  if (element && element.isF32())
    return Halide::Float(32);
  if (element && element.isF64())
    return Halide::Float(64);
  if (element && element.isBF16())
    return Halide::BFloat(16);
  if (element && element.isF16())
    return Halide::Float(16);
  return op->emitError("codegen supports ranked f32, f64, bf16 and f16 "
                       "tensors, got ")
         << type;
}

/// Ops that only move, convert or pick values: the ones that may hold bf16
/// and f16 tensors in code generation. Arithmetic is f32 (attn-widen-to-f32).
static bool isStorageOp(Operation &op) {
  return isa<arith::ExtFOp, arith::TruncFOp, arith::ConstantOp, scf::IfOp>(
             op) ||
         isa<tensor::TensorDialect>(op.getDialect());
}

FailureOr<std::vector<Expr>>
KernelBuilder::extents(Operation *op, RankedTensorType type,
                       const std::vector<Expr> &computed) {
  std::vector<Expr> result;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d)) {
      result.push_back(computed[d]);
      continue;
    }
    int64_t size = type.getDimSize(d);
    if (size > std::numeric_limits<int32_t>::max())
      return op->emitError("dim ")
             << d << " of " << type
             << " exceeds the 2^31 - 1 elements a Halide dim can hold";
    result.push_back(Expr(static_cast<int32_t>(size)));
    // A static result dim that disagrees with the computed one at run time
    // (possible with dynamic operands) would read out of bounds.
    if (!computed.empty())
      requireEqual(computed[d], result.back(),
                   op->getName().getStringRef().str() + " result dim " +
                       std::to_string(d));
  }
  return result;
}

void KernelBuilder::requireEqual(Expr a, Expr b, const std::string &what) {
  if (Halide::Internal::as_const_int(a) && Halide::Internal::as_const_int(b))
    return;
  algorithm.requirements.push_back(
      {a == b,
       {func.getSymName().str() + ": " + what +
            " must agree at run time (dynamic sizes",
        a, Expr("and"), b, Expr("differ)")}});
}

void KernelBuilder::requireBroadcastable(Expr from, Expr to,
                                         const std::string &what) {
  if (Halide::Internal::as_const_int(from) &&
      Halide::Internal::as_const_int(to))
    return;
  algorithm.requirements.push_back(
      {from == 1 || from == to,
       {func.getSymName().str() + ": " + what +
            " must be 1 or agree at run time (dynamic sizes",
        from, Expr("and"), to, Expr("differ)")}});
}

std::vector<Expr>
KernelBuilder::broadcastShape(const std::vector<std::vector<Expr>> &shapes,
                              const std::string &what) {
  size_t rank = 0;
  for (const auto &shape : shapes)
    rank = std::max(rank, shape.size());
  std::vector<Expr> result(rank);
  for (size_t d = 0; d < rank; ++d) {
    // numpy's rule, a dynamic dim of size 1 included: the extent is a
    // static one other than 1 if there is one (the others must be 1 or
    // equal it), else the largest dynamic one (the others 1 or equal).
    std::vector<Expr> dims;
    for (const auto &shape : shapes)
      if (d >= rank - shape.size())
        dims.push_back(shape[d - (rank - shape.size())]);
    for (const Expr &dim : dims) {
      bool staticOther = Halide::Internal::as_const_int(dim) &&
                         !Halide::Internal::is_const_one(dim);
      if (!result[d].defined() || Halide::Internal::is_const_one(result[d]) ||
          (staticOther && !Halide::Internal::as_const_int(result[d])))
        result[d] = dim;
      else if (!Halide::Internal::as_const_int(result[d]) &&
               !Halide::Internal::as_const_int(dim) && !dim.same_as(result[d]))
        result[d] = Halide::max(result[d], dim);
    }
    if (!result[d].defined())
      result[d] = Expr(1);
    std::string which = what + " leading dim " + std::to_string(d);
    for (const Expr &dim : dims) {
      if (Halide::Internal::is_const_one(dim) || dim.same_as(result[d]))
        continue;
      if (Halide::Internal::as_const_int(dim))
        requireEqual(dim, result[d],
                     which); // a static size > 1 never stretches
      else
        requireBroadcastable(dim, result[d], which);
    }
  }
  return result;
}

Index KernelBuilder::broadcastIndex(const std::vector<Expr> &shape,
                                    const std::vector<Expr> &resultShape,
                                    const Index &index) {
  Index result;
  size_t offset = resultShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    const Expr &extent = shape[d], &resultExtent = resultShape[offset + d];
    if (Halide::Internal::is_const_one(extent) &&
        !Halide::Internal::is_const_one(resultExtent))
      result.push_back(Expr(0)); // stretched
    else if (!Halide::Internal::as_const_int(extent) &&
             !extent.same_as(resultExtent))
      // A dynamic dim stretches when it is 1 at run time (the requirement
      // allows 1 or the result's extent): index 0 then, else the index.
      result.push_back(Halide::min(index[offset + d], extent - 1));
    else
      result.push_back(index[offset + d]);
  }
  return result;
}

void KernelBuilder::bind(Operation *op, Family family, TensorFunc result,
                         std::map<std::string, Func> stages,
                         std::map<std::string, RDom> domains,
                         std::map<std::string, int64_t> info) {
  values[op->getResult(0)] = result;
  algorithm.ops.push_back({family, result.func.name(), result,
                           std::move(stages), std::move(domains),
                           std::move(info)});
  algorithm.ops.back().loc = op->getLoc();
}

static std::vector<Expr> leading(const TensorFunc &t, size_t trailing) {
  return std::vector<Expr>(t.shape.begin(), t.shape.end() - trailing);
}

std::vector<Var>
KernelBuilder::BatchedLayout::vars(std::initializer_list<Var> tail) const {
  std::vector<Var> result = batchVars;
  result.insert(result.end(), tail);
  return result;
}

Index KernelBuilder::BatchedLayout::index(
    std::initializer_list<Expr> tail) const {
  Index result = toExprs(batchVars);
  result.insert(result.end(), tail);
  return result;
}

Expr KernelBuilder::BatchedLayout::operand(const TensorFunc &t,
                                           const Index &tail) const {
  Index result = broadcastIndex(leading(t, 2), lead, toExprs(batchVars));
  result.insert(result.end(), tail.begin(), tail.end());
  return t(result);
}

FailureOr<KernelBuilder::BatchedLayout>
KernelBuilder::batchedLayout(Operation *op,
                             ArrayRef<const TensorFunc *> operands, Expr rows,
                             Expr cols, const std::string &name) {
  std::vector<std::vector<Expr>> leads;
  for (const TensorFunc *operand : operands)
    leads.push_back(leading(*operand, 2));
  BatchedLayout layout;
  layout.lead = broadcastShape(leads, name);
  std::vector<Expr> computed = layout.lead;
  computed.push_back(rows);
  computed.push_back(cols);
  FailureOr<std::vector<Expr>> shape =
      extents(op, cast<RankedTensorType>(op->getResult(0).getType()), computed);
  if (failed(shape))
    return failure();
  layout.shape = *shape;
  layout.batchVars = makeVars(layout.lead.size(), "b");
  return layout;
}

FailureOr<KernelBuilder::AttentionLayout> KernelBuilder::attentionLayout(
    Operation *op, const TensorFunc &q, const TensorFunc &k,
    const TensorFunc &v, const TensorFunc *mask, const std::string &name) {
  AttentionLayout layout;
  size_t qr = q.rank(), kr = k.rank(), vr = v.rank();
  layout.n = q.shape[qr - 2];
  layout.dk = q.shape[qr - 1];
  layout.m = k.shape[kr - 2];
  layout.dv = v.shape[vr - 1];
  requireEqual(k.shape[kr - 1], layout.dk, name + " feature dim of key");
  requireEqual(v.shape[vr - 2], layout.m, name + " positions of value");
  std::vector<const TensorFunc *> operands = {&q, &k, &v};
  if (mask) {
    requireEqual(mask->shape[mask->rank() - 2], layout.n, name + " mask rows");
    requireEqual(mask->shape[mask->rank() - 1], layout.m,
                 name + " mask columns");
    operands.push_back(mask);
  }
  FailureOr<BatchedLayout> batched =
      batchedLayout(op, operands, layout.n, layout.dv, name);
  if (failed(batched))
    return failure();
  static_cast<BatchedLayout &>(layout) = std::move(*batched);
  return layout;
}

Expr KernelBuilder::featureMapExpr(FeatureMap map, Expr x) {
  switch (map) {
  case FeatureMap::identity:
    return x;
  case FeatureMap::elu_plus_one:
    // softmaxExp: a vectorized polynomial for f32, relative error < 5e-7
    // for x <= 0 (the precise exp is a libm call per lane); its value for
    // x > 0 is discarded, and a NaN x gives NaN.
    return Halide::select(x > 0, x + constant(x.type(), 1.0), softmaxExp(x));
  case FeatureMap::relu:
    return keepNaN(x, Halide::max(x, constant(x.type(), 0.0)));
  }
  llvm_unreachable("unknown feature map");
}

std::optional<TensorFunc> KernelBuilder::storedBf16(Value value) {
  auto widened = value.getDefiningOp<arith::ExtFOp>();
  if (!widened || !cast<RankedTensorType>(widened.getIn().getType())
                       .getElementType()
                       .isBF16())
    return std::nullopt;
  return get(widened.getIn());
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

FailureOr<KernelAlgorithm> KernelBuilder::run() {
  algorithm.name = func.getSymName().str();
  if (func.isExternal())
    return func.emitError("cannot compile external function @")
           << func.getSymName();
  if (!func.getBody().hasOneBlock())
    return func.emitError("codegen handles single-block functions only");

  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    FailureOr<Halide::Type> type = elementType(func, arg.getType());
    if (failed(type))
      return failure();
    auto tensorType = cast<RankedTensorType>(arg.getType());
    std::string name = index < argNames.size() && !argNames[index].empty()
                           ? argNames[index]
                           : "arg" + std::to_string(index);
    int rank = tensorType.getRank();
    Halide::ImageParam param(*type, rank, name);
    TensorFunc tensor{Func(param), {}, *type};
    for (int d = 0; d < rank; ++d) {
      int halideDim = rank - 1 - d;
      param.dim(halideDim).set_min(0);
      if (tensorType.isDynamicDim(d)) {
        tensor.shape.push_back(param.dim(halideDim).extent());
      } else {
        int64_t size = tensorType.getDimSize(d);
        if (size > std::numeric_limits<int32_t>::max())
          return func.emitError("dim ")
                 << d << " of argument #" << index
                 << " exceeds the 2^31 - 1 elements a Halide dim can hold";
        // Enforced: a buffer of another size makes the kernel fail.
        param.dim(halideDim).set_extent(static_cast<int32_t>(size));
        tensor.shape.push_back(Expr(static_cast<int32_t>(size)));
      }
    }
    // Estimates for autoschedulers: static sizes, else 256.
    Halide::Region estimates;
    for (int d = rank - 1; d >= 0; --d)
      estimates.push_back(
          {0, tensorType.isDynamicDim(d)
                  ? 256
                  : static_cast<int>(tensorType.getDimSize(d))});
    param.set_estimates(estimates);
    algorithm.inputs.push_back(param);
    algorithm.inputNames.push_back(name);
    values[arg] = tensor;
  }

  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::set<std::string> used;
      for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
        TensorFunc result = get(operand);
        bool fromOp = opIndex(operand) != algorithm.ops.size();
        // Arguments, constants and values returned twice get their own
        // output Func: an output must be a distinct Func the kernel defines.
        if (!fromOp || !used.insert(result.func.name()).second) {
          Func copy(algorithm.name + "_result_" + std::to_string(index));
          std::vector<Var> vars = makeVars(result.rank());
          define(copy, vars, result(toExprs(vars)));
          result.func = copy;
          algorithm.ops.push_back(
              {Family::Elementwise, copy.name(), result, {}, {}, {}});
        } else {
          markEpilogue(operand);
          markRounding(operand);
        }
        // The caller's buffer must have exactly the result's size.
        for (size_t d = 0; d < result.rank(); ++d) {
          int halideDim = result.rank() - 1 - d;
          result.func.output_buffer().dim(halideDim).set_bounds(
              0, result.shape[d]);
        }
        Halide::Region estimates;
        for (size_t d = result.rank(); d-- > 0;) {
          auto size = Halide::Internal::as_const_int(result.shape[d]);
          estimates.push_back({0, size ? static_cast<int>(*size) : 256});
        }
        result.func.set_estimates(estimates);
        algorithm.outputs.push_back(result);
      }
      markSharedColumnSums();
      if (algorithm.outputs.empty())
        return func.emitError("@")
               << func.getSymName() << " returns nothing; a kernel needs "
               << "at least one result";
      return std::move(algorithm);
    }
    if (failed(lowerOp(op)))
      return failure();
  }
  return func.emitError("function has no func.return");
}

size_t KernelBuilder::opIndex(Value value) {
  std::string name = get(value).func.name();
  auto it = llvm::find_if(algorithm.ops, [&](const OpStages &s) {
    return s.name == name;
  });
  return static_cast<size_t>(it - algorithm.ops.begin());
}

/// A sum over positions (attn.reduce_sum over dim 0 of a matrix) of a value
/// that an attn.matmul, before or after it, contracts over the same
/// positions as its transposed lhs (linear attention's phi(K)^T 1 next to
/// phi(K)^T V; its gradient computes the sums first): the product records
/// it (info "columnSum", the sum's index in algorithm.ops), so the schedule
/// may reduce both in the same chunk tasks from one copy of the chunk's lhs
/// (scheduleGemm; scheduleKernel schedules the sum right after the
/// product).
void KernelBuilder::markSharedColumnSums() {
  for (auto sum : func.getBody().front().getOps<ReduceSumOp>()) {
    Value input = sum.getInput();
    if (sum.getDim() != 0 ||
        cast<RankedTensorType>(input.getType()).getRank() != 2)
      continue;
    for (Operation *user : input.getUsers()) {
      auto product = dyn_cast<MatmulOp>(user);
      if (!product || product.getLhs() != input || !product.getTransposeLhs())
        continue;
      size_t productIndex = opIndex(product.getResult()),
             sumIndex = opIndex(sum.getResult());
      if (productIndex == algorithm.ops.size() ||
          sumIndex == algorithm.ops.size())
        continue;
      algorithm.ops[productIndex].info.emplace("columnSum",
                                               static_cast<int64_t>(sumIndex));
      break;
    }
  }
}

/// A pointwise op (add, mul, div, scale, feature_map_grad) that the kernel
/// returns, with an operand that an attn.matmul of the same shape computes
/// for it alone, directly or through a chain of pointwise ops that each feed
/// only the next (the gradient's dK = phi'(K) (V dC^T + 1 dz^T)): the
/// returned op is recorded as that product's epilogue (info "epilogueOf",
/// the product's index in algorithm.ops), so the schedule may compute the
/// product in the op's own output tiles instead of writing it to memory and
/// reading it back (scheduleKernel); the chain is inlined into the tiles.
/// The rounding of a 16-bit result (arith.truncf, of the pointwise op or of
/// the product itself) is part of the epilogue: the returned truncf is then
/// the op that owns the tiles, with the pointwise op inlined into it.
///
/// The chain may hold one sum over the last dim (a value per row), and the
/// product may feed the chain more than once: the softmax backward
/// R (G - rowsum(G R)) of efficient attention's dQ, with G = dE C^T. The
/// sum is then recorded too (info "epilogueRowSum"), for the tiles to
/// compute when one tile spans a whole row; G is never stored.
static bool isPointwise(Operation *op) {
  return op && isa<AddOp, MulOp, DivOp, ScaleOp, FeatureMapGradOp>(op);
}

/// A reduce_sum over the last dim of a matrix or batch of them.
static bool isRowSum(Operation *op) {
  auto sum = dyn_cast_or_null<ReduceSumOp>(op);
  if (!sum)
    return false;
  int64_t rank = cast<RankedTensorType>(sum.getInput().getType()).getRank();
  return rank >= 2 && static_cast<int64_t>(sum.getDim()) == rank - 1;
}

/// Whether `value` reaches `target` through the ops of `chain`.
static bool readsThroughChain(Value value, Value target,
                              const llvm::SmallPtrSetImpl<Operation *> &chain) {
  if (value == target)
    return true;
  Operation *op = value.getDefiningOp();
  if (!op || !chain.contains(op))
    return false;
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    return readsThroughChain(operand, target, chain);
  });
}

void KernelBuilder::markEpilogue(Value returned) {
  Operation *epilogue = returned.getDefiningOp();
  SmallVector<Value> operands;
  if (auto rounding = dyn_cast_or_null<arith::TruncFOp>(epilogue)) {
    Value rounded = rounding.getIn();
    Operation *pointwise = rounded.getDefiningOp();
    if (isPointwise(pointwise) && rounded.hasOneUse())
      llvm::append_range(operands, pointwise->getOperands());
    else
      operands.push_back(rounded);
  } else if (isPointwise(epilogue)) {
    llvm::append_range(operands, epilogue->getOperands());
  } else {
    return;
  }
  // The operands of single-use pointwise ops in the chain (and of one row
  // sum), breadth first (a direct operand is preferred).
  llvm::SmallPtrSet<Operation *, 8> chain;
  chain.insert(epilogue);
  if (auto rounding = dyn_cast<arith::TruncFOp>(epilogue))
    if (Operation *pointwise = rounding.getIn().getDefiningOp();
        isPointwise(pointwise) && rounding.getIn().hasOneUse())
      chain.insert(pointwise);
  Operation *rowSum = nullptr;
  for (size_t i = 0; i < operands.size(); ++i) {
    Operation *inner = operands[i].getDefiningOp();
    if (!inner || !operands[i].hasOneUse() || chain.contains(inner))
      continue;
    bool firstRowSum = !rowSum && isRowSum(inner);
    if (!isPointwise(inner) && !firstRowSum)
      continue;
    if (firstRowSum)
      rowSum = inner;
    chain.insert(inner);
    llvm::append_range(operands, inner->getOperands());
  }
  size_t epilogueIndex = opIndex(returned);
  if (epilogueIndex == algorithm.ops.size())
    return;
  std::map<std::string, int64_t> &info = algorithm.ops[epilogueIndex].info;
  auto resultType = cast<RankedTensorType>(returned.getType());
  for (Value operand : operands) {
    auto product = operand.getDefiningOp<MatmulOp>();
    if (!product)
      continue;
    size_t productIndex = opIndex(operand);
    if (productIndex == algorithm.ops.size())
      continue;
    auto type = cast<RankedTensorType>(operand.getType());
    bool forChainAlone = llvm::all_of(operand.getUsers(), [&](Operation *user) {
      return chain.contains(user);
    });
    if (forChainAlone && type.getShape() == resultType.getShape() &&
        !info.count("epilogueOf")) {
      info["epilogueOf"] = static_cast<int64_t>(productIndex);
      size_t rowSumIndex =
          rowSum ? opIndex(rowSum->getResult(0)) : algorithm.ops.size();
      if (rowSumIndex != algorithm.ops.size() &&
          readsThroughChain(rowSum->getOperand(0), operand, chain))
        info["epilogueRowSum"] = static_cast<int64_t>(rowSumIndex);
      // What the epilogue's tiles compute: the chain (a row sum only when
      // recorded for the tiles) and the product.
      llvm::SmallPtrSet<Operation *, 8> tiles(chain.begin(), chain.end());
      if (rowSum && !info.count("epilogueRowSum"))
        tiles.erase(rowSum);
      tiles.insert(product);
      SmallVector<Value> reads(operands);
      llvm::append_range(reads, product->getOperands());
      markRowCompanions(epilogue, epilogueIndex, reads, tiles);
      continue;
    }
    if (!operand.hasOneUse())
      continue;
    // One value per output row (linear attention's row sums): computed per
    // row block in the epilogue's tasks too.
    if (type.getRank() == resultType.getRank() && type.hasStaticShape() &&
        resultType.hasStaticShape() &&
        type.getShape().drop_back() == resultType.getShape().drop_back() &&
        type.getShape().back() == 1 && !info.count("epilogueRowsOf"))
      info["epilogueRowsOf"] = static_cast<int64_t>(productIndex);
  }
}

/// Whether `value` is computed from `target`'s result (`visited`: the ops
/// already walked, which do not reach it).
static bool dependsOn(Value value, Operation *target,
                      llvm::SmallPtrSetImpl<Operation *> &visited) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return false;
  if (op == target)
    return true;
  if (!visited.insert(op).second)
    return false;
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    return dependsOn(operand, target, visited);
  });
}

/// Whether an op of `from` computes from an op of `to`.
static bool groupDependsOn(ArrayRef<Operation *> from,
                           ArrayRef<Operation *> to) {
  for (Operation *target : to) {
    llvm::SmallPtrSet<Operation *, 16> visited;
    for (Operation *op : from)
      if (op != target && llvm::any_of(op->getOperands(), [&](Value operand) {
            return dependsOn(operand, target, visited);
          }))
        return true;
  }
  return false;
}

/// Whether the loop nests of `group`, fused into one task loop, would form
/// a cycle with the fused groups in `groups` (which form none): each
/// group's ops compute together, so a group that reads another's results
/// must come after all of it. Two epilogues with a companion each can feed
/// each other crosswise while no pair does: bf16 efficient attention's dQ
/// reads the context C and its companion computes dC, while dK reads dC
/// and C was dK's candidate companion (Halide: "Stuck in a loop computing
/// a realization order").
static bool
closesGroupCycle(ArrayRef<Operation *> group,
                 ArrayRef<llvm::SmallVector<Operation *, 8>> groups) {
  // Depth-first from the new group along "reads from"; the old groups
  // alone are acyclic, so a cycle passes through the new one.
  SmallVector<size_t> pending;
  llvm::SmallBitVector seen(groups.size());
  for (size_t g = 0; g < groups.size(); ++g)
    if (groupDependsOn(group, groups[g])) {
      pending.push_back(g);
      seen.set(g);
    }
  while (!pending.empty()) {
    size_t g = pending.pop_back_val();
    if (groupDependsOn(groups[g], group))
      return true;
    for (size_t next = 0; next < groups.size(); ++next)
      if (!seen.test(next) && groupDependsOn(groups[g], groups[next])) {
        pending.push_back(next);
        seen.set(next);
      }
  }
  return false;
}

/// Products that read, row by row, a matrix the epilogue `epilogueOp`
/// (algorithm.ops[epilogue]) reads too, of as many rows as its result, and
/// that neither compute from the epilogue nor feed it (compute_with needs
/// two loop nests that do not feed each other), and whose group does not
/// close a cycle with the groups marked before (closesGroupCycle). Static
/// 2-D shapes only. Two kinds, recorded on the product with the
/// epilogue's index:
/// - info "chunkCompanion": a product that contracts over those rows (a
///   transposed lhs, or its rhs): efficient attention's dC = softmax(Q)^T dO
///   next to dQ = softmax(Q) (dO C^T - ...). The schedule may reduce each
///   chunk of its positions in the epilogue's task of those rows.
/// - info "rowCompanion": a returned product with that matrix as its lhs
///   (rows of the result): dV = softmax_positions(K) dC next to
///   dK = softmax_positions(K) (V dC^T - ...). The schedule may run both
///   in the same tasks of row blocks.
/// Either way the second reads the rows from cache, not memory. A
/// normalization that only the pair reads (one of those softmaxes) is also
/// recorded (info "sharedRows", its index), to be computed per task where
/// both read it instead of written whole and read twice. `tiles`: the ops
/// the epilogue's tiles compute (its chain and its product).
void KernelBuilder::markRowCompanions(
    Operation *epilogueOp, size_t epilogue, ArrayRef<Value> epilogueReads,
    const llvm::SmallPtrSetImpl<Operation *> &tiles) {
  auto epilogueType =
      cast<RankedTensorType>(epilogueOp->getResult(0).getType());
  if (epilogueType.getRank() != 2 || !epilogueType.hasStaticShape())
    return;
  auto returned = [&](Value value) {
    return llvm::any_of(value.getUsers(), [](Operation *user) {
      return isa<func::ReturnOp>(user);
    });
  };
  for (Value read : epilogueReads) {
    auto readType = dyn_cast<RankedTensorType>(read.getType());
    if (!readType || readType.getRank() != 2 || !readType.hasStaticShape() ||
        readType.getDimSize(0) != epilogueType.getDimSize(0))
      continue;
    for (Operation *user : read.getUsers()) {
      auto product = dyn_cast<MatmulOp>(user);
      if (!product)
        continue;
      bool contracts = product.getTransposeLhs() &&
                       (product.getLhs() == read || product.getRhs() == read);
      bool byRows = !product.getTransposeLhs() && product.getLhs() == read &&
                    returned(product.getResult());
      auto type = cast<RankedTensorType>(product.getType());
      if ((!contracts && !byRows) || type.getRank() != 2 ||
          !type.hasStaticShape())
        continue;
      size_t productIndex = opIndex(product.getResult());
      if (productIndex == algorithm.ops.size() ||
          algorithm.ops[productIndex].info.count("chunkCompanion") ||
          algorithm.ops[productIndex].info.count("rowCompanion"))
        continue;
      llvm::SmallPtrSet<Operation *, 16> visited;
      if (dependsOn(epilogueOp->getResult(0), product, visited))
        continue;
      visited.clear();
      if (llvm::any_of(product->getOperands(), [&](Value operand) {
            return dependsOn(operand, epilogueOp, visited);
          }))
        continue;
      llvm::SmallVector<Operation *, 8> group(tiles.begin(), tiles.end());
      group.append({epilogueOp, product});
      if (closesGroupCycle(group, rowTaskGroups))
        continue;
      rowTaskGroups.push_back(group);
      std::map<std::string, int64_t> &info = algorithm.ops[productIndex].info;
      info[contracts ? "chunkCompanion" : "rowCompanion"] =
          static_cast<int64_t>(epilogue);
      // (Only readers inside the shared task: the product and what the
      // epilogue's tiles compute, not a reduction the epilogue reads.)
      size_t rowsIndex = opIndex(read);
      if (isa_and_nonnull<NormalizeOp, SoftmaxFromLseOp>(
              read.getDefiningOp()) &&
          rowsIndex != algorithm.ops.size() &&
          llvm::all_of(read.getUsers(), [&](Operation *reader) {
            return reader == product || tiles.contains(reader);
          }))
        info["sharedRows"] = static_cast<int64_t>(rowsIndex);
      return;
    }
  }
}

/// A returned arith.truncf of a value that one op (not an elementwise one)
/// computes for it alone: recorded on the rounding (info "roundingOf", the
/// producer's index in algorithm.ops), so the producer's schedule may tile
/// the rounded output directly and never store its f32 result
/// (scheduleKernel).
void KernelBuilder::markRounding(Value returned) {
  auto rounding = returned.getDefiningOp<arith::TruncFOp>();
  if (!rounding || !rounding.getIn().hasOneUse())
    return;
  size_t roundingIndex = opIndex(returned),
         producerIndex = opIndex(rounding.getIn());
  if (roundingIndex == algorithm.ops.size() ||
      producerIndex == algorithm.ops.size() ||
      algorithm.ops[producerIndex].family == Family::Elementwise)
    return;
  algorithm.ops[roundingIndex].info["roundingOf"] =
      static_cast<int64_t>(producerIndex);
}

LogicalResult KernelBuilder::lowerOp(Operation &op) {
  const Lowering *lowering =
      llvm::find_if(kLowerings, [&](const Lowering &entry) {
        return entry.opName == op.getName().getStringRef();
      });
  if (lowering == std::end(kLowerings))
    return op.emitError("codegen does not support '")
           << op.getName() << "' ops";
  // Size computations (index, i1) and float scalars (padding values) check
  // their own types.
  for (Type type : op.getResultTypes())
    if (!type.isIndex() && !type.isInteger(1) && !isa<FloatType>(type) &&
        failed(elementType(&op, type)))
      return failure();
  if (!isStorageOp(op) &&
      (llvm::any_of(op.getOperandTypes(), isReducedPrecisionTensor) ||
       llvm::any_of(op.getResultTypes(), isReducedPrecisionTensor)))
    return op.emitError("codegen computes in f32: run --attn-widen-to-f32 "
                        "first (attn-compile and attn-run do) to widen this "
                        "op's bf16 and f16 tensors");
  return (this->*lowering->lower)(&op);
}

FailureOr<KernelAlgorithm>
mlir::attn::codegen::buildAlgorithm(func::FuncOp func,
                                    ArrayRef<std::string> argNames,
                                    const AlgorithmOptions &options) {
  return KernelBuilder(func, argNames, options).run();
}
