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
  kPointAxis = 16,  ///< deformable sampling points per level (P)
  kLevelAxis = 32,  ///< deformable feature levels (L)
};

/// Levels up to which deformable attention's corner pass is unrolled per
/// level (Deformable DETR has 4; a long level list stays a loop).
constexpr int64_t kUnrolledLevels = 8;

/// One size at which a schedule or algorithm changes form for f32.
struct SizeThreshold {
  std::string name; ///< where it comes from, e.g. "2 x reduction.chunk"
  int64_t size;     ///< the first size of the new form
  /// > 0: the new form needs a multiple of `period` as well (so size +
  /// period has it again, and size + 1 does not).
  int64_t period;
  unsigned axes; ///< SizeAxis bits
  std::string form; ///< what changes there
  /// > 0: the form needs at least this many positions (kKeyAxis) as well,
  /// so a probe of another axis sets them (a chunked product's columns
  /// change form only once its positions are chunked).
  int64_t keysAtLeast = 0;
};

/// Whether a chunked product's block of `rows` rows of one column tile
/// (`tileBytes` each, `rowBytes` apart) collides in L1, so the block is
/// copied into a contiguous panel (tileChunkPartial): row starts a
/// multiple of a large power of two apart map to a few cache sets. The
/// model is the smallest L1 of the development hosts (Zen 4: 64 sets of
/// 64-byte lines, 8 ways), with two ways of each set left to the other
/// operand's rows and the partial. For example 64 rows of 128 bytes 2 KiB
/// apart need 32 lines in each of the 4 sets they touch.
bool columnPanelConflictsInL1(int64_t rowBytes, int64_t tileBytes,
                              int64_t rows);

/// Every size threshold of the CPU schedules with these knobs, for f32
/// vectors of `vectorWidth` lanes (the target's natural width where a knob
/// says 0), in no particular order.
std::vector<SizeThreshold> sizeThresholds(const ScheduleParams &params,
                                          int vectorWidth);

/// sizeThresholds as a JSON document: {"vector_width": W, "thresholds":
/// [{"name", "size", "period", "axes": ["queries", ...], "form",
/// "keys_at_least"}, ...]}.
std::string sizeThresholdsJson(const ScheduleParams &params, int vectorWidth);

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_SHAPETHRESHOLDS_H
