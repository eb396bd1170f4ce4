//===- AlgorithmShapes.cpp - Reshapes, constants and sizes ----------------===//
//
// Tensor reshapes, slices (extract and insert), pads, casts and constants,
// each one Func of index arithmetic or data (their sizes may be run-time
// index values); and the size computations and run-time choice (scf.if)
// that --attn-reassociate emits for dynamic sizes: index and i1 values are
// scalar Exprs of the input extents, not Funcs.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn::codegen::detail;

//===----------------------------------------------------------------------===//
// Tensor reshapes, slices, casts and constants
//===----------------------------------------------------------------------===//

LogicalResult KernelBuilder::lowerExpandShape(Operation *operation) {
  auto op = cast<tensor::ExpandShapeOp>(operation);
  const TensorFunc &input = get(op.getSrc());
  // A dynamic dim is its output_shape value (a run-time chunk count).
  FailureOr<std::vector<Expr>> computed =
      indexOperands(op, op.getMixedOutputShape(), "output_shape entry");
  if (failed(computed))
    return failure();
  FailureOr<std::vector<Expr>> shape =
      extents(op, op.getResultType(), *computed);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(shape->size());
  Index inputIndex;
  // Each input dim is the row-major linearization of its group.
  for (ReassociationIndices group : op.getReassociationIndices()) {
    Expr linear = 0;
    for (int64_t d : group)
      linear = linear * (*shape)[d] + vars[d];
    inputIndex.push_back(linear);
  }
  for (auto [inputDim, group] : llvm::enumerate(op.getReassociationIndices())) {
    Expr size = 1;
    for (int64_t d : group)
      size = size * (*shape)[d];
    requireEqual(input.shape[inputDim], Halide::Internal::simplify(size),
                 "expand_shape source dim " + std::to_string(inputDim));
  }
  Func result(opFuncName(op));
  define(result, vars, input(inputIndex));
  bind(op, Family::Elementwise, {result, *shape, input.type});
  return success();
}

LogicalResult KernelBuilder::lowerCollapseShape(Operation *operation) {
  auto op = cast<tensor::CollapseShapeOp>(operation);
  const TensorFunc &input = get(op.getSrc());
  std::vector<Expr> computed;
  auto groups = op.getReassociationIndices();
  for (ReassociationIndices group : groups) {
    Expr size = 1;
    for (int64_t d : group)
      size = size * input.shape[d];
    computed.push_back(Halide::Internal::simplify(size));
  }
  FailureOr<std::vector<Expr>> shape =
      extents(op, op.getResultType(), computed);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(shape->size());
  Index inputIndex(input.rank());
  // Unflatten each result index over its group, innermost dim first.
  for (auto [resultDim, group] : llvm::enumerate(groups)) {
    Expr rest = vars[resultDim];
    for (size_t g = group.size(); g-- > 0;) {
      int64_t d = group[g];
      if (g == 0) {
        inputIndex[d] = rest;
      } else {
        inputIndex[d] = rest % input.shape[d];
        rest = rest / input.shape[d];
      }
    }
  }
  Func result(opFuncName(op));
  define(result, vars, input(inputIndex));
  bind(op, Family::Elementwise, {result, *shape, input.type});
  return success();
}

LogicalResult KernelBuilder::lowerConstant(Operation *operation) {
  auto op = cast<arith::ConstantOp>(operation);
  if (op.getType().isIndex() || op.getType().isInteger(1)) {
    APInt value = cast<IntegerAttr>(op.getValue()).getValue();
    scalars[op] = op.getType().isIndex()
                      ? Halide::Internal::make_const(Halide::UInt(64),
                                                     value.getZExtValue())
                      : Halide::Internal::make_bool(!value.isZero());
    return success();
  }
  // A float scalar is a padding value, which lowerPad reads from the
  // attribute.
  if (isa<FloatType>(op.getType()))
    return success();
  auto dense = dyn_cast<DenseFPElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError("codegen only supports dense float tensor constants");
  auto type = cast<RankedTensorType>(dense.getType());
  FailureOr<std::vector<Expr>> shape = extents(op, type, {});
  if (failed(shape))
    return failure();
  FailureOr<Halide::Type> stored = elementType(op, type);
  if (failed(stored))
    return failure();
  // bf16 and f16 values are exact in f32: the data is stored as f32 and
  // read through a cast.
  Halide::Type elem = stored->bits() == 64 ? *stored : Halide::Float(32);
  std::string name = freshName("constant");
  std::vector<Var> vars = makeVars(type.getRank());
  Func result(name);
  if (dense.isSplat()) {
    define(result, vars,
           Halide::cast(*stored,
                        constant(elem, dense.getSplatValue<APFloat>()
                                           .convertToDouble())));
  } else {
    std::vector<int> sizes;
    for (int64_t d = type.getRank(); d-- > 0;)
      sizes.push_back(static_cast<int>(type.getDimSize(d)));
    // Row-major data is a Halide buffer with reversed extents.
    Halide::Buffer<> buffer(elem, sizes, name + "_data");
    size_t index = 0;
    for (const APFloat &value : dense.getValues<APFloat>()) {
      double v = value.convertToDouble();
      if (elem.bits() == 64)
        reinterpret_cast<double *>(buffer.data())[index++] = v;
      else
        reinterpret_cast<float *>(buffer.data())[index++] =
            static_cast<float>(v);
    }
    std::vector<Var> args(vars.rbegin(), vars.rend());
    std::vector<Expr> argExprs(args.begin(), args.end());
    result(args) = Halide::cast(*stored, buffer(argExprs));
  }
  bind(op, Family::Elementwise, {result, *shape, *stored});
  return success();
}

// arith.extf and arith.truncf on tensors, the only ops that see bf16 and f16
// values after attn-widen-to-f32: widening is exact; narrowing rounds to
// nearest even (Halide's float casts).
LogicalResult KernelBuilder::lowerFloatCast(Operation *op) {
  const TensorFunc &input = get(op->getOperand(0));
  FailureOr<Halide::Type> type = elementType(op, op->getResult(0).getType());
  if (failed(type))
    return failure();
  std::vector<Var> vars = makeVars(input.rank());
  Func result(opFuncName(op));
  Expr converted = Halide::cast(*type, input(toExprs(vars)));
  if (options.integerFloat16Casts)
    converted = Halide::Internal::lower_float16_cast(
        converted.as<Halide::Internal::Cast>());
  define(result, vars, converted);
  bind(op, Family::Elementwise, {result, input.shape, *type});
  return success();
}

// A copy with the declared type: static result dims become constants that
// the data must match at run time (a requirement, like every static size).
LogicalResult KernelBuilder::lowerCast(Operation *operation) {
  auto op = cast<tensor::CastOp>(operation);
  const TensorFunc &input = get(op.getSource());
  FailureOr<std::vector<Expr>> shape =
      extents(op, cast<RankedTensorType>(op.getType()), input.shape);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(input.rank());
  Func result(opFuncName(op));
  define(result, vars, input(toExprs(vars)));
  bind(op, Family::Elementwise, {result, *shape, input.type});
  return success();
}

Expr KernelBuilder::indexValue(OpFoldResult value) {
  if (std::optional<int64_t> known = getConstantIntValue(value))
    return Halide::Internal::make_const(Halide::UInt(64), *known);
  return scalars.lookup(cast<Value>(value));
}

FailureOr<Expr> KernelBuilder::indexOperand(Operation *op, OpFoldResult value,
                                            const std::string &what) {
  if (std::optional<int64_t> known = getConstantIntValue(value)) {
    if (*known < 0 || *known > std::numeric_limits<int32_t>::max())
      return op->emitError("codegen: ")
             << what << " " << *known
             << " is not in [0, 2^31 - 1], the extents a Halide dim can hold";
    return Expr(static_cast<int32_t>(*known));
  }
  FailureOr<Expr> index = scalar(op, cast<Value>(value));
  if (failed(index))
    return failure();
  algorithm.requirements.push_back(
      {*index <= Halide::Internal::make_const(
                     Halide::UInt(64), std::numeric_limits<int32_t>::max()),
       {func.getSymName().str() + ": " + opFuncName(op) + " " + what, *index,
        Expr("exceeds the 2^31 - 1 elements a Halide dim can hold")}});
  return Halide::cast<int32_t>(*index);
}

FailureOr<std::vector<Expr>>
KernelBuilder::indexOperands(Operation *op, ArrayRef<OpFoldResult> values,
                             const std::string &what) {
  std::vector<Expr> exprs;
  for (OpFoldResult value : values) {
    FailureOr<Expr> expr = indexOperand(op, value, what);
    if (failed(expr))
      return failure();
    exprs.push_back(*expr);
  }
  return exprs;
}

FailureOr<KernelBuilder::SliceWindow>
KernelBuilder::sliceWindow(OffsetSizeAndStrideOpInterface op,
                           const std::vector<Expr> &whole,
                           const std::string &name, StringRef access) {
  if (!op.getStrides().empty())
    return op->emitError("codegen needs static strides for ") << op->getName();
  FailureOr<std::vector<Expr>> offsets =
      indexOperands(op, op.getMixedOffsets(), "offset");
  FailureOr<std::vector<Expr>> sizes =
      indexOperands(op, op.getMixedSizes(), "size");
  if (failed(offsets) || failed(sizes))
    return failure();
  SliceWindow window{*offsets, *sizes, {}};
  for (auto [d, stride] : llvm::enumerate(op.getStaticStrides())) {
    Expr offset = window.offsets[d], size = window.sizes[d];
    std::vector<Expr> message = {
        func.getSymName().str() + ": " + name + " " + access.str() + " dim " +
            std::to_string(d) + " out of bounds: offset",
        offset,
        Expr("size"),
        size,
        Expr("stride " + std::to_string(stride) + " in a dim of"),
        whole[d]};
    auto staticOffset = Halide::Internal::as_const_int(offset);
    auto staticSize = Halide::Internal::as_const_int(size);
    if (staticOffset && staticSize) {
      if (*staticOffset + (*staticSize - 1) * stride >
          std::numeric_limits<int32_t>::max())
        return op->emitError("codegen: ")
               << op->getName() << " " << access
               << " past the 2^31 - 1 elements a Halide dim can hold";
      // The last index must be inside a dim that may be dynamic.
      if (*staticSize > 0)
        algorithm.requirements.push_back(
            {Expr(static_cast<int32_t>(*staticOffset +
                                       (*staticSize - 1) * stride)) < whole[d],
             message});
    } else {
      // In 64 bits: the last index of a run-time block may overflow 32.
      auto wide = [](Expr x) { return Halide::cast<int64_t>(x); };
      algorithm.requirements.push_back(
          {size == 0 ||
               wide(offset) + (wide(size) - 1) * Expr(stride) < wide(whole[d]),
           message});
    }
    window.strides.push_back(static_cast<int32_t>(stride));
  }
  return window;
}

// A strided block (the rank kept): out[i] = in[offset + i * stride] per dim.
// Offsets and sizes may be index values (the first n rows of a padded
// tensor), checked against the source's extents at run time.
LogicalResult KernelBuilder::lowerExtractSlice(Operation *operation) {
  auto op = cast<tensor::ExtractSliceOp>(operation);
  if (op.getType().getRank() != op.getSourceType().getRank())
    return op.emitError("codegen does not support rank-reducing "
                        "tensor.extract_slice");
  const TensorFunc &input = get(op.getSource());
  std::string name = opFuncName(op);
  FailureOr<SliceWindow> window = sliceWindow(op, input.shape, name, "reads");
  if (failed(window))
    return failure();
  FailureOr<std::vector<Expr>> shape = extents(op, op.getType(), window->sizes);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(input.rank());
  Index at;
  for (size_t d = 0; d < input.rank(); ++d)
    at.push_back(window->offsets[d] + vars[d] * window->strides[d]);
  Func result(name);
  define(result, vars, input(at));
  bind(op, Family::Elementwise, {result, *shape, input.type});
  return success();
}

// The adjoint of extract_slice: `dest` with `source` written into the
// strided block (the rank kept): out[i] = source[(i - offset) / stride]
// where i - offset is a multiple of the stride below size * stride in every
// dim, else dest[i]. The source index is clamped so bounds inference sees
// the source's extents.
LogicalResult KernelBuilder::lowerInsertSlice(Operation *operation) {
  auto op = cast<tensor::InsertSliceOp>(operation);
  if (op.getSourceType().getRank() != op.getType().getRank())
    return op.emitError("codegen does not support rank-reducing "
                        "tensor.insert_slice");
  const TensorFunc &source = get(op.getSource());
  const TensorFunc &dest = get(op.getDest());
  std::string name = opFuncName(op);
  FailureOr<SliceWindow> window = sliceWindow(op, dest.shape, name, "writes");
  if (failed(window))
    return failure();
  FailureOr<std::vector<Expr>> shape = extents(op, op.getType(), dest.shape);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(dest.rank());
  Index at = toExprs(vars);
  Func result(name);
  if (llvm::any_of(window->sizes, Halide::Internal::is_const_zero)) {
    // An empty source writes nothing.
    define(result, vars, dest(at));
    bind(op, Family::Elementwise, {result, *shape, dest.type});
    return success();
  }
  Expr inside = Halide::Internal::const_true();
  Index sourceAt;
  for (size_t d = 0; d < dest.rank(); ++d) {
    Expr size = window->sizes[d];
    int32_t stride = window->strides[d];
    Expr relative = vars[d] - window->offsets[d];
    Expr k = stride == 1 ? relative : relative / stride;
    inside = inside && relative >= 0 && k < size;
    if (stride != 1)
      inside = inside && relative % stride == 0;
    sourceAt.push_back(Halide::clamp(k, 0, Halide::max(size - 1, 0)));
  }
  define(result, vars, Halide::select(inside, source(sourceAt), dest(at)));
  bind(op, Family::Elementwise, {result, *shape, dest.type});
  return success();
}

// tensor.pad with a constant value: the source where the index, less the
// low pad, is inside it in every dim, else the value (design: the causal
// form pads positions at the end to a run-time multiple of the chunk). The
// source index is clamped so bounds inference sees the source's extents.
LogicalResult KernelBuilder::lowerPad(Operation *operation) {
  auto op = cast<tensor::PadOp>(operation);
  FloatAttr padding;
  if (!matchPattern(op.getConstantPaddingValue(), m_Constant(&padding)))
    return op.emitError("codegen needs a constant float padding value for "
                        "tensor.pad");
  const TensorFunc &source = get(op.getSource());
  FailureOr<std::vector<Expr>> low =
      indexOperands(op, op.getMixedLowPad(), "low pad");
  FailureOr<std::vector<Expr>> high =
      indexOperands(op, op.getMixedHighPad(), "high pad");
  if (failed(low) || failed(high))
    return failure();
  std::vector<Expr> computed;
  for (auto [d, lowValue, highValue] :
       llvm::enumerate(op.getMixedLowPad(), op.getMixedHighPad())) {
    if (!getConstantIntValue(lowValue) || !getConstantIntValue(highValue)) {
      // Summed as the index values they are, so that a pad to a run-time
      // size (n + (L - n)) simplifies to L: Halide cannot bound the 32-bit
      // sum of a wrapping 64-bit difference, and a reverse scan over this
      // dim needs its extent bounded.
      Expr wide = Halide::Internal::simplify(
          indexValue(lowValue) +
          Halide::cast(Halide::UInt(64), source.shape[d]) +
          indexValue(highValue));
      computed.push_back(Halide::cast<int32_t>(wide));
      continue;
    }
    computed.push_back(
        Halide::Internal::simplify((*low)[d] + source.shape[d] + (*high)[d]));
  }
  FailureOr<std::vector<Expr>> shape =
      extents(op, op.getResultType(), computed);
  if (failed(shape))
    return failure();
  std::vector<Var> vars = makeVars(source.rank());
  Expr inside = Halide::Internal::const_true();
  Index sourceAt;
  for (size_t d = 0; d < source.rank(); ++d) {
    Expr relative = vars[d] - (*low)[d];
    if (Halide::Internal::is_const_zero((*low)[d]) &&
        Halide::Internal::is_const_zero(
            Halide::Internal::simplify((*shape)[d] - source.shape[d]))) {
      sourceAt.push_back(relative); // an unpadded dim
      continue;
    }
    inside = inside && relative >= 0 && relative < source.shape[d];
    sourceAt.push_back(
        Halide::clamp(relative, 0, Halide::max(source.shape[d] - 1, 0)));
  }
  Func result(opFuncName(op));
  define(result, vars,
         Halide::select(inside, source(sourceAt),
                        constant(source.type, padding.getValueAsDouble())));
  bind(op, Family::Elementwise, {result, *shape, source.type});
  return success();
}

//===----------------------------------------------------------------------===//
// Sizes and the run-time choice (scf.if) of --attn-reassociate
//===----------------------------------------------------------------------===//

FailureOr<Expr> KernelBuilder::scalar(Operation *user, Value value) {
  auto it = scalars.find(value);
  if (it != scalars.end())
    return it->second;
  return user->emitError("codegen computes index and i1 values only from "
                         "tensor sizes (tensor.dim, constants and index "
                         "arith), not from this operand");
}

LogicalResult KernelBuilder::lowerDim(Operation *operation) {
  auto op = cast<tensor::DimOp>(operation);
  std::optional<int64_t> index = op.getConstantIndex();
  auto it = values.find(op.getSource());
  if (it == values.end())
    return op.emitError("codegen: tensor.dim of a value it has not lowered");
  const TensorFunc &source = it->second;
  if (!index || *index < 0 || *index >= static_cast<int64_t>(source.rank()))
    return op.emitError("codegen needs a constant, in-range dim index for "
                        "tensor.dim");
  scalars[op] = Halide::cast(Halide::UInt(64), source.shape[*index]);
  return success();
}

/// 1 or 0 as a UInt(64): arithmetic, not a select, keeps a size a single
/// point for Halide's bounds inference (a select of two sizes is an
/// interval, which a reverse scan's index cannot be bounded by).
static Expr unsignedBit(Expr condition) {
  return Halide::cast(Halide::UInt(64), condition);
}

// index arithmetic wraps at 64 bits, as arith specifies; UInt(64) Exprs
// wrap the same way in Halide.
LogicalResult KernelBuilder::lowerIndexArith(Operation *op) {
  if (!op->getResult(0).getType().isIndex())
    return op->emitError("codegen supports '")
           << op->getName() << "' on index values only";
  FailureOr<Expr> lhs = scalar(op, op->getOperand(0));
  FailureOr<Expr> rhs = scalar(op, op->getOperand(1));
  if (failed(lhs) || failed(rhs))
    return failure();
  Expr a = *lhs, b = *rhs;
  scalars[op->getResult(0)] =
      llvm::TypeSwitch<Operation *, Expr>(op)
          .Case([&](arith::AddIOp) { return a + b; })
          .Case([&](arith::SubIOp) { return a - b; })
          .Case([&](arith::MulIOp) { return a * b; })
          .Case([&](arith::MaxUIOp) { return Halide::max(a, b); })
          .Case([&](arith::DivUIOp) { return a / b; })
          .Case([&](arith::DivSIOp) {
            // Toward zero, as arith says (Halide's signed division rounds
            // down): the magnitudes' quotient, negated (mod 2^64) when the
            // signs differ.
            Expr sa = Halide::reinterpret(Halide::Int(64), a);
            Expr sb = Halide::reinterpret(Halide::Int(64), b);
            Expr magnitude = Halide::abs(sa) / Halide::abs(sb);
            return magnitude * (1 - 2 * unsignedBit((sa < 0) != (sb < 0)));
          })
          .Case([&](arith::CeilDivUIOp) {
            return a / b + unsignedBit(a % b != 0);
          });
  return success();
}

LogicalResult KernelBuilder::lowerCmpI(Operation *operation) {
  auto op = cast<arith::CmpIOp>(operation);
  if (!op.getLhs().getType().isIndex())
    return op.emitError("codegen supports arith.cmpi on index values only");
  FailureOr<Expr> lhs = scalar(op, op.getLhs());
  FailureOr<Expr> rhs = scalar(op, op.getRhs());
  if (failed(lhs) || failed(rhs))
    return failure();
  Expr ua = *lhs, ub = *rhs;
  Expr sa = Halide::reinterpret(Halide::Int(64), ua);
  Expr sb = Halide::reinterpret(Halide::Int(64), ub);
  Expr result;
  switch (op.getPredicate()) {
  case arith::CmpIPredicate::eq:
    result = ua == ub;
    break;
  case arith::CmpIPredicate::ne:
    result = ua != ub;
    break;
  case arith::CmpIPredicate::slt:
    result = sa < sb;
    break;
  case arith::CmpIPredicate::sle:
    result = sa <= sb;
    break;
  case arith::CmpIPredicate::sgt:
    result = sa > sb;
    break;
  case arith::CmpIPredicate::sge:
    result = sa >= sb;
    break;
  case arith::CmpIPredicate::ult:
    result = ua < ub;
    break;
  case arith::CmpIPredicate::ule:
    result = ua <= ub;
    break;
  case arith::CmpIPredicate::ugt:
    result = ua > ub;
    break;
  case arith::CmpIPredicate::uge:
    result = ua >= ub;
    break;
  }
  scalars[op] = result;
  return success();
}

LogicalResult KernelBuilder::lowerSelect(Operation *operation) {
  auto op = cast<arith::SelectOp>(operation);
  if (!op.getType().isIndex() && !op.getType().isInteger(1))
    return op.emitError("codegen supports arith.select of index and i1 "
                        "values only");
  FailureOr<Expr> condition = scalar(op, op.getCondition());
  FailureOr<Expr> whenTrue = scalar(op, op.getTrueValue());
  FailureOr<Expr> whenFalse = scalar(op, op.getFalseValue());
  if (failed(condition) || failed(whenTrue) || failed(whenFalse))
    return failure();
  scalars[op] = Halide::select(*condition, *whenTrue, *whenFalse);
  return success();
}

// Both branches are lowered; each tensor result is
//   if_<k>(x) = select(condition, then(x), else(x))
// and the Choice schedule specializes if_<k> on the condition. In each
// specialization the select folds to one branch, so Halide's bounds
// inference marks the other branch's Funcs unused: their allocations and
// loop nests are guarded by `<func>.loaded` and skipped at run time. The
// same code therefore serves JIT and AOT kernels with dynamic sizes.
LogicalResult KernelBuilder::lowerIf(Operation *operation) {
  auto op = cast<scf::IfOp>(operation);
  FailureOr<Expr> condition = scalar(op, op.getCondition());
  if (failed(condition))
    return failure();
  if (op.getElseRegion().empty())
    return op.emitError("codegen needs an else branch in scf.if");
  auto lowerBranch = [&](Block &block) -> FailureOr<Operation *> {
    for (Operation &inner : block) {
      if (isa<scf::YieldOp>(inner))
        return &inner;
      if (failed(lowerOp(inner)))
        return failure();
    }
    return op.emitError("scf.if branch without scf.yield");
  };
  FailureOr<Operation *> thenYield = lowerBranch(*op.thenBlock());
  if (failed(thenYield))
    return failure();
  FailureOr<Operation *> elseYield = lowerBranch(*op.elseBlock());
  if (failed(elseYield))
    return failure();
  Expr cond = Halide::Internal::simplify(*condition);
  for (auto [index, result] : llvm::enumerate(op.getResults())) {
    Value fromThen = (*thenYield)->getOperand(index);
    Value fromElse = (*elseYield)->getOperand(index);
    if (!isa<RankedTensorType>(result.getType())) {
      FailureOr<Expr> a = scalar(op, fromThen), b = scalar(op, fromElse);
      if (failed(a) || failed(b))
        return failure();
      scalars[result] = Halide::select(cond, *a, *b);
      continue;
    }
    const TensorFunc &whenTrue = get(fromThen);
    const TensorFunc &whenFalse = get(fromElse);
    std::vector<Expr> computed;
    for (size_t d = 0; d < whenTrue.rank(); ++d)
      computed.push_back(Halide::Internal::simplify(
          Halide::select(cond, whenTrue.shape[d], whenFalse.shape[d])));
    FailureOr<std::vector<Expr>> shape =
        extents(op, cast<RankedTensorType>(result.getType()), computed);
    if (failed(shape))
      return failure();
    std::vector<Var> vars = makeVars(whenTrue.rank());
    Index at = toExprs(vars);
    Func choice(opFuncName(op));
    TensorFunc tensor{choice, *shape, whenTrue.type};
    values[result] = tensor;
    // A condition fixed at compile time needs no run-time choice.
    if (Halide::Internal::is_const(cond)) {
      define(choice, vars,
             Halide::Internal::is_const_one(cond) ? whenTrue(at)
                                                  : whenFalse(at));
      algorithm.ops.push_back(
          {Family::Elementwise, choice.name(), tensor, {}, {}, {}});
      continue;
    }
    define(choice, vars, Halide::select(cond, whenTrue(at), whenFalse(at)));
    algorithm.ops.push_back(
        {Family::Choice, choice.name(), tensor, {}, {}, {}, cond});
  }
  return success();
}
