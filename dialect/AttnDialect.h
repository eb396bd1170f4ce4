//===- AttnDialect.h - The attn dialect --------------------------*- C++
//-*-===//
#ifndef ATTN_DIALECT_ATTNDIALECT_H
#define ATTN_DIALECT_ATTNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialect/AttnDialect.h.inc"

#endif // ATTN_DIALECT_ATTNDIALECT_H
