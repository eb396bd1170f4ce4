//===- Tuner.h - Schedule search for one kernel --------------------*- C++
//-*-===//
//
// attn-compile --tune: finds the fastest correct schedule of one kernel on
// the shapes it will run. Candidates, in order: the hand schedules with
// their default parameters, the Halide autoschedulers of the target class
// (Adams2019 and Mullapudi2016 on CPUs, Anderson2021 on GPUs), then a
// seeded random coordinate search over the ScheduleParams knobs of the op
// families present, until the budget is spent. Each candidate runs in a
// child process (a crash, a hang past the budget or a Halide error rejects
// it, never the tuning): JIT compile, one run compared with the reference
// runtime (attn-run --check's rule and tolerance), then the median of timed
// runs. The best measured candidate wins.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_TUNER_H
#define ATTN_API_TUNER_H

#include "api/TuningCache.h"
#include "codegen/ScheduleParams.h"
#include "runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::tuning {

struct TuneOptions {
  std::string target = "host";
  /// Wall-clock seconds the search may take (candidates still running at
  /// the deadline are stopped).
  double budgetSeconds = 60.0;
  /// Candidates to try at most (0: as many as the budget allows).
  unsigned maxCandidates = 0;
  unsigned timedRuns = 7; ///< per candidate, after one checked run
  uint64_t seed = 1;      ///< of the random search
  /// Raised to defaultCheckTolerance for kernels with bf16/f16 values.
  double tolerance = 1e-4;
  std::vector<std::string> argNames;
  /// Progress lines go here (nullptr: silent).
  llvm::raw_ostream *progress = &llvm::errs();
};

/// A schedule the tuner can try.
struct Candidate {
  std::string autoscheduler; ///< "" for the hand schedules with `params`
  codegen::ScheduleParams params;

  /// "default", "Adams2019", or the knobs that differ from the defaults
  /// ("gemm.tileRows=8 attention.queryBlock=64").
  std::string describe() const;
};

struct TuneResult {
  /// False when no candidate was measured within the budget (`best` is then
  /// the default and nothing should be cached).
  bool measured = false;
  Candidate best;
  double bestMs = 0.0;
  std::optional<double> defaultMs; ///< none if rejected or not measured
  /// Median time of each autoscheduler tried (none: rejected/failed).
  std::vector<std::pair<std::string, std::optional<double>>> autoschedulerMs;
  unsigned tried = 0, rejected = 0;
};

/// The knob groups of ScheduleParams the ops of `kernel` read (for a GPU
/// target only "gpu").
std::vector<std::string> relevantKnobGroups(func::FuncOp kernel, bool gpu);

/// The cache key of `kernel` (after the passes) on arguments of `shapes`.
CacheKey makeCacheKey(func::FuncOp kernel,
                      ArrayRef<std::vector<int64_t>> shapes,
                      StringRef resolvedTarget);

/// Tunes `kernel` (the function after the pass pipeline) on `inputs` (one
/// per argument). `reference` holds the reference runtime's results for
/// these inputs. Fails only for an invalid target; a budget too small to
/// measure anything gives a result with `measured` false.
FailureOr<TuneResult> tuneKernel(func::FuncOp kernel,
                                 ArrayRef<::attn::runtime::Tensor> inputs,
                                 ArrayRef<::attn::runtime::Tensor> reference,
                                 const TuneOptions &options);

} // namespace mlir::attn::tuning

#endif // ATTN_API_TUNER_H
