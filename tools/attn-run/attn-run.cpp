//===- attn-run.cpp - Evaluate attention specs on .npy inputs -------------===//
//
// Option parsing (see --help) for api/Run.h and api/Compile.h.
//
//===----------------------------------------------------------------------===//

#include "api/Compile.h"
#include "api/Console.h"
#include "api/Gradient.h"
#include "api/KernelCheck.h"
#include "api/MemoryGuard.h"
#include "api/ReferenceEvaluator.h"
#include "api/Run.h"
#include "api/SpecLoader.h"
#include "runtime/Tensor.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <cmath>
#include <new>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;
namespace api = mlir::attn::api;
namespace rt = ::attn::runtime;

static cl::OptionCategory runCategory("attn-run options");

static cl::opt<std::string> specFile(cl::Positional, cl::Required,
                                     cl::desc("<spec.mlir>"),
                                     cl::cat(runCategory));
static cl::opt<std::string>
    funcName("func", cl::desc("Function to evaluate (default: the only one)"),
             cl::value_desc("name"), cl::cat(runCategory));
static cl::list<std::string> inputFiles(
    "input",
    cl::desc("An input as name=file.npy (argument name as written in the "
             "spec, without %) or file.npy (next argument in order)"),
    cl::value_desc("[name=]file.npy"), cl::cat(runCategory));
static cl::opt<uint64_t> randomSeed(
    "random",
    cl::desc("Fill every input not given with uniform values in [0, 1) "
             "generated from this seed (argument i uses seed + i)"),
    cl::value_desc("seed"), cl::cat(runCategory));

static cl::opt<std::string> randomRange(
    "random-range",
    cl::desc("With --random: draw the values from [LOW, HIGH) instead of "
             "[0, 1) (inputs and cotangents), e.g. --random-range=-1,1 for "
             "zero-mean values"),
    cl::value_desc("LOW,HIGH"), cl::cat(runCategory));
static cl::opt<std::string>
    saveInputsDir("save-inputs",
                  cl::desc("Write every input to DIR/<name>.npy (useful "
                           "with --random); with --grad also each "
                           "cotangent, as DIR/dresult<i>.npy"),
                  cl::value_desc("dir"), cl::cat(runCategory));
static cl::list<std::string>
    outputFiles("output",
                cl::desc("Write result i to the i-th --output file (.npy, "
                         "element type of the result)"),
                cl::value_desc("file.npy"), cl::cat(runCategory));
static cl::opt<bool> quiet("quiet", cl::desc("Do not print the result summary"),
                           cl::cat(runCategory));
static cl::opt<std::string> verifyRewrites(
    "verify-rewrites",
    cl::desc("Run this pass pipeline (e.g. \"attn-reassociate\") on a copy "
             "of the spec; evaluate every function before and after on the "
             "same random inputs and report the largest difference; fail if "
             "an exact rewrite differs by more than 1e-5 relative"),
    cl::value_desc("pipeline"), cl::cat(runCategory));
static cl::opt<int64_t> dynamicSize(
    "dynamic-size",
    cl::desc("With random inputs, give every dynamic (?) argument dim this "
             "size"),
    cl::value_desc("N"), cl::init(-1), cl::cat(runCategory));
static cl::opt<std::string> maxMemory(
    "max-memory",
    cl::desc("Refuse a run that needs more than this much memory (bytes, or "
             "with a K, M, G or T suffix); default: the memory available "
             "(MemAvailable of /proc/meminfo). The estimate counts inputs, "
             "results, kernel buffers and the reference's values, before "
             "anything is allocated"),
    cl::value_desc("size"), cl::cat(runCategory));
static cl::opt<bool>
    useReference("reference",
                 cl::desc("Evaluate with the reference runtime instead of a "
                          "Halide JIT kernel"),
                 cl::cat(runCategory));
static cl::opt<bool> check(
    "check",
    cl::desc("Run the kernel and the reference runtime and print "
             "`check: @f max abs err = X, max rel err = Y`, where rel err = "
             "max|kernel - reference| / max|reference| over all results; "
             "exit 1 when rel err > --tolerance"),
    cl::cat(runCategory));
static cl::opt<bool> checkNonFinite(
    "check-non-finite",
    cl::desc("After --check (implied), repeat the check with one entry of "
             "each input set to NaN, +inf and -inf in turn (the entry at 2/3 "
             "of every dim) and print `check-non-finite: @f <input>[<index>] "
             "= <value>: max rel err = X` per case: the kernel must give "
             "NaN and infinities where the reference does "
             "(docs/reliability.md); exit 1 when a case disagrees"),
    cl::cat(runCategory));
static cl::opt<double>
    tolerance("tolerance",
              cl::desc("Largest max rel err --check accepts (default 1e-4; "
                       "for a function with bf16 or f16 values, the bound "
                       "of docs/precision.md: 1.61e-2 bf16, 2.44e-3 f16, "
                       "2.39e-2 with attn.allow_bf16_products)"),
              cl::init(api::kDefaultCheckTolerance), cl::cat(runCategory));
static cl::opt<unsigned> benchRuns(
    "bench",
    cl::desc("Time N runs of the kernel (after one warm-up run) and print "
             "`bench: @f median <ms> ms over N runs (min <ms> ms)`"),
    cl::value_desc("N"), cl::init(0), cl::cat(runCategory));
static cl::opt<bool> remarkSchedule(
    "remark-schedule",
    cl::desc("Print a remark at each attention op: the form of algorithm and "
             "schedule it got (split-KV, key splits, row blocks...) and why"),
    cl::cat(runCategory));
static cl::opt<bool> aot(
    "aot",
    cl::desc("Compile the kernel ahead of time as attn-compile does (static "
             "library + runtime, linked into a temporary shared object with "
             "`c++`) instead of JIT-compiling it"),
    cl::cat(runCategory));
static cl::opt<std::string>
    aotDir("aot-dir",
           cl::desc("With --aot: write the static library, its header and the "
                    "shared object that runs into this directory (created if "
                    "needed) and keep them, instead of a temporary directory"),
           cl::value_desc("dir"), cl::cat(runCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("Halide target of the JIT kernel (default: host)"),
           cl::init("host"), cl::cat(runCategory));
static cl::opt<std::string> passPipeline(
    "pass-pipeline",
    cl::desc("Before compiling the kernel, run this textual pass pipeline "
             "instead of attn-default-pipeline (the reference always "
             "evaluates the spec as written)"),
    cl::value_desc("pipeline"), cl::cat(runCategory));
static cl::opt<std::string> autoschedulerName(
    "autoscheduler",
    cl::desc("Schedule the kernel with this Halide autoscheduler instead of "
             "the hand schedules: Adams2019, Mullapudi2016 (CPU) or "
             "Anderson2021 (GPU)"),
    cl::value_desc("name"), cl::cat(runCategory));
static cl::opt<std::string> tuningCachePath(
    "tuning-cache",
    cl::desc("Use the schedule this tuning cache (written by attn-compile "
             "--tune) holds for the kernel on these input shapes, as "
             "attn-compile would; prints whether it hit"),
    cl::value_desc("path"), cl::cat(runCategory));
static cl::list<std::string> scheduleParams(
    "schedule-param",
    cl::desc("Set a knob of the hand schedules, e.g. "
             "attention.queryBlock=64 (repeatable or comma-separated; the "
             "knobs are those attn-compile --tune searches, see "
             "docs/tuning.md)"),
    cl::value_desc("group.name=value"), cl::CommaSeparated,
    cl::cat(runCategory));
static cl::opt<bool> noDefaultPipeline(
    "no-default-pipeline",
    cl::desc("Compile the kernel from the spec as written, without passes"),
    cl::cat(runCategory));

static cl::opt<bool> grad(
    "grad",
    cl::desc("Evaluate the gradient @f_grad that --attn-grad derives from @f "
             "instead of @f: its inputs are f's inputs and one cotangent dO "
             "per result of f (--cotangent, or random with --random); its "
             "results, written by --output, are the gradients of f's "
             "arguments in order (none for an argument marked "
             "{attn.no_grad}). Combines with --reference, --check, --aot and "
             "--bench as for the forward"),
    cl::cat(runCategory));
static cl::opt<bool> gradSaveStatistics(
    "grad-save-statistics",
    cl::desc("With --grad: differentiate with --attn-grad=save-statistics=1, "
             "so @f also returns the row log-sum-exp of its softmax "
             "attention (and its unrounded output), the "
             "normalized context and key log-sum-exp of its softmax "
             "attn.efficient, the "
             "context and key sums of its linear attention in linear form "
             "and the weights of its double-normalized attention (EANet's "
             "softmax over positions), and @f_grad "
             "takes them after the cotangents instead of recomputing them. "
             "attn-run runs @f first for them: the kernel of @f for the "
             "gradient kernel, the reference @f for the reference gradient "
             "(--reference, --check, --check-grad); --save-inputs writes "
             "them as "
             "DIR/lse<i>.npy, DIR/output<i>.npy, DIR/context<i>.npy, "
             "DIR/key_lse<i>.npy, DIR/key_sums<i>.npy and DIR/weights<i>.npy"),
    cl::cat(runCategory));
static cl::list<std::string> cotangentFiles(
    "cotangent",
    cl::desc("With --grad: the cotangent dO of result i of @f is the i-th "
             "--cotangent file (.npy, the result's shape)"),
    cl::value_desc("dO.npy"), cl::cat(runCategory));
static cl::opt<bool> checkGrad(
    "check-grad",
    cl::desc("Compare the reference gradient of @f with central finite "
             "differences of the reference forward in f64 and print "
             "`check-grad: @f d<arg> max rel err = X` per argument; exit 1 "
             "when an error exceeds --tolerance (default here 1e-6). Implies "
             "--grad; with --grad-save-statistics, the saving gradient takes "
             "the statistics the reference @f saves"),
    cl::cat(runCategory));

static const api::Console console{"attn-run"};

static int fail(const std::string &error) { return console.fail(error); }

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // InitLLVM makes a failed `new` abort with "LLVM ERROR: out of memory". The
  // reference runtime instead catches std::bad_alloc and reports a Status, so
  // an input too large for this machine is an error, not a crash.
  std::set_new_handler(nullptr);
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: evaluate an attention spec on .npy inputs with a Halide JIT "
      "kernel (default) or the reference runtime (--reference)\n\n"
      "  attn-run spec.mlir --func f --input q=q.npy --input k=k.npy "
      "--input v=v.npy --output o.npy\n"
      "  attn-run spec.mlir --random 7 --save-inputs inputs/ --output o.npy\n"
      "  attn-run spec.mlir --random 7 --check      # JIT vs reference\n"
      "  attn-run spec.mlir --random 7 --check-non-finite   # NaN and inf "
      "inputs\n"
      "  attn-run spec.mlir --random 7 --bench 20   # median JIT time\n"
      "  attn-run spec.mlir --verify-rewrites attn-reassociate --random 7\n"
      "  attn-run spec.mlir --grad --input q.npy --input k.npy --input v.npy "
      "--cotangent dO.npy --output dq.npy --output dk.npy --output dv.npy\n"
      "  attn-run spec.mlir --grad --random 7 --check   # gradient kernel vs "
      "reference\n"
      "  attn-run spec.mlir --check-grad --random 7     # reference vs "
      "finite differences\n");
  api::registerPipelinePasses(); // passes --verify-rewrites can name
  api::SpecFile file;
  std::string error;
  if (failed(api::openSpecFile(specFile, file, error)))
    return fail(error);
  api::LoadedSpec &spec = file.spec;
  std::optional<uint64_t> seed;
  if (randomSeed.getNumOccurrences())
    seed = randomSeed;
  std::optional<api::RandomValues> random;
  if (seed)
    random = api::RandomValues{*seed, 0.0, 1.0};
  if (randomRange.getNumOccurrences()) {
    if (!seed)
      return fail("--random-range needs --random SEED");
    auto [lowText, highText] = StringRef(randomRange).split(',');
    double low, high;
    if (lowText.trim().getAsDouble(low) || highText.trim().getAsDouble(high) ||
        !std::isfinite(low) || !std::isfinite(high) || !(low < high))
      return fail("--random-range " + randomRange +
                  ": expected LOW,HIGH with finite LOW < HIGH");
    random->low = low;
    random->high = high;
  }

  bool gradient = grad || checkGrad;
  if (checkNonFinite)
    check = true;
  if (!cotangentFiles.empty() && !gradient)
    return fail("--cotangent gives a cotangent of --grad; add --grad");
  if (gradSaveStatistics && !gradient)
    return fail("--grad-save-statistics changes the gradient of --grad or "
                "--check-grad; add one of them");
  if (checkGrad && (useReference || check || benchRuns > 0 || aot))
    return fail("--check-grad compares the reference gradient with finite "
                "differences; it takes no --reference, --check, --bench or "
                "--aot");

  if (verifyRewrites.getNumOccurrences()) {
    if (gradient)
      return fail("--verify-rewrites takes no --grad or --check-grad");
    if (!inputFiles.empty() || !outputFiles.empty() || !funcName.empty())
      return fail("--verify-rewrites evaluates every function on random "
                  "inputs; it takes no --input, --output or --func");
    if (useReference || check || benchRuns > 0 || aot ||
        target.getNumOccurrences())
      return fail("--verify-rewrites compares the reference runtime before "
                  "and after the pipeline; it takes no --reference, --check, "
                  "--bench, --aot or --target");
    return failed(api::verifyRewrites(spec, verifyRewrites, seed.value_or(1),
                                      dynamicSize, console, error))
               ? fail(error)
               : 0;
  }

  FailureOr<func::FuncOp> func =
      api::selectFunction(*spec.module, funcName, specFile, error);
  if (failed(func))
    return fail(error);
  std::vector<std::string> names = api::argumentNames(spec.parserState, *func);
  // Under overcommit a run too large for the machine is killed, not refused:
  // check what it needs before allocating anything.
  {
    std::optional<uint64_t> limit = api::availableMemory();
    std::string limitSource = "are available (MemAvailable)";
    if (maxMemory.getNumOccurrences()) {
      limit = api::parseByteSize(maxMemory);
      if (!limit)
        return fail("--max-memory " + maxMemory +
                    ": expected a byte count, or one with a K, M, G or T "
                    "suffix");
      limitSource = "is the limit (--max-memory)";
    }
    bool reference = useReference || check || checkGrad;
    if (limit) {
      std::string tooLarge = api::checkMemory(
          api::estimateRunMemory(*func, names, dynamicSize,
                                 /*kernel=*/!useReference && !checkGrad,
                                 reference),
          *limit, limitSource);
      if (!tooLarge.empty())
        return fail("@" + func->getSymName().str() + ": " + tooLarge);
    }
  }
  std::vector<rt::Tensor> inputs;
  if (failed(api::bindInputs(*func, names, inputFiles, random, dynamicSize,
                             inputs, error)) ||
      (!saveInputsDir.empty() &&
       failed(api::saveInputs(saveInputsDir, names, inputs, error))))
    return fail(error);
  // With --grad-save-statistics: @f (returning the saved statistics after
  // its results), its inputs and argument names.
  std::optional<func::FuncOp> forwardFunc;
  std::vector<rt::Tensor> forwardInputs;
  std::vector<std::string> forwardNames;
  if (gradient) {
    // From here on the function is @f_grad, its inputs f's and the dO.
    if (failed(api::checkInputShapes(*func, inputs)) ||
        failed(api::addGradients(spec, {func->getSymName().str()},
                                 gradSaveStatistics)))
      return 1;
    FailureOr<func::FuncOp> gradFunc = api::gradientOf(*func, error);
    if (failed(gradFunc))
      return fail(error);
    std::vector<rt::Tensor> cotangents;
    if (failed(api::bindCotangents(*func, inputs, cotangentFiles, random,
                                   cotangents, error)))
      return error.empty() ? 1 : fail(error);
    std::vector<std::string> gradNames =
        api::gradientArgumentNames(*func, names);
    if (!saveInputsDir.empty() &&
        failed(api::saveInputs(saveInputsDir,
                               ArrayRef<std::string>(gradNames)
                                   .drop_front(names.size())
                                   .take_front(cotangents.size()),
                               cotangents, error)))
      return fail(error);
    if (checkGrad) {
      double limit = tolerance.getNumOccurrences()
                         ? double(tolerance)
                         : api::kGradientCheckTolerance;
      SmallVector<rt::Tensor> gradients;
      if (failed(api::checkGradient(*func, *gradFunc, inputs, cotangents,
                                    names, limit, console, gradients, error)))
        return error.empty() ? 1 : fail(error);
      return failed(api::writeResults(*gradFunc, gradients, outputFiles,
                                      quiet, console, error))
                 ? fail(error)
                 : 0;
    }
    if (api::primalResultCount(*func) < func->getNumResults()) {
      forwardFunc = *func;
      forwardInputs = inputs;
      forwardNames = names;
    }
    names = std::move(gradNames);
    inputs.insert(inputs.end(), cotangents.begin(), cotangents.end());
    func = gradFunc;
  }

  api::KernelOptions kernelOptions;
  kernelOptions.compile.target = target;
  kernelOptions.compile.argNames = names;
  kernelOptions.compile.autoscheduler = autoschedulerName;
  for (const rt::Tensor &input : inputs)
    kernelOptions.compile.shapeEstimates.push_back(input.shape);
  kernelOptions.passPipeline = passPipeline;
  kernelOptions.runPipeline = !noDefaultPipeline;
  kernelOptions.tuningCache = tuningCachePath;
  kernelOptions.aot = aot;
  kernelOptions.aotDir = aotDir;
  if (!aotDir.empty() && !aot)
    return fail("--aot-dir takes --aot");
  kernelOptions.compile.remarkSchedule = remarkSchedule;
  if (useReference) {
    if (check || benchRuns > 0 || aot)
      return fail("--reference cannot be combined with --check, --bench or "
                  "--aot");
    if (noDefaultPipeline || !passPipeline.empty())
      return fail("--reference evaluates the spec as written; it takes no "
                  "--pass-pipeline or --no-default-pipeline");
    if (!autoschedulerName.empty() || !tuningCachePath.empty())
      return fail("--reference runs no kernel; it takes no --autoscheduler "
                  "or --tuning-cache");
    if (!scheduleParams.empty())
      return fail("--schedule-param sets the hand schedules; it excludes "
                  "--reference, --autoscheduler and --tuning-cache");
  } else if (failed(api::checkKernelOptions(kernelOptions, scheduleParams,
                                            error))) {
    return fail(error);
  }
  // The saved statistics @f_grad takes: the reference @f's for the
  // reference gradient, the kernel @f's for the gradient kernel.
  std::vector<rt::Tensor> referenceInputs = inputs;
  if (forwardFunc) {
    unsigned primal = api::primalResultCount(*forwardFunc);
    auto appendSaved = [&](std::vector<rt::Tensor> &to,
                           ArrayRef<rt::Tensor> results) {
      to.insert(to.end(), results.begin() + primal, results.end());
    };
    if (useReference || check) {
      SmallVector<rt::Tensor> forward;
      if (failed(
              api::evaluateWithReference(*forwardFunc, forwardInputs, forward)))
        return 1;
      appendSaved(referenceInputs, forward);
    }
    if (!useReference) {
      api::KernelOptions forwardOptions = kernelOptions;
      forwardOptions.compile.argNames = forwardNames;
      forwardOptions.compile.shapeEstimates.clear();
      for (const rt::Tensor &input : forwardInputs)
        forwardOptions.compile.shapeEstimates.push_back(input.shape);
      forwardOptions.tuningCache.clear();
      FailureOr<std::unique_ptr<api::LoadedKernel>> forward =
          api::compileKernel(*spec.module, forwardFunc->getSymName(),
                             forwardOptions, console, error);
      if (failed(forward))
        return fail(error);
      if (failed((*forward)->run(forwardInputs)))
        return 1;
      appendSaved(inputs, (*forward)->results());
      for (size_t i = referenceInputs.size(); i < inputs.size(); ++i)
        kernelOptions.compile.shapeEstimates.push_back(inputs[i].shape);
    } else {
      inputs = referenceInputs;
    }
    // The statistics follow f's inputs and the cotangents (lse0, output0,
    // ...).
    size_t firstSaved = forwardInputs.size() + primal;
    if (!saveInputsDir.empty() &&
        failed(api::saveInputs(
            saveInputsDir, ArrayRef<std::string>(names).drop_front(firstSaved),
            ArrayRef<rt::Tensor>(inputs).drop_front(firstSaved), error)))
      return fail(error);
  }
  // Inputs must fit the argument types whichever way the function runs.
  if (failed(api::checkInputShapes(*func, inputs)) ||
      ((useReference || check) &&
       failed(api::checkInputShapes(*func, referenceInputs))))
    return 1;
  // The reference runtime: with --reference, and as the oracle of --check.
  SmallVector<rt::Tensor> reference, results;
  if ((useReference || check) &&
      failed(api::evaluateWithReference(*func, referenceInputs, reference)))
    return 1;
  std::unique_ptr<api::LoadedKernel> kernel;
  if (useReference) {
    results = std::move(reference);
  } else {
    FailureOr<std::unique_ptr<api::LoadedKernel>> compiled = api::compileKernel(
        *spec.module, func->getSymName(), kernelOptions, console, error);
    if (failed(compiled))
      return fail(error);
    kernel = std::move(*compiled);
    if (failed(kernel->run(inputs)) ||
        (benchRuns > 0 &&
         failed(api::benchKernel(*kernel, benchRuns, console))))
      return 1;
    results = kernel->results();
  }
  double limit = tolerance.getNumOccurrences()
                     ? double(tolerance)
                     : api::defaultCheckTolerance(*func);
  if (check &&
      failed(api::checkAgainstReference(func->getSymName(), results, reference,
                                        limit, console, error)))
    return fail(error);
  if (checkNonFinite &&
      failed(api::checkNonFinite(*func, names, inputs, *kernel, limit, console,
                                 error)))
    return error.empty() ? 1 : fail(error);
  return failed(api::writeResults(*func, results, outputFiles, quiet, console,
                                  error))
             ? fail(error)
             : 0;
}
