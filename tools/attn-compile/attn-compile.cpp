//===- attn-compile.cpp - Compile attention specs to Halide kernels -------===//
//
// Option parsing (see --help) for api/Compile.h's compileSpecFile.
//
//===----------------------------------------------------------------------===//

#include "api/Compile.h"
#include "api/Console.h"
#include "api/SpecLoader.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <optional>

using namespace mlir;
namespace cl = llvm::cl;
namespace api = mlir::attn::api;

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
static cl::opt<bool> remarkSchedule(
    "remark-schedule",
    cl::desc("Print a remark at each attention op: the form of algorithm and "
             "schedule it got (split-KV, key splits, row blocks...) and why"),
    cl::cat(compileCategory));
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
    cl::value_desc("seconds"), cl::cat(compileCategory));
static cl::opt<int> tuneCandidates(
    "tune-candidates",
    cl::desc("Stop after trying this many candidates (default 0: as many "
             "as the budget allows; the first three are the default and "
             "the two autoschedulers of the target class)"),
    cl::value_desc("N"), cl::cat(compileCategory));
static cl::opt<int> tuneRuns(
    "tune-runs",
    cl::desc("Timed runs per candidate, after one checked run; the median "
             "counts (default 7)"),
    cl::value_desc("N"), cl::cat(compileCategory));
static cl::opt<uint64_t>
    tuneSeed("tune-seed",
             cl::desc("Seed of the random search and of the random inputs "
                      "(default 1)"),
             cl::value_desc("N"), cl::cat(compileCategory));
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
    cl::value_desc("N"), cl::cat(compileCategory));
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

static cl::opt<bool> grad(
    "grad",
    cl::desc("Also compile the gradient of each function: @f_grad from "
             "--attn-grad, written as DIR/f_grad.a and DIR/f_grad.h; its "
             "arguments are f's, then one cotangent dO per result of f; its "
             "results are the gradients of f's arguments (docs/training.md)"),
    cl::cat(compileCategory));

static cl::opt<bool> gradSaveStatistics(
    "grad-save-statistics",
    cl::desc("With --grad: --attn-grad=save-statistics=1. f also returns "
             "(after its results) the row log-sum-exp of each softmax "
             "attention whose gradient is attn.attention_grad (and its "
             "unrounded output), the normalized context and key "
             "log-sum-exp of each softmax attn.efficient, the context and "
             "key sums of each "
             "linear attention computed in linear form and the weights of "
             "each double-normalized attention, and f_grad "
             "takes them after the cotangents instead of recomputing them "
             "(docs/training.md)"),
    cl::cat(compileCategory));

static const api::Console console{"attn-compile"};

static int fail(const std::string &error) { return console.fail(error); }

/// The value of `option` if it was given.
template <typename T> static std::optional<T> given(const cl::opt<T> &option) {
  if (!option.getNumOccurrences())
    return std::nullopt;
  return option.getValue();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  api::registerPipelinePasses();
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

  api::CompileSpecOptions options;
  std::string error;
  if (failed(api::parseEmitKinds(emit, options.emit, error)))
    return fail(error);
  if (printThresholds) {
    if (!specFile.empty() || outputDir.getNumOccurrences())
      return fail("--print-thresholds takes no SPEC and no -o");
    FailureOr<std::string> json =
        api::sizeThresholds(target, scheduleParams, error);
    if (failed(json))
      return fail(error);
    llvm::outs() << *json << "\n";
    return 0;
  }
  if (outputDir.empty())
    return fail("no output directory given: -o DIR (see --help)");
  if (runtimeOnly) {
    if (!specFile.empty() || noRuntime || report)
      return fail("--runtime-only takes no SPEC and excludes --no-runtime "
                  "and --report");
    return failed(api::writeRuntime(outputDir, runtimeName, target, error))
               ? fail(error)
               : 0;
  }
  if (specFile.empty())
    return fail("no SPEC given (see --help)");
  if (noDefaultPipeline && !passPipeline.empty())
    return fail("--no-default-pipeline and --pass-pipeline exclude each "
                "other");
  options.outputDir = outputDir;
  options.target = target;
  options.funcNames = funcNames;
  options.passPipeline = passPipeline;
  options.runPipeline = !noDefaultPipeline;
  options.runtimeName = runtimeName;
  options.writeRuntime = !noRuntime;
  options.report = report;
  options.remarkSchedule = remarkSchedule;
  if (gradSaveStatistics && !grad)
    return fail("--grad-save-statistics changes the gradient of --grad; add "
                "--grad");
  options.grad = grad;
  options.gradSaveStatistics = gradSaveStatistics;
  options.ptxas = ptxasOption;
  options.reportGpu = reportArch;
  options.schedule.params = scheduleParams;
  options.schedule.autoscheduler = autoscheduler;
  options.schedule.tune = tune;
  options.schedule.tuneBudget = given(tuneBudget);
  options.schedule.tuneCandidates = given(tuneCandidates);
  options.schedule.tuneRuns = given(tuneRuns);
  options.schedule.tuneSeed = given(tuneSeed);
  options.schedule.cachePath = given(tuningCache);
  options.schedule.noCache = noTuningCache;
  options.schedule.dynamicSize = given(tuneDynamicSize);
  if (failed(api::compileSpecFile(specFile, options, console, error)))
    return fail(error);
  return 0;
}
