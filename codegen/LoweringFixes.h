//===- LoweringFixes.h - Custom Halide lowering passes ------*- C++ -*-===//
//
// Passes that run at the end of Halide's lowering of every attn pipeline
// (Pipeline::add_custom_lowering_pass). They correct what Halide 21 lowers
// wrongly or slowly.
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

/// Halide 21 lowers a float vector's sum, min or max to one lane (an
/// `atomic().vectorize()` reduction) to LLVM's reduction intrinsics. In a
/// module that uses is_nan, is_inf or strict_float anywhere, these calls
/// stay strict (no reassoc), and x86 expands them into one dependent
/// scalar op per lane. This pass rewrites each into a tree of halves
/// (16 -> 8 -> 4 -> 2 -> 1 lanes), one vector op per step, as a
/// hand-written horizontal sum does. Sums change their order of additions
/// (a tree, so no less accurate).
void addLaneReductionLoweringFix(Halide::Pipeline &pipeline);

/// Halide 21 gives a stack allocation the native vector alignment unless it
/// is a single 32-bit word (CodeGen_LLVM::create_alloca_at_entry aligns an
/// alloca of more than one element only), yet stores into any allocation
/// as if its base were vector-aligned. A vectorized stage whose buffer holds
/// one f32 (a transposed copy of K with one key and one feature) stored its
/// guarded vector with `vmovaps`, which faults at a misaligned address even
/// with every other lane masked off: attn-run crashed (signal 11). This pass
/// pads every constant allocation of at most 4 bytes that a vector store
/// writes to 8, which the alloca then aligns.
void addSmallAllocationFix(Halide::Pipeline &pipeline);

/// Halide checks an input's bounds (an access beyond a buffer's extent)
/// before the pipeline's requirements, so sizes that break a spec's shape
/// rule at run time (keys of batch 3 against values of batch 2) stopped
/// with "Input buffer v is accessed at 2, which is beyond the max (1) in
/// dimension 2": Halide's dim order, and not the rule that failed. This
/// pass moves the requirements (attn's messages: "f: dot_product_0
/// leading dim 0 must be 1 or agree at run time") ahead of those checks, after
/// the buffers' type and rank checks. A requirement that reads a value bound
/// after that point stays where it was. It also prints each requirement's
/// condition where Halide prints its value (always "(false)").
void addRequirementsFirstFix(Halide::Pipeline &pipeline);

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_LOWERINGFIXES_H
