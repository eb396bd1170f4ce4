//===- AttnDialect.cpp - The attn dialect and its attributes --------------===//

#include "dialect/AttnDialect.h"
#include "dialect/AttnAttrs.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

#include "dialect/AttnDialect.cpp.inc"
#include "dialect/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/AttnAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialect/AttnOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// NormStepAttr
//===----------------------------------------------------------------------===//

NormStepAttr mlir::attn::parseNormStepBody(AsmParser &parser) {
  MLIRContext *context = parser.getContext();
  StringRef kindName, axisName;
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kindName))
    return {};
  std::optional<NormKind> kind = symbolizeNormKind(kindName);
  if (!kind) {
    parser.emitError(kindLoc, "unknown normalization kind '")
        << kindName << "'; expected softmax, sum, count or none";
    return {};
  }
  if (parser.parseKeyword("over"))
    return {};
  SMLoc axisLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&axisName))
    return {};
  std::optional<NormAxis> axis = symbolizeNormAxis(axisName);
  if (!axis) {
    parser.emitError(axisLoc, "unknown normalization axis '")
        << axisName << "'; expected keys or queries";
    return {};
  }
  double eps = 0.0;
  SMLoc epsLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("eps")) && parser.parseFloat(eps))
    return {};
  return NormStepAttr::getChecked([&]() { return parser.emitError(epsLoc); },
                                  context, *kind, *axis, llvm::APFloat(eps));
}

void mlir::attn::printNormStepBody(AsmPrinter &printer, NormStepAttr step) {
  printer << stringifyNormKind(step.getKind()) << " over "
          << stringifyNormAxis(step.getAxis());
  if (!step.getEps().isZero()) {
    printer << " eps ";
    printer.printFloat(step.getEps());
  }
}

Attribute NormStepAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  NormStepAttr step = parseNormStepBody(parser);
  if (!step || parser.parseGreater())
    return {};
  return step;
}

void NormStepAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printNormStepBody(printer, *this);
  printer << '>';
}

LogicalResult
mlir::attn::verifyNormEps(NormKind kind, double eps,
                          function_ref<InFlightDiagnostic()> emitError) {
  if (!std::isfinite(eps) || eps < 0.0)
    return emitError() << "eps must be finite and >= 0, got " << eps;
  if (eps != 0.0 && kind != NormKind::sum)
    return emitError() << "eps only applies to 'sum' normalization, not '"
                       << stringifyNormKind(kind) << "'";
  return success();
}

LogicalResult NormStepAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   NormKind kind, NormAxis axis,
                                   llvm::APFloat eps) {
  return verifyNormEps(kind, eps.convertToDouble(), emitError);
}
