//===- LoweringFixes.h - Custom Halide lowering passes ------*- C++ -*-===//
//
// Passes that run at the end of Halide's lowering of every attn pipeline
// (Pipeline::add_custom_lowering_pass). They correct what Halide 21 lowers
// wrongly and never change values.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CODEGEN_LOWERINGFIXES_H
#define ATTN_CODEGEN_LOWERINGFIXES_H

#include "Halide.h"

namespace mlir::attn::codegen {

/// Halide 21 splits a prefetched region into cache lines (SplitPrefetch in
/// Prefetch.cpp) but steps its line loops by the line's *bytes* in an
/// offset counted in *elements*: for a row of 64 floats it prefetched the
/// first line of 4 consecutive rows instead of the row's 4 lines. This pass
/// divides each line loop's step by the element size, and unrolls the line
/// loops of up to 8 lines, which are short and sit in inner loops.
void addPrefetchLoweringFix(Halide::Pipeline &pipeline);

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_LOWERINGFIXES_H
