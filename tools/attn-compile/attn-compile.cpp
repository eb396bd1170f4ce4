//===- attn-compile.cpp - Compile attention specs to Halide kernels -------===//
//
//   attn-compile SPEC -o DIR [--func F]... [--target T]
//                [--emit stmt,html,assembly,ptx]
//                [--pass-pipeline P | --no-default-pipeline]
//                [--runtime-name attn_runtime] [--no-runtime]
//                [--report [--report-arch sm_XX] [--ptxas PATH]]
//                [--tune [--tune-budget S] [--tune-candidates N]
//                        [--tune-runs N] [--tune-seed N]]
//                [--tuning-cache PATH | --no-tuning-cache]
//                [--tune-dynamic-size N] [--autoscheduler NAME]
//   attn-compile --runtime-only -o DIR [--target T]
//
// Runs the default pass pipeline (attn-default-pipeline), then writes for
// each func.func <name>.a and <name>.h with Halide's AOT convention (one
// halide_buffer_t* per argument in spec order, results last, int error
// code) and, once, the Halide runtime as <runtime-name>.a so several kernels
// link into one app. Errors carry file:line:col; the exit code is non-zero.
// For CUDA targets, --report assembles the PTX of every kernel with the CUDA
// toolkit's ptxas -v and prints its registers, shared memory and spills.
// With --tune, each kernel's schedule is searched (api/Tuner.h) on
// the shapes it is compiled for, unless the tuning cache already holds it;
// the cache is read without --tune too (docs/tuning.md).
//
//===----------------------------------------------------------------------===//

#include "api/KernelCheck.h"
#include "api/ReferenceEvaluator.h"
#include "api/SpecLoader.h"
#include "api/Tuner.h"
#include "api/TuningCache.h"
#include "codegen/Codegen.h"
#include "codegen/ShapeThresholds.h"
#include "dialect/AttnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = ::attn::runtime;
namespace cg = mlir::attn::codegen;

static cl::OptionCategory compileCategory("attn-compile options");

static cl::opt<std::string> specFile(cl::Positional, cl::desc("<spec.mlir>"),
                                     cl::cat(compileCategory));
static cl::opt<std::string> outputDir("o", cl::desc("Output directory"),
                                      cl::value_desc("dir"),
                                      cl::cat(compileCategory));
static cl::list<std::string>
    funcNames("func",
              cl::desc("Compile only this function (repeatable; default: "
                       "every function with a body)"),
              cl::value_desc("name"), cl::cat(compileCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("Halide target string: host (default), x86-64-linux-avx2, "
                    "x86-64-linux-avx512, arm-64-linux, ..."),
           cl::init("host"), cl::cat(compileCategory));
static cl::list<std::string>
    emit("emit",
         cl::desc("Also write <name>.stmt (stmt), <name>.stmt.html (html), "
                  "<name>.s (assembly) and/or, for CUDA targets, <name>.ptx "
                  "(ptx: the device code embedded in the object)"),
         cl::value_desc("stmt,html,assembly,ptx"), cl::CommaSeparated,
         cl::cat(compileCategory));
static cl::opt<std::string>
    passPipeline("pass-pipeline",
                 cl::desc("Run this textual pass pipeline instead of "
                          "attn-default-pipeline (e.g. 'canonicalize,cse')"),
                 cl::value_desc("pipeline"), cl::cat(compileCategory));
static cl::opt<bool>
    noDefaultPipeline("no-default-pipeline",
                      cl::desc("Compile the spec as written, without passes"),
                      cl::cat(compileCategory));
static cl::opt<std::string>
    runtimeName("runtime-name",
                cl::desc("Name of the Halide runtime library written once per "
                         "invocation (<name>.a; default attn_runtime)"),
                cl::init("attn_runtime"), cl::cat(compileCategory));

static cl::opt<bool>
    noRuntime("no-runtime",
              cl::desc("Do not write the runtime (an app links one runtime "
                       "for all its kernels)"),
              cl::cat(compileCategory));
static cl::opt<bool>
    runtimeOnly("runtime-only",
                cl::desc("Write only the runtime <runtime-name>.a; no SPEC"),
                cl::cat(compileCategory));

static cl::opt<bool>
    report("report",
           cl::desc("CUDA targets: assemble the PTX of every kernel with "
                    "ptxas -v and print one line per kernel: registers, "
                    "static shared memory, spill stores and loads"),
           cl::cat(compileCategory));
static cl::opt<std::string>
    reportArch("report-arch",
               cl::desc("GPU ptxas assembles for with --report (default: "
                        "sm_<cuda_capability_XX of --target>, sm_80 if the "
                        "target names none)"),
               cl::value_desc("sm_XX"), cl::cat(compileCategory));
static cl::opt<std::string>
    ptxasOption("ptxas",
                cl::desc("ptxas used by --report (default: $ATTN_PTXAS, "
                         "else /usr/local/cuda/bin/ptxas)"),
                cl::value_desc("path"), cl::cat(compileCategory));

static cl::opt<bool>
    tune("tune",
         cl::desc("Search each kernel's schedule (hand-schedule parameters "
                  "and Halide autoschedulers, every candidate checked against "
                  "the reference runtime, then timed) unless the tuning "
                  "cache holds it; store the winner in the cache"),
         cl::cat(compileCategory));
static cl::opt<double> tuneBudget(
    "tune-budget",
    cl::desc("Seconds the search may take per kernel (default 60); the "
             "reference evaluation and the final compile come on top"),
    cl::value_desc("seconds"), cl::init(60.0), cl::cat(compileCategory));
static cl::opt<int> tuneCandidates(
    "tune-candidates",
    cl::desc("Stop after trying this many candidates (default 0: as many "
             "as the budget allows; the first three are the default and "
             "the two autoschedulers of the target class)"),
    cl::value_desc("N"), cl::init(0), cl::cat(compileCategory));
static cl::opt<int> tuneRuns(
    "tune-runs",
    cl::desc("Timed runs per candidate, after one checked run; the median "
             "counts (default 7)"),
    cl::value_desc("N"), cl::init(7), cl::cat(compileCategory));
static cl::opt<uint64_t>
    tuneSeed("tune-seed",
             cl::desc("Seed of the random search and of the random inputs "
                      "(default 1)"),
             cl::value_desc("N"), cl::init(1), cl::cat(compileCategory));
static cl::opt<std::string> tuningCache(
    "tuning-cache",
    cl::desc("Tuning cache (JSON) read by every compile and written by "
             "--tune (default: $XDG_CACHE_HOME/attn/tuning-cache.json, else "
             "~/.cache/attn/tuning-cache.json)"),
    cl::value_desc("path"), cl::cat(compileCategory));
static cl::opt<bool>
    noTuningCache("no-tuning-cache",
                  cl::desc("Neither read nor write a tuning cache"),
                  cl::cat(compileCategory));
static cl::opt<int64_t> tuneDynamicSize(
    "tune-dynamic-size",
    cl::desc("The size dynamic (?) dims are tuned for and looked up in the "
             "tuning cache with (without it, kernels with dynamic dims use "
             "the default schedules)"),
    cl::value_desc("N"), cl::init(-1), cl::cat(compileCategory));
static cl::list<std::string> scheduleParams(
    "schedule-param",
    cl::desc("Compile with the hand schedules and this knob set, e.g. "
             "attention.queryBlock=64 (repeatable or comma-separated; the "
             "knobs --tune searches, see docs/tuning.md); the tuning cache "
             "is not read"),
    cl::value_desc("group.name=value"), cl::CommaSeparated,
    cl::cat(compileCategory));
static cl::opt<std::string> autoscheduler(
    "autoscheduler",
    cl::desc("Schedule every kernel with this Halide autoscheduler instead "
             "of the hand schedules: Adams2019, Mullapudi2016 (CPU) or "
             "Anderson2021 (GPU); ignores the tuning cache"),
    cl::value_desc("name"), cl::cat(compileCategory));

static cl::opt<bool> printThresholds(
    "print-thresholds",
    cl::desc("Print as JSON every size at which the CPU schedules for "
             "--target (with the --schedule-param knobs) change form, and "
             "exit; takes no SPEC and no -o (test/sweep reads it)"),
    cl::cat(compileCategory));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-compile") << message << "\n";
  return 1;
}

namespace {

/// Register, shared-memory and spill usage of one kernel, from ptxas -v.
struct KernelUsage {
  std::string name;
  unsigned registers = 0, sharedBytes = 0, spillStoreBytes = 0,
           spillLoadBytes = 0;
};

/// What --report needs, resolved before anything is compiled.
struct ReportSetup {
  std::string ptxas;
  std::string gpuName; ///< sm_XX
};

/// The features of a Halide target string ("x86-64-linux-cuda-...",
/// "host-cuda"): every '-'-separated token (arch, bits and os tokens never
/// name a CUDA feature, so they need not be told apart).
bool hasFeature(StringRef targetString, StringRef feature) {
  SmallVector<StringRef> tokens;
  targetString.split(tokens, '-');
  return llvm::is_contained(tokens, feature);
}

/// sm_XX for the target's highest cuda_capability_XX feature, sm_80 if none.
std::string defaultGpuName(StringRef targetString) {
  SmallVector<StringRef> tokens;
  targetString.split(tokens, '-');
  unsigned best = 0;
  for (StringRef token : tokens) {
    unsigned capability;
    if (token.consume_front("cuda_capability_") &&
        !token.getAsInteger(10, capability))
      best = std::max(best, capability);
  }
  return "sm_" + std::to_string(best ? best : 80);
}

FailureOr<ReportSetup> resolveReportSetup() {
  if (!hasFeature(target, "cuda")) {
    fail("--report needs a CUDA target (e.g. "
         "x86-64-linux-cuda-cuda_capability_80), not '" +
         target + "'");
    return failure();
  }
  ReportSetup setup;
  setup.gpuName = reportArch.empty() ? defaultGpuName(target) : reportArch;
  if (!llvm::Regex("^sm_[0-9]+a?$").match(setup.gpuName)) {
    fail("--report-arch " + setup.gpuName +
         ": expected sm_XX (e.g. sm_80, sm_90)");
    return failure();
  }
  std::string requested = ptxasOption;
  if (requested.empty())
    requested = llvm::sys::Process::GetEnv("ATTN_PTXAS")
                    .value_or("/usr/local/cuda/bin/ptxas");
  // A bare name is looked up in PATH; a path is taken as is.
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(requested);
  if (!found || !llvm::sys::fs::can_execute(*found)) {
    fail("--report needs the CUDA toolkit's ptxas, not found at '" + requested +
         "' (set --ptxas PATH or ATTN_PTXAS)");
    return failure();
  }
  setup.ptxas = *found;
  return setup;
}

/// Parses ptxas -v output: a kernel starts at "Compiling entry function
/// 'k'"; its spill line and "Used R registers[, S bytes smem]" follow.
std::vector<KernelUsage> parsePtxasVerbose(StringRef output) {
  llvm::Regex entry("Compiling entry function '([^']+)'");
  llvm::Regex used("Used ([0-9]+) registers");
  llvm::Regex shared("([0-9]+) bytes smem");
  llvm::Regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  std::vector<KernelUsage> kernels;
  SmallVector<StringRef> lines;
  output.split(lines, '\n');
  SmallVector<StringRef, 3> match;
  auto number = [](StringRef text) {
    unsigned value = 0;
    (void)text.getAsInteger(10, value);
    return value;
  };
  for (StringRef line : lines) {
    if (entry.match(line, &match)) {
      kernels.push_back({match[1].str()});
      continue;
    }
    if (kernels.empty())
      continue;
    KernelUsage &kernel = kernels.back();
    if (spills.match(line, &match)) {
      kernel.spillStoreBytes = number(match[1]);
      kernel.spillLoadBytes = number(match[2]);
    }
    if (used.match(line, &match)) {
      kernel.registers = number(match[1]);
      if (shared.match(line, &match))
        kernel.sharedBytes = number(match[1]);
    }
  }
  return kernels;
}

/// Assembles every PTX module of `func`'s object with ptxas -v and prints
/// one report line per kernel.
LogicalResult reportKernels(func::FuncOp func, const ReportSetup &setup) {
  StringRef name = func.getSymName();
  SmallString<256> archive(outputDir);
  llvm::sys::path::append(archive, name + ".a");
  FailureOr<std::vector<std::string>> modules =
      cg::readPtxModules(archive, func.getLoc());
  if (failed(modules))
    return failure();
  for (const std::string &module : *modules) {
    SmallString<128> ptxPath, cubinPath, logPath;
    int ptxFd;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "attn-report", "ptx", ptxFd, ptxPath))
      return func.emitError("cannot create a temporary file: ") << ec.message();
    llvm::FileRemover removePtx(ptxPath);
    {
      llvm::raw_fd_ostream os(ptxFd, /*shouldClose=*/true);
      os << module << "\n";
    }
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "attn-report", "cubin", cubinPath))
      return func.emitError("cannot create a temporary file: ") << ec.message();
    llvm::FileRemover removeCubin(cubinPath);
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("attn-report", "log", logPath))
      return func.emitError("cannot create a temporary file: ") << ec.message();
    llvm::FileRemover removeLog(logPath);

    SmallVector<StringRef> args = {setup.ptxas,   "-v",    "--gpu-name",
                                   setup.gpuName, ptxPath, "-o",
                                   cubinPath};
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                            StringRef(logPath)};
    std::string execError;
    int status = llvm::sys::ExecuteAndWait(setup.ptxas, args, std::nullopt,
                                           redirects, /*SecondsToWait=*/0,
                                           /*MemoryLimit=*/0, &execError);
    auto log = llvm::MemoryBuffer::getFile(logPath);
    StringRef output = log ? (*log)->getBuffer() : StringRef();
    if (status < 0)
      return func.emitError("cannot run ") << setup.ptxas << ": " << execError;
    if (status != 0)
      return func.emitError("ptxas rejected the PTX of @")
             << name << " for " << setup.gpuName << " (exit code " << status
             << "):\n"
             << output.trim();
    std::vector<KernelUsage> kernels = parsePtxasVerbose(output);
    if (kernels.empty())
      return func.emitError("ptxas -v reported no kernel for @") << name;
    for (const KernelUsage &kernel : kernels)
      llvm::outs() << "report: @" << name << " kernel " << kernel.name << ": "
                   << kernel.registers << " registers, " << kernel.sharedBytes
                   << " bytes shared, " << kernel.spillStoreBytes
                   << " bytes spill stores, " << kernel.spillLoadBytes
                   << " bytes spill loads\n";
  }
  return success();
}

/// What the tuning flags resolve to, checked before anything is compiled.
struct TuningSetup {
  std::string cachePath; ///< "" without a cache
  mlir::attn::tuning::TuningCache cache;
  std::string resolvedTarget;
  /// The hand schedules' knobs from --schedule-param, if given.
  mlir::attn::codegen::ScheduleParams handParams;
};

FailureOr<TuningSetup> resolveTuningSetup() {
  TuningSetup setup;
  auto given = [](const cl::Option &option) {
    return option.getNumOccurrences() > 0;
  };
  if (!tune && (given(tuneBudget) || given(tuneRuns) || given(tuneSeed) ||
                given(tuneCandidates))) {
    fail("--tune-budget, --tune-candidates, --tune-runs and --tune-seed "
         "only apply with --tune");
    return failure();
  }
  if (tuneCandidates < 0) {
    fail("--tune-candidates " + llvm::Twine(tuneCandidates.getValue()) +
         ": expected a count (0: no limit)");
    return failure();
  }
  if (!(tuneBudget > 0) || !std::isfinite(tuneBudget)) {
    fail("--tune-budget " + llvm::formatv("{0}", tuneBudget.getValue()).str() +
         ": expected a positive number of seconds");
    return failure();
  }
  if (tuneRuns < 1) {
    fail("--tune-runs " + llvm::Twine(tuneRuns.getValue()) +
         ": expected at least 1 run");
    return failure();
  }
  if (given(tuneDynamicSize) && tuneDynamicSize < 1) {
    fail("--tune-dynamic-size " + llvm::Twine(tuneDynamicSize.getValue()) +
         ": expected a positive size");
    return failure();
  }
  if (noTuningCache && given(tuningCache)) {
    fail("--tuning-cache and --no-tuning-cache exclude each other");
    return failure();
  }
  std::optional<cg::TargetInfo> info = cg::describeTarget(target);
  if (!info) {
    fail(cg::invalidTargetMessage(target));
    return failure();
  }
  setup.resolvedTarget = info->resolved;
  if (!scheduleParams.empty()) {
    if (tune || !autoscheduler.empty()) {
      fail("--schedule-param sets the hand schedules; it excludes --tune "
           "and --autoscheduler");
      return failure();
    }
    for (const std::string &assignment : scheduleParams) {
      std::string error;
      if (failed(mlir::attn::tuning::setScheduleParam(
              assignment, setup.handParams, error))) {
        fail("--schedule-param " + error);
        return failure();
      }
    }
    return setup; // the cache plays no part
  }
  if (!autoscheduler.empty()) {
    if (tune) {
      fail("--autoscheduler and --tune exclude each other (--tune tries the "
           "autoschedulers itself)");
      return failure();
    }
    if (!llvm::is_contained(cg::knownAutoschedulers(), autoscheduler)) {
      fail("--autoscheduler " + autoscheduler + ": expected one of " +
           llvm::join(cg::knownAutoschedulers(), ", "));
      return failure();
    }
    return setup; // the cache plays no part
  }
  if (tune && info->cuda) {
    fail("--tune runs every candidate, and CUDA kernels cannot run on this "
         "machine; tune an OpenCL target (e.g. host-opencl) or compile "
         "without --tune (a cached CUDA entry is still used)");
    return failure();
  }
  if (noTuningCache)
    return setup;
  setup.cachePath = given(tuningCache)
                        ? tuningCache.getValue()
                        : mlir::attn::tuning::defaultCachePath();
  if (setup.cachePath.empty()) {
    if (tune) {
      fail("no tuning cache path: set --tuning-cache PATH (neither "
           "XDG_CACHE_HOME nor HOME is set) or --no-tuning-cache");
      return failure();
    }
    return setup;
  }
  std::string error;
  std::vector<std::string> warnings;
  FailureOr<mlir::attn::tuning::TuningCache> cache =
      mlir::attn::tuning::TuningCache::load(setup.cachePath, error, warnings);
  if (failed(cache)) {
    fail(error);
    return failure();
  }
  for (const std::string &warning : warnings)
    llvm::WithColor::warning(llvm::errs(), "attn-compile") << warning << "\n";
  setup.cache = std::move(*cache);
  return setup;
}

/// The argument shapes `func` is compiled for (dynamic dims take
/// --tune-dynamic-size), or std::nullopt if a dim stays unknown.
std::optional<std::vector<std::vector<int64_t>>>
tuningShapes(func::FuncOp func) {
  std::vector<std::vector<int64_t>> shapes;
  for (Type type : func.getArgumentTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return std::nullopt;
    std::vector<int64_t> shape;
    for (int64_t dim : tensor.getShape()) {
      if (ShapedType::isDynamic(dim)) {
        if (tuneDynamicSize < 1)
          return std::nullopt;
        dim = tuneDynamicSize;
      }
      shape.push_back(dim);
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

/// Sets the schedule of `options` for `func`: from the cache, else (with
/// --tune) by tuning and caching the winner, else the defaults.
LogicalResult chooseSchedule(func::FuncOp func, TuningSetup &setup,
                             cg::CompileOptions &options) {
  namespace tuning = mlir::attn::tuning;
  std::string name = func.getSymName().str();
  std::optional<std::vector<std::vector<int64_t>>> shapes = tuningShapes(func);
  if (!shapes) {
    if (tune)
      return func.emitError("--tune needs the sizes @")
             << name << " runs on: its arguments have dynamic dims; give "
             << "--tune-dynamic-size N";
    return success();
  }
  options.shapeEstimates = *shapes;
  tuning::CacheKey key =
      tuning::makeCacheKey(func, *shapes, setup.resolvedTarget);
  if (const tuning::CacheEntry *hit = setup.cache.lookup(key)) {
    options.schedule = hit->params;
    options.autoscheduler = hit->autoscheduler;
    llvm::errs() << "tune: @" << name << " cache hit in " << setup.cachePath
                 << ": " << hit->candidate << ", "
                 << llvm::format("%.4g", hit->timeMs) << " ms";
    if (hit->defaultTimeMs)
      llvm::errs() << " (default " << llvm::format("%.4g", *hit->defaultTimeMs)
                   << " ms)";
    llvm::errs() << (tune ? "; not tuning again\n" : "\n");
    return success();
  }
  if (!tune)
    return success();
  llvm::errs() << "tune: @" << name << " cache miss"
               << (setup.cachePath.empty() ? "" : " in " + setup.cachePath)
               << "; tuning for up to "
               << llvm::formatv("{0}", tuneBudget.getValue()).str() << " s\n";
  // Random inputs of the tuned shapes and the reference runtime's results on
  // them. The reference evaluates the function after the passes: the
  // candidates differ only in schedule (the passes' rewrites are checked
  // by attn-run --check), and the rewritten form keeps large shapes
  // affordable.
  std::vector<rt::Tensor> inputs;
  for (auto [index, shape] : llvm::enumerate(*shapes)) {
    rt::Tensor input(shape);
    if (input.numElements() != rt::checkedNumElements(input.shape))
      return func.emitError("argument #")
             << index << " of @" << name << " is too large to allocate";
    rt::fillUniform(input, tuneSeed + index);
    for (double &value : input.data)
      value = static_cast<float>(value);
    inputs.push_back(std::move(input));
  }
  SmallVector<rt::Tensor> reference;
  if (failed(mlir::attn::api::evaluateWithReference(func, inputs, reference)))
    return failure();
  tuning::TuneOptions tuneOptions;
  tuneOptions.target = target;
  tuneOptions.budgetSeconds = tuneBudget;
  tuneOptions.timedRuns = tuneRuns;
  tuneOptions.maxCandidates = tuneCandidates;
  tuneOptions.seed = tuneSeed;
  tuneOptions.tolerance = mlir::attn::api::kDefaultCheckTolerance;
  tuneOptions.argNames = options.argNames;
  FailureOr<tuning::TuneResult> result =
      tuning::tuneKernel(func, inputs, reference, tuneOptions);
  if (failed(result))
    return failure();
  if (!result->measured) {
    llvm::WithColor::warning(llvm::errs(), "attn-compile")
        << "tuning @" << name << " measured no candidate within "
        << llvm::formatv("{0}", tuneBudget.getValue()).str()
        << " s; compiling the default schedule, nothing cached\n";
    return success();
  }
  options.schedule = result->best.params;
  options.autoscheduler = result->best.autoscheduler;
  llvm::errs() << "tune: @" << name << " best " << result->best.describe()
               << ": " << llvm::format("%.4g", result->bestMs)
               << " ms; default ";
  if (result->defaultMs)
    llvm::errs() << llvm::format("%.4g", *result->defaultMs) << " ms";
  else
    llvm::errs() << "rejected";
  for (const auto &[scheduler, ms] : result->autoschedulerMs) {
    llvm::errs() << ", " << scheduler << " ";
    if (ms)
      llvm::errs() << llvm::format("%.4g", *ms) << " ms";
    else
      llvm::errs() << "rejected";
  }
  llvm::errs() << " (" << result->tried << " candidates)\n";
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
    llvm::WithColor::warning(llvm::errs(), "attn-compile")
        << error << "; the tuned schedule is used but not cached\n";
    return success();
  }
  llvm::errs() << "tune: @" << name << " cached in " << setup.cachePath
               << "\n";
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerCanonicalizerPass();
  registerCSEPass();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnPipelines();
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile attention specs into Halide kernels\n\n"
      "For each func.func @f of SPEC, writes DIR/f.a and DIR/f.h:\n"
      "  int f(halide_buffer_t *arg0, ..., halide_buffer_t *result0, ...);\n"
      "one buffer per argument in spec order, then one per result; 0 on\n"
      "success, a Halide error code otherwise (e.g. wrong buffer sizes).\n"
      "Buffer dim 0 is the tensor's last (contiguous) dim. Also writes the\n"
      "Halide runtime once, DIR/attn_runtime.a: link it with the kernels.\n\n"
      "For CUDA targets, --report assembles each kernel's PTX with ptxas -v\n"
      "and prints one line per GPU kernel:\n"
      "  report: @f kernel K: R registers, S bytes shared, N bytes spill "
      "stores, M bytes spill loads\n"
      "(Halide sizes shared memory at launch, so S counts only static "
      "shared memory.)\n\n"
      "  attn-compile spec.mlir -o out/ --target x86-64-linux-avx2 "
      "--emit stmt\n"
      "  attn-compile spec.mlir -o out/ --target "
      "x86-64-linux-cuda-cuda_capability_80 --report\n\n"
      "Tuning (docs/tuning.md): --tune searches each kernel's schedule on\n"
      "the shapes of its arguments within --tune-budget seconds, printing\n"
      "  tune: @f [elapsed/budget s] tried T, rejected R, best X ms (cand)\n"
      "and stores the winner in the tuning cache, which every compile reads\n"
      "(so a second --tune reuses it: `tune: @f cache hit ...`).\n"
      "  attn-compile spec.mlir -o out/ --tune --tune-budget 60\n");

  bool emitStmt = false, emitHtml = false, emitAssembly = false,
       emitPtx = false;
  for (const std::string &kind : emit) {
    if (kind == "stmt")
      emitStmt = true;
    else if (kind == "html")
      emitHtml = true;
    else if (kind == "assembly")
      emitAssembly = true;
    else if (kind == "ptx")
      emitPtx = true;
    else
      return fail("--emit " + kind +
                  ": expected stmt, html, assembly or ptx (comma-separated)");
  }
  if (printThresholds) {
    if (!specFile.empty() || outputDir.getNumOccurrences())
      return fail("--print-thresholds takes no SPEC and no -o");
    std::optional<cg::TargetInfo> info = cg::describeTarget(target);
    if (!info)
      return fail(cg::invalidTargetMessage(target));
    cg::ScheduleParams params;
    for (const std::string &assignment : scheduleParams) {
      std::string error;
      if (failed(mlir::attn::tuning::setScheduleParam(assignment, params,
                                                      error)))
        return fail("--schedule-param " + error);
    }
    llvm::outs() << cg::sizeThresholdsJson(params, info->floatVectorWidth)
                 << "\n";
    return 0;
  }
  if (outputDir.empty())
    return fail("no output directory given: -o DIR (see --help)");
  if (runtimeOnly) {
    if (!specFile.empty() || noRuntime || report)
      return fail("--runtime-only takes no SPEC and excludes --no-runtime "
                  "and --report");
    if (!cg::isValidTarget(target))
      return fail(cg::invalidTargetMessage(target));
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create " + outputDir + ": " + ec.message());
    MLIRContext context;
    SmallString<256> runtimePath(outputDir);
    llvm::sys::path::append(runtimePath, runtimeName + ".a");
    llvm::SourceMgr noSources;
    SourceMgrDiagnosticHandler diagnostics(noSources, &context);
    return failed(
        cg::compileRuntime(runtimePath, target, UnknownLoc::get(&context)));
  }
  if (specFile.empty())
    return fail("no SPEC given (see --help)");
  if (noDefaultPipeline && !passPipeline.empty())
    return fail("--no-default-pipeline and --pass-pipeline exclude each "
                "other");

  DialectRegistry registry;
  mlir::attn::api::insertSpecDialects(registry);
  MLIRContext context(registry);
  // The tuner forks a child per candidate: no idle pass-manager threads.
  if (tune)
    context.disableMultithreading();

  mlir::attn::api::SpecFile file;
  std::string error;
  if (failed(mlir::attn::api::openSpecFile(context, specFile, file, error)))
    return error.empty() ? 1 : fail(error);
  mlir::attn::api::LoadedSpec &spec = file.spec;
  if (!cg::isValidTarget(target))
    return fail(cg::invalidTargetMessage(target));
  if ((!reportArch.empty() || !ptxasOption.empty()) && !report)
    return fail("--report-arch and --ptxas only apply with --report");
  FailureOr<TuningSetup> tuning = resolveTuningSetup();
  if (failed(tuning))
    return 1;
  std::optional<ReportSetup> reportSetup;
  if (report) {
    FailureOr<ReportSetup> setup = resolveReportSetup();
    if (failed(setup))
      return 1;
    reportSetup = *setup;
  }

  // Source names of the arguments, before passes rewrite the functions.
  std::map<std::string, std::vector<std::string>> argNames;
  for (auto func : spec.module->getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      argNames[func.getSymName().str()].push_back(
          mlir::attn::api::argumentName(spec.parserState, func, i));

  if (!noDefaultPipeline) {
    std::string message;
    if (failed(mlir::attn::api::runKernelPipeline(*spec.module, passPipeline,
                                                  message)))
      return message.empty() ? 1 : fail("--pass-pipeline: " + message);
  }

  SmallVector<func::FuncOp> funcs;
  if (funcNames.empty()) {
    for (auto func : spec.module->getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    if (funcs.empty())
      return fail(specFile + " defines no function with a body");
  } else {
    llvm::StringSet<> seen;
    for (const std::string &name : funcNames) {
      auto func = spec.module->lookupSymbol<func::FuncOp>(name);
      if (!func || func.isExternal())
        return fail(specFile + " has no function @" + name);
      if (seen.insert(name).second)
        funcs.push_back(func);
    }
  }

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return fail("cannot create " + outputDir + ": " + ec.message());

  cg::EmitOptions emitOptions{emitStmt, emitHtml, emitAssembly, emitPtx};
  for (func::FuncOp func : funcs) {
    cg::CompileOptions options;
    options.target = target;
    options.argNames = argNames[func.getSymName().str()];
    options.autoscheduler = autoscheduler;
    if (!scheduleParams.empty())
      options.schedule = tuning->handParams;
    else if (autoscheduler.empty() &&
             failed(chooseSchedule(func, *tuning, options)))
      return 1;
    if (failed(cg::compileToFiles(func, outputDir, options, emitOptions)))
      return 1;
    if (reportSetup && failed(reportKernels(func, *reportSetup)))
      return 1;
  }
  if (noRuntime)
    return 0;
  SmallString<256> runtimePath(outputDir);
  llvm::sys::path::append(runtimePath, runtimeName + ".a");
  if (failed(cg::compileRuntime(runtimePath, target, spec.module->getLoc())))
    return 1;
  return 0;
}
