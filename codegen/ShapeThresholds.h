//===- ShapeThresholds.h - Sizes where a CPU schedule changes form -*- C++ -*-//
//
// The CPU algorithms and schedules change form at certain sizes: a
// reduction over positions splits into parallel chunks past two chunks, a
// softmax over keys splits into key ranges at multiples of keySplit, a
// product's columns stop fitting one register tile... Bugs live on both
// sides of such sizes, so the shape sweep (test/sweep, docs/testing.md)
// sweeps around every size listed here, read through
// `attn-compile --print-thresholds`: a schedule that gains a threshold
// adds it to sizeThresholds() and is swept without editing the test.
// The fixed constants the schedules share are defined here for the same
// reason. Halide-free, like ScheduleParams.h.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CODEGEN_SHAPETHRESHOLDS_H
#define ATTN_CODEGEN_SHAPETHRESHOLDS_H

#include "codegen/ScheduleParams.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::attn::codegen {

/// Running row maxima of attention scores per row (defineLaneMax in
/// AlgorithmAttention.cpp); the key split needs a multiple of it.
constexpr int kRowMaxLanes = 16;
/// keyT rows whose length in bytes is a multiple of this share L1 sets, so
/// they are padded by kKeyRowPaddingBytes (ScheduleAttention.cpp).
constexpr int kKeyRowPeriodBytes = 1024;
constexpr int kKeyRowPaddingBytes = 256;
/// Vectors of accumulators a reduction keeps unrolled in registers at most
/// (the rest of the registers are the loads').
constexpr int kMaxRegisterAccumulators = 8;
/// Elements per parallel task of an elementwise output.
constexpr int64_t kElementwiseTaskElements = 8192;

/// The dims of an op a threshold applies to (bits of SizeThreshold::axes).
enum SizeAxis : unsigned {
  kQueryAxis = 1,   ///< rows: queries (n), a product's rows, samples' queries
  kKeyAxis = 2,     ///< positions reduced over: keys (m), a product's depth
  kFeatureAxis = 4, ///< features and columns: dk, dv, a product's columns
  kChannelAxis = 8, ///< deformable channels per head (D)
};

/// One size at which a schedule or algorithm changes form for f32.
struct SizeThreshold {
  std::string name; ///< where it comes from, e.g. "2 x reduction.chunk"
  int64_t size;     ///< the first size of the new form
  /// > 0: the new form needs a multiple of `period` as well (so size +
  /// period has it again, and size + 1 does not).
  int64_t period;
  unsigned axes; ///< SizeAxis bits
  std::string form; ///< what changes there
};

/// Every size threshold of the CPU schedules with these knobs, for f32
/// vectors of `vectorWidth` lanes (the target's natural width where a knob
/// says 0), in no particular order.
std::vector<SizeThreshold> sizeThresholds(const ScheduleParams &params,
                                          int vectorWidth);

/// sizeThresholds as a JSON document: {"vector_width": W, "thresholds":
/// [{"name", "size", "period", "axes": ["queries", ...], "form"}, ...]}.
std::string sizeThresholdsJson(const ScheduleParams &params, int vectorWidth);

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_SHAPETHRESHOLDS_H
