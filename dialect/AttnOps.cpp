//===- AttnOps.cpp - Operations of the attn dialect -----------------------===//
//
// Custom assembly directives, type inference (through AttnShapes) and the
// verifiers of cross-operand and attribute rules. Folds and canonicalization
// patterns live in AttnFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnOps.h"
#include "dialect/AttnShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `[softmax over queries, sum over keys eps 1.000000e-09]`
static ParseResult parseNormList(OpAsmParser &parser, ArrayAttr &norm) {
  SmallVector<Attribute> steps;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            NormStepAttr step = parseNormStepBody(parser);
            if (!step)
              return failure();
            steps.push_back(step);
            return success();
          }))
    return failure();
  norm = parser.getBuilder().getArrayAttr(steps);
  return success();
}

static void printNormList(OpAsmPrinter &printer, Operation *, ArrayAttr norm) {
  printer << '[';
  llvm::interleaveComma(norm, printer, [&](Attribute step) {
    printNormStepBody(printer, cast<NormStepAttr>(step));
  });
  printer << ']';
}

/// `[100x150, 50x75]`, stored flat as [100, 150, 50, 75].
static ParseResult parseLevels(OpAsmParser &parser,
                               DenseI64ArrayAttr &spatialShapes) {
  SmallVector<int64_t> flat;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            SMLoc loc = parser.getCurrentLocation();
            SmallVector<int64_t> dims;
            if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                          /*withTrailingX=*/false))
              return failure();
            if (dims.size() != 2)
              return parser.emitError(loc, "expected a level as HxW, got ")
                     << dims.size() << " sizes";
            flat.append(dims.begin(), dims.end());
            return success();
          }))
    return failure();
  spatialShapes = parser.getBuilder().getDenseI64ArrayAttr(flat);
  return success();
}

static void printLevels(OpAsmPrinter &printer, Operation *,
                        DenseI64ArrayAttr spatialShapes) {
  ArrayRef<int64_t> flat = spatialShapes.asArrayRef();
  printer << '[';
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    printer << (i ? ", " : "") << flat[i] << 'x' << flat[i + 1];
  printer << ']';
}

/// The types of optional operands in a type list, `, type` for each
/// operand present: which ones are present is known from the operand list,
/// so two optional operands in a row stay unambiguous.
static ParseResult parseOptionalOperandTypes(
    OpAsmParser &parser, std::optional<OpAsmParser::UnresolvedOperand> first,
    Type &firstType, std::optional<OpAsmParser::UnresolvedOperand> second,
    Type &secondType, std::optional<OpAsmParser::UnresolvedOperand> third,
    Type &thirdType) {
  if (first && (parser.parseComma() || parser.parseType(firstType)))
    return failure();
  if (second && (parser.parseComma() || parser.parseType(secondType)))
    return failure();
  if (third && (parser.parseComma() || parser.parseType(thirdType)))
    return failure();
  return success();
}

static void printOptionalOperandTypes(OpAsmPrinter &printer, Operation *,
                                      Value first, Type firstType, Value second,
                                      Type secondType, Value third,
                                      Type thirdType) {
  for (auto [operand, type] :
       {std::pair{first, firstType}, std::pair{second, secondType},
        std::pair{third, thirdType}})
    if (operand)
      printer << ", " << type;
}

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

namespace {
/// Emits shape errors at the op's location when inference runs as part of
/// verification, and stays silent when a caller only probes.
struct ShapeErrorAt {
  std::optional<Location> location;
  InFlightDiagnostic operator()() const {
    if (location)
      return mlir::emitError(*location);
    return InFlightDiagnostic();
  }
};
} // namespace

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// All operands must share one element type; it becomes the result's.
static LogicalResult
inferResult(ValueRange operands, const ShapeErrorAt &emitError,
            llvm::function_ref<FailureOr<Shape>()> inferShape,
            SmallVectorImpl<Type> &inferred) {
  Type elementType;
  for (Value operand : operands) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return failure(); // ODS operand constraints report this.
    if (!elementType) {
      elementType = type.getElementType();
    } else if (elementType != type.getElementType()) {
      emitError() << "operands must share one element type, got " << elementType
                  << " and " << type.getElementType();
      return failure();
    }
  }
  FailureOr<Shape> shape = inferShape();
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

bool mlir::attn::isReducedPrecisionTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         (tensor.getElementType().isBF16() || tensor.getElementType().isF16());
}

/// bf16, f16 and f32 compute in f32 (docs/precision.md), so a result of one
/// of them may be declared with another: the value is rounded to it once.
static bool isF32Computed(Type type) {
  return type.isBF16() || type.isF16() || type.isF32();
}

/// Results may be more or less static than inferred but must not contradict;
/// their element type is the inferred one or, within the f32-computed types,
/// another to round to.
static bool areCompatibleTensorTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != 1 || rhs.size() != 1)
    return false;
  auto l = dyn_cast<RankedTensorType>(lhs.front());
  auto r = dyn_cast<RankedTensorType>(rhs.front());
  if (!l || !r)
    return false;
  Type inferred = l.getElementType(), declared = r.getElementType();
  bool typesAgree = inferred == declared ||
                    (isF32Computed(inferred) && isF32Computed(declared));
  return typesAgree && areCompatibleShapes(l.getShape(), r.getShape());
}

#define ATTN_COMPATIBLE_RETURN_TYPES(OpTy)                                     \
  bool OpTy::isCompatibleReturnTypes(TypeRange lhs, TypeRange rhs) {           \
    return areCompatibleTensorTypes(lhs, rhs);                                 \
  }
ATTN_COMPATIBLE_RETURN_TYPES(ExternalAttentionOp)
ATTN_COMPATIBLE_RETURN_TYPES(DeformableAttentionOp)
ATTN_COMPATIBLE_RETURN_TYPES(MatmulOp)
ATTN_COMPATIBLE_RETURN_TYPES(AddOp)
ATTN_COMPATIBLE_RETURN_TYPES(MulOp)
ATTN_COMPATIBLE_RETURN_TYPES(DivOp)
ATTN_COMPATIBLE_RETURN_TYPES(ReduceSumOp)
ATTN_COMPATIBLE_RETURN_TYPES(BilinearGatherOp)
ATTN_COMPATIBLE_RETURN_TYPES(GatherPixelsOp)
ATTN_COMPATIBLE_RETURN_TYPES(BroadcastOp)
ATTN_COMPATIBLE_RETURN_TYPES(UnbroadcastOp)
ATTN_COMPATIBLE_RETURN_TYPES(ScatterPixelsOp)
#undef ATTN_COMPATIBLE_RETURN_TYPES

/// The operand names attn.external uses in shape errors.
static AttentionOperandNames externalOperandNames() {
  AttentionOperandNames names;
  names.query = "input";
  names.key = "memory_key";
  names.value = "memory_value";
  return names;
}

static std::optional<ArrayRef<int64_t>> optionalShapeOf(Value value) {
  if (!value)
    return std::nullopt;
  return shapeOf(value);
}

// inferReturnTypes has the same ODS signature and preamble for every op; only
// the operands that share the element type (`typed`, an expression over
// `operands`) and the shape rule (an expression over `adaptor` and
// `emitError`) differ.
#define ATTN_INFER_RETURN_TYPES_TYPED_BY(OpTy, typed, ...)                     \
  LogicalResult OpTy::inferReturnTypes(                                        \
      MLIRContext *, std::optional<Location> location, ValueRange operands,    \
      DictionaryAttr attributes, OpaqueProperties properties,                  \
      RegionRange regions, SmallVectorImpl<Type> &inferred) {                  \
    Adaptor adaptor(operands, attributes, properties, regions);                \
    ShapeErrorAt emitError{location};                                          \
    return inferResult(                                                        \
        typed, emitError, [&]() { return __VA_ARGS__; }, inferred);            \
  }
#define ATTN_INFER_RETURN_TYPES(OpTy, ...)                                     \
  ATTN_INFER_RETURN_TYPES_TYPED_BY(OpTy, operands, __VA_ARGS__)

ATTN_INFER_RETURN_TYPES(ExternalAttentionOp,
                        inferAttentionShape(shapeOf(adaptor.getInput()),
                                            shapeOf(adaptor.getMemoryKey()),
                                            shapeOf(adaptor.getMemoryValue()),
                                            std::nullopt,
                                            externalOperandNames(), emitError))
ATTN_INFER_RETURN_TYPES(
    DeformableAttentionOp,
    inferDeformableShape(shapeOf(adaptor.getValue()),
                         shapeOf(adaptor.getSamplingLocations()),
                         shapeOf(adaptor.getAttentionWeights()),
                         adaptor.getSpatialShapes(), emitError))
ATTN_INFER_RETURN_TYPES(MatmulOp,
                        inferMatmulShape(shapeOf(adaptor.getLhs()),
                                         shapeOf(adaptor.getRhs()),
                                         adaptor.getTransposeLhs(),
                                         adaptor.getTransposeRhs(), emitError))
ATTN_INFER_RETURN_TYPES(AddOp, broadcastShapes(shapeOf(adaptor.getLhs()),
                                               shapeOf(adaptor.getRhs()),
                                               "lhs and rhs", emitError))
ATTN_INFER_RETURN_TYPES(MulOp, broadcastShapes(shapeOf(adaptor.getLhs()),
                                               shapeOf(adaptor.getRhs()),
                                               "lhs and rhs", emitError))
ATTN_INFER_RETURN_TYPES(DivOp, broadcastShapes(shapeOf(adaptor.getLhs()),
                                               shapeOf(adaptor.getRhs()),
                                               "lhs and rhs", emitError))
ATTN_INFER_RETURN_TYPES(ReduceSumOp,
                        inferReduceSumShape(shapeOf(adaptor.getInput()),
                                            adaptor.getDim(), emitError))
ATTN_INFER_RETURN_TYPES(
    BilinearGatherOp,
    inferBilinearGatherShape(shapeOf(adaptor.getValue()),
                             shapeOf(adaptor.getLocations()),
                             adaptor.getSpatialShapes(), emitError))
// Pixel coordinates stay f32 or f64 (verifyPixelType); the value operand
// alone gives the element type.
ATTN_INFER_RETURN_TYPES_TYPED_BY(
    GatherPixelsOp, operands.take_front(1),
    inferGatherPixelsShape(shapeOf(adaptor.getValue()),
                           shapeOf(adaptor.getPixels()),
                           adaptor.getSpatialShapes(), emitError))
ATTN_INFER_RETURN_TYPES(BroadcastOp,
                        inferBroadcastShape(shapeOf(adaptor.getInput()),
                                            shapeOf(adaptor.getLike()),
                                            emitError))
ATTN_INFER_RETURN_TYPES(UnbroadcastOp,
                        inferUnbroadcastShape(shapeOf(adaptor.getInput()),
                                              shapeOf(adaptor.getLike()),
                                              emitError))
// Pixel coordinates stay f32 or f64 (verifyPixelType); the cotangent operand
// alone gives the element type.
ATTN_INFER_RETURN_TYPES_TYPED_BY(
    ScatterPixelsOp, operands.take_front(1),
    inferScatterPixelsShape(shapeOf(adaptor.getCotangent()),
                            shapeOf(adaptor.getPixels()),
                            adaptor.getSpatialShapes(), emitError))
#undef ATTN_INFER_RETURN_TYPES
#undef ATTN_INFER_RETURN_TYPES_TYPED_BY

/// Result types of an op with several results (the fused gradients): all
/// operands share one element type, and `inferShapes` gives one shape per
/// result.
static LogicalResult inferResults(
    ValueRange operands, const ShapeErrorAt &emitError,
    llvm::function_ref<FailureOr<SmallVector<Shape, 3>>()> inferShapes,
    SmallVectorImpl<Type> &inferred) {
  SmallVector<Type> single;
  FailureOr<SmallVector<Shape, 3>> shapes;
  if (failed(inferResult(
          operands, emitError,
          [&]() -> FailureOr<Shape> {
            shapes = inferShapes();
            if (failed(shapes))
              return failure();
            return (*shapes)[0];
          },
          single)))
    return failure();
  Type elementType = cast<RankedTensorType>(single.front()).getElementType();
  for (const Shape &shape : *shapes)
    inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

/// Each result may be more or less static than inferred.
static bool areCompatibleResultTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip(lhs, rhs)) {
    Type left = l, right = r;
    if (!areCompatibleTensorTypes(ArrayRef<Type>(left), ArrayRef<Type>(right)))
      return false;
  }
  return true;
}

Type mlir::attn::rowStatisticsElementType(Type operandElement) {
  if (operandElement.isF64())
    return operandElement;
  return Float32Type::get(operandElement.getContext());
}

bool mlir::attn::isSoftmaxOverKeys(ArrayAttr norm) {
  SmallVector<NormStepAttr> steps;
  for (Attribute attr : norm)
    if (auto step = dyn_cast<NormStepAttr>(attr);
        step && step.getKind() != NormKind::none)
      steps.push_back(step);
  return steps.size() == 1 && steps[0].getKind() == NormKind::softmax &&
         steps[0].getAxis() == NormAxis::keys;
}

/// The result of an attention op with a saved second result: the operands
/// share an element type, and the shape is inferAttentionShape's.
static LogicalResult inferAttentionResult(ValueRange operands, Value query,
                                          Value key, Value value, Value mask,
                                          const ShapeErrorAt &emitError,
                                          SmallVectorImpl<Type> &inferred) {
  return inferResult(
      operands, emitError,
      [&]() {
        return inferAttentionShape(shapeOf(query), shapeOf(key),
                                   shapeOf(value), optionalShapeOf(mask),
                                   AttentionOperandNames(), emitError);
      },
      inferred);
}

/// attn.dot_product: the result, then with `with_lse` the row log-sum-exp
/// (the result's shape without its last dim, in the accumulator's type).
LogicalResult DotProductAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  ShapeErrorAt emitError{location};
  if (failed(inferAttentionResult(operands, adaptor.getQuery(),
                                  adaptor.getKey(), adaptor.getValue(),
                                  adaptor.getMask(), emitError, inferred)))
    return failure();
  if (!adaptor.getWithLse())
    return success();
  if (!isSoftmaxOverKeys(adaptor.getNorm())) {
    emitError() << "'with_lse' needs a norm list of one softmax over keys "
                   "(besides `none` steps): the log-sum-exp is that "
                   "softmax's row statistic";
    return failure();
  }
  auto result = cast<RankedTensorType>(inferred.front());
  inferred.push_back(
      RankedTensorType::get(inferRowStatisticsShape(result.getShape()),
                            rowStatisticsElementType(result.getElementType())));
  return success();
}

/// An attention result as for the other attention ops, then optionally
/// saved values (attn.dot_product's log-sum-exp, attn.efficient's context
/// and key log-sum-exp) of exactly the inferred element type: they are not
/// rounded to a storage type.
static bool areCompatibleWithSavedResult(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size() || lhs.empty() ||
      !areCompatibleTensorTypes(lhs.take_front(), rhs.take_front()))
    return false;
  return llvm::all_of(
      llvm::zip(lhs.drop_front(), rhs.drop_front()), [](auto pair) {
        auto l = dyn_cast<RankedTensorType>(std::get<0>(pair));
        auto r = dyn_cast<RankedTensorType>(std::get<1>(pair));
        return l && r && l.getElementType() == r.getElementType() &&
               areCompatibleShapes(l.getShape(), r.getShape());
      });
}

bool DotProductAttentionOp::isCompatibleReturnTypes(TypeRange lhs,
                                                    TypeRange rhs) {
  return areCompatibleWithSavedResult(lhs, rhs);
}

/// attn.efficient: the result, then with `with_context` the normalized
/// context and the key softmax's log-sum-exp (softmax variant; f32 or f64,
/// the types a gradient saves them in).
LogicalResult EfficientAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  ShapeErrorAt emitError{location};
  if (failed(inferAttentionResult(operands, adaptor.getQuery(),
                                  adaptor.getKey(), adaptor.getValue(),
                                  /*mask=*/nullptr, emitError, inferred)))
    return failure();
  if (!adaptor.getWithContext())
    return success();
  if (adaptor.getVariant() != EfficientVariant::softmax) {
    emitError() << "'with_context' needs the softmax variant (the scaling "
                   "variant's context is K^T V / n, which a gradient "
                   "recomputes in one product)";
    return failure();
  }
  ArrayRef<int64_t> query = shapeOf(adaptor.getQuery());
  for (Value operand : {adaptor.getKey(), adaptor.getValue()})
    if (shapeOf(operand).drop_back(2) != query.drop_back(2)) {
      emitError() << "'with_context' needs query, key and value with the same "
                     "leading dims (one context per problem, no broadcast)";
      return failure();
    }
  auto result = cast<RankedTensorType>(inferred.front());
  Type element = result.getElementType();
  if (!element.isF32() && !element.isF64()) {
    emitError() << "'with_context' needs f32 or f64 operands, got " << element;
    return failure();
  }
  inferred.push_back(RankedTensorType::get(
      inferEfficientContextShape(result.getShape(), query.back()), element));
  inferred.push_back(RankedTensorType::get(
      inferEfficientKeyLseShape(result.getShape(), query.back()), element));
  return success();
}

bool EfficientAttentionOp::isCompatibleReturnTypes(TypeRange lhs,
                                                   TypeRange rhs) {
  return areCompatibleWithSavedResult(lhs, rhs);
}

/// attn.attention_grad has three results, one per attention operand.
LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  ShapeErrorAt emitError{location};
  // The saved statistics have their own element type (verify()); the mask
  // has the others'.
  SmallVector<Value> typed(operands.take_front(4));
  for (Value operand : {adaptor.getMask(), adaptor.getOutput()})
    if (operand)
      typed.push_back(operand);
  return inferResults(
      typed, emitError,
      [&]() {
        return inferAttentionGradShapes(
            shapeOf(adaptor.getQuery()), shapeOf(adaptor.getKey()),
            shapeOf(adaptor.getValue()), shapeOf(adaptor.getCotangent()),
            optionalShapeOf(adaptor.getMask()),
            optionalShapeOf(adaptor.getLse()),
            optionalShapeOf(adaptor.getOutput()), emitError);
      },
      inferred);
}

bool AttentionGradOp::isCompatibleReturnTypes(TypeRange lhs, TypeRange rhs) {
  return areCompatibleResultTypes(lhs, rhs);
}

/// attn.deformable_grad has three results, one per deformable operand.
LogicalResult DeformableGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  ShapeErrorAt emitError{location};
  return inferResults(
      operands, emitError,
      [&]() {
        return inferDeformableGradShapes(
            shapeOf(adaptor.getValue()),
            shapeOf(adaptor.getSamplingLocations()),
            shapeOf(adaptor.getAttentionWeights()),
            shapeOf(adaptor.getCotangent()), adaptor.getSpatialShapes(),
            emitError);
      },
      inferred);
}

bool DeformableGradOp::isCompatibleReturnTypes(TypeRange lhs, TypeRange rhs) {
  return areCompatibleResultTypes(lhs, rhs);
}

//===----------------------------------------------------------------------===//
// Verifiers (rules that are not shape rules)
//===----------------------------------------------------------------------===//

LogicalResult DotProductAttentionOp::verify() {
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be finite, got ")
           << getScale().convertToDouble();
  return success();
}

LogicalResult AttentionGradOp::verify() {
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be finite, got ")
           << getScale().convertToDouble();
  if (Value lse = getLse()) {
    Type expected =
        rowStatisticsElementType(getQuery().getType().getElementType());
    Type element = cast<RankedTensorType>(lse.getType()).getElementType();
    if (element != expected)
      return emitOpError("lse must have the accumulator's element type ")
             << expected << " (f64 for f64 operands, else f32), got "
             << element;
  }
  if (getOutput() && !getLse())
    return emitOpError("output (the forward's result, for D = rowsum(dO * O)) "
                       "needs lse: both are what the forward saved");
  return success();
}

LogicalResult ExternalAttentionOp::verify() {
  return verifyNormEps(NormKind::sum, getEps().convertToDouble(),
                       [&]() { return emitOpError(); });
}

LogicalResult DivOp::verify() {
  return verifyNormEps(NormKind::sum, getEps().convertToDouble(),
                       [&]() { return emitOpError(); });
}

LogicalResult ScaleOp::verify() {
  if (!std::isfinite(getFactor().convertToDouble()))
    return emitOpError("factor must be finite, got ")
           << getFactor().convertToDouble();
  return success();
}

/// `dim` must name a dim of `type`.
static LogicalResult verifyDimInRange(Operation *op, int64_t dim,
                                      RankedTensorType type) {
  if (dim < type.getRank())
    return success();
  return op->emitOpError("dim ")
         << dim << " is out of range for a tensor of rank " << type.getRank();
}

LogicalResult NormalizeOp::verify() {
  if (failed(verifyDimInRange(*this, getDim(), getInput().getType())))
    return failure();
  return verifyNormEps(getKind(), getEps().convertToDouble(),
                       [&]() { return emitOpError(); });
}

LogicalResult SoftmaxFromLseOp::verify() {
  RankedTensorType input = getInput().getType();
  if (failed(verifyDimInRange(*this, getDim(), input)))
    return failure();
  Type element = input.getElementType();
  if (!element.isF32() && !element.isF64())
    return emitOpError("needs f32 or f64 operands (the types a forward saves "
                       "statistics in), got ")
           << element;
  auto lse = cast<RankedTensorType>(getLse().getType());
  if (lse.getElementType() != element)
    return emitOpError("lse must have the input's element type ")
           << element << ", got " << lse.getElementType();
  Shape expected(input.getShape());
  expected[getDim()] = 1;
  if (lse.getRank() != input.getRank() ||
      !areCompatibleShapes(lse.getShape(), expected))
    return emitOpError("lse must have the input's shape with size 1 at dim ")
           << getDim() << " (" << formatShape(expected) << "), got " << lse;
  return success();
}

LogicalResult PrefixSumOp::verify() {
  return verifyDimInRange(*this, getDim(), getInput().getType());
}

/// Pixel coordinates are integers: a 16-bit float holds them exactly only up
/// to 256 (bf16) or 2048 (f16), so the gather and its adjoint take them as
/// f32 or f64.
static LogicalResult verifyPixelType(Operation *op, Value pixels) {
  Type element = cast<RankedTensorType>(pixels.getType()).getElementType();
  if (element.isF32() || element.isF64())
    return success();
  return op->emitOpError("pixels must be f32 or f64 (a ")
         << element << " pixel coordinate is exact only up to "
         << (element.isBF16() ? 256 : 2048) << "), got " << pixels.getType();
}

LogicalResult GatherPixelsOp::verify() {
  return verifyPixelType(*this, getPixels());
}

LogicalResult ScatterPixelsOp::verify() {
  return verifyPixelType(*this, getPixels());
}

LogicalResult CausalMaskOp::verify() {
  if (getInput().getType().getRank() < 2)
    return emitOpError("input must have rank >= 2 (..., queries, keys), got "
                       "rank ")
           << getInput().getType().getRank();
  if (std::isnan(getFill().convertToDouble()))
    return emitOpError("fill must not be NaN");
  return success();
}

#define GET_OP_CLASSES
#include "dialect/AttnOps.cpp.inc"
