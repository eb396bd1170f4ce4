//===- AttnAttrs.h - Enums and attributes of attn ----------------*- C++
//-*-===//
#ifndef ATTN_DIALECT_ATTNATTRS_H
#define ATTN_DIALECT_ATTNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/APFloat.h"

#include "dialect/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.h.inc"

namespace mlir::attn {
/// Parses and prints the body of a normalization step,
/// `softmax over keys` or `sum over keys eps 1.000000e-09`, shared by
/// #attn.norm<...> and the `norm [...]` list of attn.dot_product.
NormStepAttr parseNormStepBody(AsmParser &parser);

/// The eps rule of every normalization (steps, attn.normalize,
/// attn.external): finite, >= 0, and nonzero only for `sum`.
LogicalResult verifyNormEps(NormKind kind, double eps,
                            function_ref<InFlightDiagnostic()> emitError);
void printNormStepBody(AsmPrinter &printer, NormStepAttr step);
} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNATTRS_H
