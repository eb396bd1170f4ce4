//===- Passes.h - attn passes ------------------------------------*- C++
//-*-===//
#ifndef ATTN_PASSES_PASSES_H
#define ATTN_PASSES_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Adds the passes of `attn-default-pipeline` to `pm`.
void buildDefaultPipeline(OpPassManager &pm);

/// Registers the named pipelines (`attn-default-pipeline`).
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PASSES_PASSES_H
