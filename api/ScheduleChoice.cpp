//===- ScheduleChoice.cpp - Which schedule a kernel is compiled with ------===//

#include "api/ScheduleChoice.h"

#include "api/KernelCheck.h"
#include "api/MemoryGuard.h"
#include "api/ReferenceEvaluator.h"
#include "api/Tuner.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn::api;
namespace cg = mlir::attn::codegen;
namespace rt = ::attn::runtime;
namespace tuning = mlir::attn::tuning;

LogicalResult
mlir::attn::api::parseScheduleParams(ArrayRef<std::string> assignments,
                                     cg::ScheduleParams &params,
                                     std::string &error) {
  for (const std::string &assignment : assignments) {
    std::string why;
    if (failed(tuning::setScheduleParam(assignment, params, why))) {
      error = "--schedule-param " + why;
      return failure();
    }
  }
  return success();
}

LogicalResult mlir::attn::api::checkAutoscheduler(StringRef name,
                                                  std::string &error) {
  if (llvm::is_contained(cg::knownAutoschedulers(), name))
    return success();
  error = ("--autoscheduler " + name + ": expected one of " +
           llvm::join(cg::knownAutoschedulers(), ", "))
              .str();
  return failure();
}

/// Reads the tuning cache at `path`; its warnings go to `console`.
static FailureOr<tuning::TuningCache>
loadCache(StringRef path, const Console &console, std::string &error) {
  std::vector<std::string> warnings;
  FailureOr<tuning::TuningCache> cache =
      tuning::TuningCache::load(path, error, warnings);
  if (failed(cache))
    return failure();
  for (const std::string &warning : warnings)
    console.warning(warning);
  return cache;
}

/// The seconds a search may take per kernel, as the messages print them.
static std::string budgetText(const ScheduleOptions &options) {
  return llvm::formatv("{0}", options.tuneBudget.value_or(
                                  tuning::TuneOptions().budgetSeconds))
      .str();
}

FailureOr<ScheduleSetup>
mlir::attn::api::resolveScheduleSetup(const ScheduleOptions &options,
                                      StringRef target, const Console &console,
                                      std::string &error) {
  auto fail = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  ScheduleSetup setup;
  setup.options = options;
  setup.target = target.str();
  tuning::TuneOptions defaults;
  if (!options.tune && (options.tuneBudget || options.tuneRuns ||
                        options.tuneSeed || options.tuneCandidates))
    return fail("--tune-budget, --tune-candidates, --tune-runs and "
                "--tune-seed only apply with --tune");
  int candidates = options.tuneCandidates.value_or(defaults.maxCandidates);
  if (candidates < 0)
    return fail("--tune-candidates " + Twine(candidates) +
                ": expected a count (0: no limit)");
  double budget = options.tuneBudget.value_or(defaults.budgetSeconds);
  if (!(budget > 0) || !std::isfinite(budget))
    return fail("--tune-budget " + budgetText(options) +
                ": expected a positive number of seconds");
  int runs = options.tuneRuns.value_or(defaults.timedRuns);
  if (runs < 1)
    return fail("--tune-runs " + Twine(runs) + ": expected at least 1 run");
  if (options.dynamicSize && *options.dynamicSize < 1)
    return fail("--tune-dynamic-size " + Twine(*options.dynamicSize) +
                ": expected a positive size");
  if (options.noCache && options.cachePath)
    return fail("--tuning-cache and --no-tuning-cache exclude each other");
  std::optional<cg::TargetInfo> info = cg::describeTarget(target);
  if (!info)
    return fail(cg::invalidTargetMessage(target));
  setup.resolvedTarget = info->resolved;
  if (!options.params.empty()) {
    if (options.tune || !options.autoscheduler.empty())
      return fail("--schedule-param sets the hand schedules; it excludes "
                  "--tune and --autoscheduler");
    if (failed(parseScheduleParams(options.params, setup.handParams, error)))
      return failure();
    return setup; // the cache plays no part
  }
  if (!options.autoscheduler.empty()) {
    if (options.tune)
      return fail("--autoscheduler and --tune exclude each other (--tune "
                  "tries the autoschedulers itself)");
    if (failed(checkAutoscheduler(options.autoscheduler, error)))
      return failure();
    return setup; // the cache plays no part
  }
  if (options.tune && info->cuda)
    return fail("--tune runs every candidate, and CUDA kernels cannot run on "
                "this machine; tune an OpenCL target (e.g. host-opencl) or "
                "compile without --tune (a cached CUDA entry is still used)");
  if (options.noCache)
    return setup;
  setup.cachePath = options.cachePath.value_or(tuning::defaultCachePath());
  if (setup.cachePath.empty()) {
    if (options.tune)
      return fail("no tuning cache path: set --tuning-cache PATH (neither "
                  "XDG_CACHE_HOME nor HOME is set) or --no-tuning-cache");
    return setup;
  }
  FailureOr<tuning::TuningCache> cache =
      loadCache(setup.cachePath, console, error);
  if (failed(cache))
    return failure();
  setup.cache = std::move(*cache);
  return setup;
}

std::optional<std::vector<std::vector<int64_t>>>
mlir::attn::api::tuningShapes(func::FuncOp func,
                              std::optional<int64_t> dynamicSize) {
  std::vector<std::vector<int64_t>> shapes;
  for (Type type : func.getArgumentTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return std::nullopt;
    std::vector<int64_t> shape;
    for (int64_t dim : tensor.getShape()) {
      if (ShapedType::isDynamic(dim)) {
        if (!dynamicSize || *dynamicSize < 1)
          return std::nullopt;
        dim = *dynamicSize;
      }
      shape.push_back(dim);
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

/// Tunes `func` on random inputs of `shapes`; on success `compile` holds the
/// winner, which is then cached.
static LogicalResult
tuneAndCache(func::FuncOp func, ArrayRef<std::vector<int64_t>> shapes,
             const tuning::CacheKey &key, ScheduleSetup &setup,
             cg::CompileOptions &compile, const Console &console) {
  const ScheduleOptions &options = setup.options;
  std::string name = func.getSymName().str();
  llvm::raw_ostream &err = *console.err;
  err << "tune: @" << name << " cache miss"
      << (setup.cachePath.empty() ? "" : " in " + setup.cachePath)
      << "; tuning for up to " << budgetText(options) << " s\n";
  tuning::TuneOptions tuneOptions;
  // Random inputs of the tuned shapes and the reference runtime's results on
  // them. The reference evaluates the function after the passes: the
  // candidates differ only in schedule (the passes' rewrites are checked
  // by attn-run --check), and the rewritten form keeps large shapes
  // affordable.
  uint64_t seed = options.tuneSeed.value_or(tuneOptions.seed);
  // Under overcommit, inputs too large for the machine would get the
  // process killed rather than an error (docs/reliability.md).
  if (std::optional<uint64_t> available = availableMemory()) {
    std::string tooLarge = checkMemory(
        estimateRunMemory(func, compile.argNames,
                          options.dynamicSize.value_or(-1), /*kernel=*/true,
                          /*reference=*/true),
        *available, "are available (MemAvailable)");
    if (!tooLarge.empty())
      return func.emitError("tuning @") << name << ": " << tooLarge;
  }
  std::vector<rt::Tensor> inputs;
  for (auto [index, shape] : llvm::enumerate(shapes)) {
    if (failed(makeRandomTensor(shape, seed + index, inputs.emplace_back())))
      return func.emitError("argument #")
             << index << " of @" << name << " is too large to allocate";
  }
  SmallVector<rt::Tensor> reference;
  if (failed(evaluateWithReference(func, inputs, reference)))
    return failure();
  tuneOptions.target = setup.target;
  tuneOptions.budgetSeconds =
      options.tuneBudget.value_or(tuneOptions.budgetSeconds);
  tuneOptions.timedRuns = options.tuneRuns.value_or(tuneOptions.timedRuns);
  tuneOptions.maxCandidates =
      options.tuneCandidates.value_or(tuneOptions.maxCandidates);
  tuneOptions.seed = seed;
  tuneOptions.tolerance = kDefaultCheckTolerance;
  tuneOptions.argNames = compile.argNames;
  tuneOptions.progress = console.err;
  FailureOr<tuning::TuneResult> result =
      tuning::tuneKernel(func, inputs, reference, tuneOptions);
  if (failed(result))
    return failure();
  if (!result->measured) {
    console.warning("tuning @" + name + " measured no candidate within " +
                    budgetText(options) +
                    " s; compiling the default schedule, nothing cached");
    return success();
  }
  compile.schedule = result->best.params;
  compile.autoscheduler = result->best.autoscheduler;
  err << "tune: @" << name << " best " << result->best.describe() << ": "
      << llvm::format("%.4g", result->bestMs) << " ms; default ";
  if (result->defaultMs)
    err << llvm::format("%.4g", *result->defaultMs) << " ms";
  else
    err << "rejected";
  for (const auto &[scheduler, ms] : result->autoschedulerMs) {
    err << ", " << scheduler << " ";
    if (ms)
      err << llvm::format("%.4g", *ms) << " ms";
    else
      err << "rejected";
  }
  err << " (" << result->tried << " candidates)\n";
  if (setup.cachePath.empty())
    return success();
  tuning::CacheEntry entry;
  entry.key = key;
  entry.autoscheduler = result->best.autoscheduler;
  entry.params = result->best.params;
  entry.candidate = result->best.describe();
  entry.timeMs = result->bestMs;
  entry.defaultTimeMs = result->defaultMs;
  entry.candidatesTried = result->tried;
  // Re-read the file: another compile may have added entries meanwhile.
  std::string error;
  std::vector<std::string> ignored;
  FailureOr<tuning::TuningCache> latest =
      tuning::TuningCache::load(setup.cachePath, error, ignored);
  if (succeeded(latest))
    setup.cache = std::move(*latest);
  setup.cache.insert(entry);
  if (failed(setup.cache.save(setup.cachePath, error))) {
    console.warning(error + "; the tuned schedule is used but not cached");
    return success();
  }
  err << "tune: @" << name << " cached in " << setup.cachePath << "\n";
  return success();
}

LogicalResult mlir::attn::api::chooseSchedule(func::FuncOp func,
                                              ScheduleSetup &setup,
                                              cg::CompileOptions &compile,
                                              const Console &console) {
  const ScheduleOptions &options = setup.options;
  compile.autoscheduler = options.autoscheduler;
  if (!options.params.empty()) {
    compile.schedule = setup.handParams;
    return success();
  }
  if (!options.autoscheduler.empty())
    return success();
  std::string name = func.getSymName().str();
  std::optional<std::vector<std::vector<int64_t>>> shapes =
      tuningShapes(func, options.dynamicSize);
  if (!shapes) {
    if (options.tune)
      return func.emitError("--tune needs the sizes @")
             << name << " runs on: its arguments have dynamic dims; give "
             << "--tune-dynamic-size N";
    return success();
  }
  compile.shapeEstimates = *shapes;
  tuning::CacheKey key =
      tuning::makeCacheKey(func, *shapes, setup.resolvedTarget);
  if (const tuning::CacheEntry *hit = setup.cache.lookup(key)) {
    compile.schedule = hit->params;
    compile.autoscheduler = hit->autoscheduler;
    llvm::raw_ostream &err = *console.err;
    err << "tune: @" << name << " cache hit in " << setup.cachePath << ": "
        << hit->candidate << ", " << llvm::format("%.4g", hit->timeMs) << " ms";
    if (hit->defaultTimeMs)
      err << " (default " << llvm::format("%.4g", *hit->defaultTimeMs)
          << " ms)";
    err << (options.tune ? "; not tuning again\n" : "\n");
    return success();
  }
  if (!options.tune)
    return success();
  return tuneAndCache(func, *shapes, key, setup, compile, console);
}

LogicalResult mlir::attn::api::useCachedSchedule(func::FuncOp func,
                                                 StringRef cachePath,
                                                 cg::CompileOptions &compile,
                                                 const Console &console,
                                                 std::string &error) {
  FailureOr<tuning::TuningCache> cache = loadCache(cachePath, console, error);
  if (failed(cache))
    return failure();
  std::optional<cg::TargetInfo> info = cg::describeTarget(compile.target);
  tuning::CacheKey key =
      tuning::makeCacheKey(func, compile.shapeEstimates, info->resolved);
  if (const tuning::CacheEntry *hit = cache->lookup(key)) {
    compile.schedule = hit->params;
    compile.autoscheduler = hit->autoscheduler;
    *console.err << "tune: @" << func.getSymName() << " cache hit in "
                 << cachePath << ": " << hit->candidate << "\n";
  } else {
    *console.err << "tune: @" << func.getSymName() << " cache miss in "
                 << cachePath << "; default schedule\n";
  }
  return success();
}
