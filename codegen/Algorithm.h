//===- Algorithm.h - attn ops as Halide Func graphs (internal) ---*- C++
//-*-===//
//
// The algorithm half of code generation: every op of a func.func becomes one
// Halide Func named after it (`matmul_0`, `dot_product_1`, ...) plus named
// helper Funcs for its intermediate stages (`dot_product_1_scores`, ...).
// No scheduling happens here; each op records its Funcs by role in an
// OpStages entry that the schedules (Schedule.h) read. Like the schedules,
// the lowerings live in one file per op family, Algorithm*.cpp
// (KernelBuilder.h lists them).
//
// Tensor dims are in MLIR order (outermost first) everywhere in this code;
// Halide Funcs take their arguments innermost first, so TensorFunc
// reverses the index list on access.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CODEGEN_ALGORITHM_H
#define ATTN_CODEGEN_ALGORITHM_H

#include "Halide.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::attn::codegen {

/// A tensor value as a Halide Func plus its extents (MLIR dim order).
struct TensorFunc {
  Halide::Func func;
  std::vector<Halide::Expr> shape;
  Halide::Type type;

  size_t rank() const { return shape.size(); }
  /// Loads the element at `index` (MLIR dim order).
  Halide::Expr operator()(std::vector<Halide::Expr> index) const;
};

/// Which schedule an op gets.
enum class Family {
  Elementwise,           ///< inlined; vectorized + parallel when an output
  Gemm,                  ///< attn.matmul: register-tiled product
  Normalize,             ///< per-slice statistics + elementwise division;
                         ///< reduce_sum and unbroadcast (the sums alone)
  Scan,                  ///< attn.prefix_sum
  Gather,                ///< attn.bilinear_gather, gather_pixels,
                         ///< deformable, scatter_pixels
  RowAttention,          ///< dot_product whose steps are all over keys
  MaterializedAttention, ///< dot_product with a step over queries
  Efficient,             ///< attn.efficient (K^T V with rfactor)
  Choice,                ///< scf.if on sizes: select(condition, then, else)
  AttentionGradRows,     ///< attention_grad's pass by query blocks
  AttentionGradKeys,     ///< attention_grad's pass by key blocks
  AttentionGradOnePass,  ///< attention_grad with saved lse and O: one pass
  DeformableGradSamples, ///< deformable_grad's location and weight pass
  DeformableGradValue,   ///< deformable_grad's scatter into the value
  DeformableGradSlice,   ///< dlocations, dweights: slices of the samples
};

/// The Funcs of one op, by role, for the schedule part.
struct OpStages {
  Family family;
  std::string name; ///< Func name of the result
  TensorFunc result;
  /// Helper Funcs by role ("acc", "scores", "max_0", ...).
  std::map<std::string, Halide::Func> stages;
  /// The reduction domain of each helper with an update, by role.
  std::map<std::string, Halide::RDom> domains;
  /// Op-specific integers (e.g. "dim": the normalized dim in Halide order,
  /// "steps": number of normalization steps).
  std::map<std::string, int64_t> info;
  /// Choice only: the run-time condition on sizes that picks the branch.
  Halide::Expr condition;
  /// The op's location, and the form of its algorithm and schedule and why
  /// (attention ops; CompileOptions::remarkSchedule prints it).
  LocationAttr loc;
  std::string form;
};

/// A func.func as a Halide pipeline, before scheduling.
struct KernelAlgorithm {
  std::string name;
  std::vector<Halide::ImageParam> inputs;
  /// Argument names of the spec (the ImageParam names).
  std::vector<std::string> inputNames;
  std::vector<TensorFunc> outputs;
  std::vector<OpStages> ops;
  /// Conditions the sizes must satisfy at run time, with a message each:
  /// strings, and sizes the kernel prints when the condition fails.
  std::vector<std::pair<Halide::Expr, std::vector<Halide::Expr>>> requirements;

  Halide::Pipeline pipeline() const;
  /// ImageParams as pipeline arguments, in spec order.
  std::vector<Halide::Argument> arguments() const;
};

/// Why an op's bf16 products do not pair where the target rules pairs out
/// (AlgorithmOptions::bf16DotProducts), for --remark-schedule.
inline constexpr const char *kNoBf16PairsReason =
    "no bf16 pairs on this target (precision.bf16Pairs: by default CPUs "
    "whose vdpbf16ps outruns the f32 FMA, Zen 4 and Zen 5; hand schedules)";

/// Algorithmic choices that change the order of a reduction (not its result
/// beyond rounding). Codegen sets them from the schedule parameters of CPU
/// targets, so the tuner can drive them.
struct AlgorithmOptions {
  /// Softmax attention over m keys (one softmax step over keys; m static, a
  /// multiple of keySplit, more than keySplit): attend to each split of
  /// keySplit keys on its own (its max, row sums and weights x V), then merge
  /// the splits, rescaled by exp(split max - row max). The working set of a
  /// query block is then one split's scores, not a whole row of m keys.
  /// 0: never split.
  int keySplit = 0;
  /// keySplit when the attention is causal (splits past the diagonal of a
  /// query block are skipped).
  int causalKeySplit = 0;
  /// Softmax attention (one softmax step over keys) whose problems have at
  /// most fewRows query rows, n static: split-KV over parts of keyPart keys
  /// (a multiple of 16), for any m (static or dynamic; the last part may be
  /// ragged). The scores are dot products of Q's rows with K's rows, read
  /// in place: no transposed copy of K, whose cost a few rows cannot
  /// amortize. Takes precedence over keySplit. 0: never.
  int fewRows = 0;
  int keyPart = 0;
  /// attn.efficient's softmax over positions (m and dv static, m a
  /// multiple of efficientChunk, at least two chunks): each chunk of efficientChunk
  /// positions takes its own max, weights, context and sums, and the merge
  /// rescales the chunks by exp(chunk max - max), so no pass over K computes
  /// the max first. 0: one max over all positions.
  int efficientChunk = 0;
  /// attn.normalize softmax over a dim that is not the last (positions, of
  /// static length at least 2 * normalizeChunk): each chunk of
  /// normalizeChunk positions takes its max and sum of exps in one read of
  /// its entries, and the merge rescales each chunk's sum by
  /// exp(chunk max - max): one pass over the input for both statistics
  /// instead of two. 0: the max, then the sum.
  int normalizeChunk = 0;
  /// Convert bf16 and f16 to and from f32 with integer arithmetic (Halide's
  /// own emulation, lower_float16_cast) instead of casts: the GPU backends
  /// do not lower 16-bit float casts (PTX has no bf16 conversion in Halide
  /// 21; OpenCL would need the cl_khr_fp16 extension). CPU targets keep the
  /// casts, which x86 pattern-matches (F16C, AVX512-BF16).
  bool integerFloat16Casts = false;
  /// Products of bf16 values reduce in pairs (PrecisionParams::bf16Pairs;
  /// by default where the target's vdpbf16ps outruns its f32 FMA: Zen 4,
  /// Zen 5, not Sapphire Rapids; kNoBf16PairsReason): the scores Q K^T of
  /// softmax attention on bf16 Q and K reduce features in pairs, which Halide
  /// lowers to vdpbf16ps (two bf16 products per f32 lane). K is then packed as
  /// (feature pair, key, 2) so a vector holds the pairs of 16 keys.
  bool bf16DotProducts = false;
  /// attn.attention_grad with the forward's saved lse and output: one pass
  /// over key blocks of gradKeyBlock keys and query blocks of gradQueryBlock
  /// queries (AttentionGradParams::onePass*; 0: the two passes).
  int gradQueryBlock = 0;
  int gradKeyBlock = 0;
};

/// exp(x) for the x <= 0 of a softmax (x = value - max) in the fused
/// attention ops and attn.normalize. f64 keeps Halide's precise exp; f32
/// uses a vectorized polynomial, cheaper than Halide's fast_exp (13 vector
/// instructions instead of 22 on AVX-512: no floor, which Halide splits into
/// two 256-bit roundps, and no clamps of the exponent) and than Halide 21's
/// f32 exp (about 10 more per vector in attn.normalize): x = n ln2 + r with
/// n = trunc(x log2(e) - 1/2), the nearest integer for x <= 0, so
/// |r| <= ln2 / 2, where a degree-5 polynomial (relative-error minimax,
/// fitted for this range) is within 1e-7 of e^r; 2^n is built in the
/// exponent bits. Relative error < 5e-7 (mostly ln2's rounding times n),
/// far inside the 1e-4 tolerance.
/// x <= -88 gives n = -127, whose 2^n bits are 0: exp is then exactly 0,
/// as with Halide's fast_exp; so does x = -inf (a weight of 0). A NaN x
/// gives NaN, which the clamp alone would turn into a number: a NaN score
/// (or inf - inf, the score +inf minus its row maximum) makes its slice's
/// sum NaN, as the NaN rule says (docs/reliability.md); the bit test and
/// select (keepNaN) cost three instructions per score.
/// (test/unit/SoftmaxExpTest.cpp)
Halide::Expr softmaxExp(Halide::Expr x);

/// Builds the algorithm of `func`; `argNames` names the ImageParams (spec
/// argument names; "argN" where missing). Unsupported ops and types are emitted
/// as errors at their location. May throw Halide::Error (callers catch).
FailureOr<KernelAlgorithm> buildAlgorithm(func::FuncOp func,
                                          ArrayRef<std::string> argNames,
                                          const AlgorithmOptions &options = {});

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_ALGORITHM_H
