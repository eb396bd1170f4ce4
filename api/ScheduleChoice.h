//===- ScheduleChoice.h - Which schedule a kernel gets -------- -*- C++ -*-===//
//
// A kernel compiles with the hand schedules and their default knobs unless
// told otherwise: explicit knobs (`--schedule-param`), a Halide
// autoscheduler, the schedule the tuning cache holds for it, or, with
// tuning, the winner of a fresh search (api/Tuner.h), which is then cached.
// The options are checked and the cache is read once per compile
// (resolveScheduleSetup); each kernel then chooses (chooseSchedule).
// Error messages name the attn-compile and attn-run flags that set them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_SCHEDULECHOICE_H
#define ATTN_API_SCHEDULECHOICE_H

#include "api/Console.h"
#include "api/TuningCache.h"
#include "codegen/Codegen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::api {

/// Sets the knobs of `params` from "group.name=value" assignments
/// (--schedule-param).
LogicalResult parseScheduleParams(ArrayRef<std::string> assignments,
                                  codegen::ScheduleParams &params,
                                  std::string &error);

/// Fails with `error` set unless `name` is a known autoscheduler
/// (--autoscheduler).
LogicalResult checkAutoscheduler(StringRef name, std::string &error);

/// How the kernels of a compile are scheduled. An unset optional is an
/// option not given: its default applies, and the tuning options given
/// without `tune` are an error.
struct ScheduleOptions {
  std::vector<std::string> params; ///< "group.name=value" knob assignments
  std::string autoscheduler;       ///< "" for the hand schedules
  bool tune = false;
  std::optional<double> tuneBudget;     ///< seconds per kernel (60)
  std::optional<int> tuneCandidates;    ///< 0: as many as the budget allows
  std::optional<int> tuneRuns;          ///< timed runs per candidate (7)
  std::optional<uint64_t> tuneSeed;     ///< of the search and the inputs (1)
  std::optional<std::string> cachePath; ///< tuning::defaultCachePath()
  bool noCache = false;                 ///< neither read nor write a cache
  /// The size dynamic (?) dims are tuned for and looked up with; without it
  /// kernels with dynamic dims use the default schedules.
  std::optional<int64_t> dynamicSize;
};

/// The checked options of a compile and the tuning cache they read.
struct ScheduleSetup {
  ScheduleOptions options;
  std::string target;                 ///< as given
  std::string resolvedTarget;         ///< Halide's canonical target string
  codegen::ScheduleParams handParams; ///< from options.params
  std::string cachePath;              ///< "" without a cache
  tuning::TuningCache cache;
};

/// Checks `options` for `target` and loads the tuning cache (its warnings go
/// to `console`).
FailureOr<ScheduleSetup> resolveScheduleSetup(const ScheduleOptions &options,
                                              StringRef target,
                                              const Console &console,
                                              std::string &error);

/// The argument shapes `func` is compiled for (dynamic dims take
/// `dynamicSize`), or std::nullopt if a dim stays unknown.
std::optional<std::vector<std::vector<int64_t>>>
tuningShapes(func::FuncOp func, std::optional<int64_t> dynamicSize);

/// Sets the schedule of `compile` for `func` (after the passes): the given
/// knobs, else the autoscheduler, else the cached schedule, else (with
/// `tune`) the tuned one, which is then cached, else the defaults. Prints
/// `tune:` lines to `console`; errors are diagnostics at `func`.
LogicalResult chooseSchedule(func::FuncOp func, ScheduleSetup &setup,
                             codegen::CompileOptions &compile,
                             const Console &console);

/// attn-run --tuning-cache: the schedule `cachePath` holds for `func` (after
/// the passes) on `compile.shapeEstimates` and `compile.target` (which must
/// be valid), if any; prints whether it hit.
LogicalResult useCachedSchedule(func::FuncOp func, StringRef cachePath,
                                codegen::CompileOptions &compile,
                                const Console &console, std::string &error);

} // namespace mlir::attn::api

#endif // ATTN_API_SCHEDULECHOICE_H
