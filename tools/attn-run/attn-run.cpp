//===- attn-run.cpp - Evaluate attention specs on .npy inputs -------------===//
//
//   attn-run SPEC [--func NAME] --input q=q.npy --input k.npy ... \
//            [--random SEED [--dynamic-size N]] [--save-inputs DIR]
//            [--output out.npy] [--reference | --check [--tolerance T]]
//            [--bench N] [--aot] [--target T]
//            [--autoscheduler NAME | --tuning-cache PATH]
//            [--pass-pipeline P | --no-default-pipeline]
//   attn-run SPEC --verify-rewrites PIPELINE [--random SEED]
//            [--dynamic-size N]
//
// Evaluates one func.func of a spec: by default with a Halide JIT kernel
// (codegen/), with --reference on the reference runtime, with --check on
// both, comparing them. The kernel is compiled as attn-compile does: after
// attn-default-pipeline (or --pass-pipeline), so --check compares the
// rewritten, compiled function with the spec as written. Inputs are
// matched to arguments by name (`q=file.npy`, the SSA name written in the
// spec) or by position (bare `file.npy`, in argument order). Errors about
// the spec carry file:line:col; errors about files name the file.
//
// --verify-rewrites runs PIPELINE (e.g. "attn-reassociate") on a copy of the
// spec and evaluates every function before and after on the same random
// inputs, printing the largest absolute and relative difference. It fails
// when a rewrite that claims to be exact (no op carries attn.approximation)
// differs by more than 1e-5 relative.
//
//===----------------------------------------------------------------------===//

#include "api/KernelCheck.h"
#include "api/ReferenceEvaluator.h"
#include "api/SpecLoader.h"
#include "api/Tuner.h"
#include "api/TuningCache.h"
#include "codegen/Codegen.h"
#include "dialect/AttnDialect.h"
#include "passes/Passes.h"
#include "runtime/Npy.h"
#include "runtime/Tensor.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>

using namespace mlir;
namespace cl = llvm::cl;
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
static cl::opt<std::string>
    saveInputsDir("save-inputs",
                  cl::desc("Write every input to DIR/<name>.npy (useful "
                           "with --random)"),
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
static cl::opt<double> tolerance(
    "tolerance", cl::desc("Largest max rel err --check accepts (default 1e-4)"),
    cl::init(mlir::attn::api::kDefaultCheckTolerance), cl::cat(runCategory));
static cl::opt<unsigned> benchRuns(
    "bench",
    cl::desc("Time N runs of the kernel (after one warm-up run) and print "
             "`bench: @f median <ms> ms over N runs (min <ms> ms)`"),
    cl::value_desc("N"), cl::init(0), cl::cat(runCategory));
static cl::opt<bool> aot(
    "aot",
    cl::desc("Compile the kernel ahead of time as attn-compile does (static "
             "library + runtime, linked into a temporary shared object with "
             "`c++`) instead of JIT-compiling it"),
    cl::cat(runCategory));
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

/// An exact rewrite may differ from the original by float reassociation only.
constexpr double kExactRelativeTolerance = 1e-5;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-run") << message << "\n";
  return 1;
}

static void printSummary(StringRef label, const rt::Tensor &tensor) {
  double minimum = INFINITY, maximum = -INFINITY, sum = 0.0;
  for (double value : tensor.data) {
    minimum = std::min(minimum, value);
    maximum = std::max(maximum, value);
    sum += value;
  }
  llvm::outs() << label << ": " << tensor.shapeString() << " min "
               << llvm::format("%.6g", minimum) << " max "
               << llvm::format("%.6g", maximum) << " mean "
               << llvm::format("%.6g", tensor.data.empty()
                                           ? 0.0
                                           : sum / double(tensor.data.size()))
               << "\n";
}

/// Largest |a - b| and, relative to the original's scale, the largest
/// |a - b| / max |b| (b: original results); positions where both are NaN
/// agree, a NaN on one side only is an infinite error.
struct Difference {
  double absolute = 0.0;
  double relative = 0.0;
};

static Difference compareResults(ArrayRef<rt::Tensor> original,
                                 ArrayRef<rt::Tensor> rewritten) {
  Difference worst;
  for (auto [before, after] : llvm::zip_equal(original, rewritten)) {
    double maxError = 0.0, maxMagnitude = 0.0;
    for (auto [b, a] : llvm::zip_equal(before.data, after.data)) {
      if (std::isnan(a) && std::isnan(b))
        continue;
      double error = std::fabs(a - b);
      maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
      if (std::isfinite(b))
        maxMagnitude = std::max(maxMagnitude, std::fabs(b));
    }
    double relative = maxError == 0.0      ? 0.0
                      : maxMagnitude > 0.0 ? maxError / maxMagnitude
                                           : INFINITY;
    worst.absolute = std::max(worst.absolute, maxError);
    worst.relative = std::max(worst.relative, relative);
  }
  return worst;
}

static std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().printGenericOpForm());
  return text;
}

/// --verify-rewrites: every function of `module` before and after `pipeline`.
static int verifyRewritesOf(MLIRContext &context, ModuleOp module,
                            const mlir::attn::api::LoadedSpec &spec) {
  OwningOpRef<ModuleOp> rewritten = module.clone();
  PassManager passes(&context);
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  if (failed(parsePassPipeline(verifyRewrites, passes, errorStream)))
    return fail("--verify-rewrites: cannot parse pipeline '" + verifyRewrites +
                "': " + parseErrors);
  if (failed(passes.run(*rewritten)))
    return fail("--verify-rewrites: pipeline '" + verifyRewrites + "' failed");

  uint64_t seed = randomSeed.getNumOccurrences() ? randomSeed.getValue() : 1;
  bool exactFailed = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    auto after = rewritten->lookupSymbol<func::FuncOp>(func.getSymName());
    if (!after)
      return fail("--verify-rewrites: the pipeline removed @" +
                  func.getSymName());
    std::vector<rt::Tensor> inputs(func.getNumArguments());
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      std::string name =
          mlir::attn::api::argumentName(spec.parserState, func, i);
      auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      if (!type)
        return fail("argument '" + name + "' of @" + func.getSymName() +
                    " is not a ranked tensor");
      std::string error = mlir::attn::api::makeRandomInput(
          type, dynamicSize, seed + i, name, inputs[i]);
      if (!error.empty())
        return fail("@" + func.getSymName() + ": " + error);
    }
    SmallVector<rt::Tensor> before, afterResults;
    if (failed(mlir::attn::api::evaluateWithReference(func, inputs, before)) ||
        failed(mlir::attn::api::evaluateWithReference(after, inputs,
                                                      afterResults)))
      return 1;
    if (before.size() != afterResults.size())
      return fail("--verify-rewrites: @" + func.getSymName() +
                  " returns a different number of results after the pipeline");
    for (auto [b, a] : llvm::zip_equal(before, afterResults))
      if (b.shape != a.shape)
        return fail("--verify-rewrites: @" + func.getSymName() + " returns " +
                    a.shapeString() + " after the pipeline, " +
                    b.shapeString() + " before");

    // An op that carries attn.approximation makes the function approximate.
    std::string approximation;
    after.walk([&](Operation *op) {
      if (auto note = op->getAttrOfType<StringAttr>("attn.approximation"))
        approximation = note.str();
    });
    Difference difference = compareResults(before, afterResults);
    std::string kind = !approximation.empty() ? "approximate: " + approximation
                       : printed(func) == printed(after) ? "unchanged"
                                                         : "exact";
    llvm::outs() << "verify-rewrites: @" << func.getSymName()
                 << " max abs err = "
                 << llvm::format("%.3g", difference.absolute)
                 << ", max rel err = "
                 << llvm::format("%.3g", difference.relative) << " (" << kind
                 << ")\n";
    if (approximation.empty() &&
        !(difference.relative <= kExactRelativeTolerance)) {
      llvm::WithColor::error(llvm::errs(), "attn-run")
          << "@" << func.getSymName() << ": the pipeline claims an exact "
          << "rewrite but the results differ by "
          << llvm::format("%.3g", difference.relative) << " relative (> "
          << kExactRelativeTolerance << ")\n";
      exactFailed = true;
    }
  }
  return exactFailed ? 1 : 0;
}

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
      "  attn-run spec.mlir --random 7 --bench 20   # median JIT time\n"
      "  attn-run spec.mlir --verify-rewrites attn-reassociate --random 7\n");

  // Passes --verify-rewrites can name.
  mlir::attn::api::registerPipelinePasses();

  mlir::attn::api::SpecFile file;
  std::string error;
  if (failed(mlir::attn::api::openSpecFile(specFile, file, error)))
    return error.empty() ? 1 : fail(error);
  mlir::attn::api::LoadedSpec &spec = file.spec;

  if (verifyRewrites.getNumOccurrences()) {
    if (!inputFiles.empty() || !outputFiles.empty() || !funcName.empty())
      return fail("--verify-rewrites evaluates every function on random "
                  "inputs; it takes no --input, --output or --func");
    if (useReference || check || benchRuns > 0 || aot ||
        target.getNumOccurrences())
      return fail("--verify-rewrites compares the reference runtime before "
                  "and after the pipeline; it takes no --reference, --check, "
                  "--bench, --aot or --target");
    return verifyRewritesOf(*file.context, *spec.module, spec);
  }

  // Pick the function.
  SmallVector<func::FuncOp> funcs;
  for (auto func : spec.module->getOps<func::FuncOp>())
    if (!func.isExternal())
      funcs.push_back(func);
  func::FuncOp func;
  if (funcName.empty()) {
    if (funcs.size() != 1) {
      std::string names;
      for (func::FuncOp f : funcs)
        names += " @" + f.getSymName().str();
      return fail(specFile + " defines " + llvm::Twine(funcs.size()) +
                  " functions; choose one with --func:" + names);
    }
    func = funcs.front();
  } else {
    func = spec.module->lookupSymbol<func::FuncOp>(funcName);
    if (!func || func.isExternal())
      return fail(specFile + " has no function @" + funcName);
  }

  // Map inputs to arguments: by name, or the next unfilled argument.
  unsigned numArgs = func.getNumArguments();
  std::vector<std::string> names;
  for (unsigned i = 0; i < numArgs; ++i)
    names.push_back(mlir::attn::api::argumentName(spec.parserState, func, i));
  std::vector<rt::Tensor> inputs(numArgs);
  std::vector<bool> given(numArgs, false);
  unsigned nextPositional = 0;
  for (const std::string &entry : inputFiles) {
    StringRef text(entry);
    unsigned index;
    std::string path;
    auto [name, file] = text.split('=');
    if (!file.empty()) {
      auto it = llvm::find(names, name.str());
      if (it == names.end()) {
        std::string known;
        for (const std::string &n : names)
          known += " " + n;
        return fail("--input " + entry + ": @" + func.getSymName() +
                    " has no argument '" + name + "' (arguments:" + known +
                    ")");
      }
      index = it - names.begin();
      path = file.str();
    } else {
      while (nextPositional < numArgs && given[nextPositional])
        ++nextPositional;
      if (nextPositional == numArgs)
        return fail("--input " + entry + ": @" + func.getSymName() +
                    " takes only " + llvm::Twine(numArgs) + " inputs");
      index = nextPositional;
      path = entry;
    }
    if (given[index])
      return fail("input '" + names[index] + "' is given twice");
    rt::Status status = rt::readNpy(path, inputs[index]);
    if (!status)
      return fail(status.message());
    given[index] = true;
  }
  for (unsigned i = 0; i < numArgs; ++i) {
    if (given[i])
      continue;
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (randomSeed.getNumOccurrences() == 0 || !type)
      return fail("missing input '" + names[i] + "' (argument #" +
                  llvm::Twine(i) + " of @" + func.getSymName() +
                  "); pass --input " + names[i] + "=file.npy or --random SEED");
    std::string error = mlir::attn::api::makeRandomInput(
        type, dynamicSize, randomSeed + i, names[i], inputs[i]);
    if (!error.empty())
      return fail(error);
  }
  if (!saveInputsDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(saveInputsDir))
      return fail("cannot create " + saveInputsDir + ": " + ec.message());
    for (unsigned i = 0; i < numArgs; ++i) {
      SmallString<128> path(saveInputsDir);
      llvm::sys::path::append(path, names[i] + ".npy");
      rt::Status status =
          rt::writeNpy(std::string(path), inputs[i], rt::NpyDType::Float32);
      if (!status)
        return fail(status.message());
    }
  }

  if (useReference && (check || benchRuns > 0 || aot))
    return fail("--reference cannot be combined with --check, --bench or "
                "--aot");
  if (useReference && (noDefaultPipeline || !passPipeline.empty()))
    return fail("--reference evaluates the spec as written; it takes no "
                "--pass-pipeline or --no-default-pipeline");
  if (noDefaultPipeline && !passPipeline.empty())
    return fail("--no-default-pipeline and --pass-pipeline exclude each "
                "other");
  if (!useReference && !mlir::attn::codegen::isValidTarget(target))
    return fail(mlir::attn::codegen::invalidTargetMessage(target));
  if (useReference && (!autoschedulerName.empty() || !tuningCachePath.empty()))
    return fail("--reference runs no kernel; it takes no --autoscheduler or "
                "--tuning-cache");
  if (!autoschedulerName.empty() && !tuningCachePath.empty())
    return fail("--autoscheduler and --tuning-cache exclude each other");
  if (!scheduleParams.empty() &&
      (useReference || !autoschedulerName.empty() || !tuningCachePath.empty()))
    return fail("--schedule-param sets the hand schedules; it excludes "
                "--reference, --autoscheduler and --tuning-cache");
  mlir::attn::codegen::ScheduleParams handParams;
  for (const std::string &assignment : scheduleParams) {
    std::string error;
    if (failed(mlir::attn::tuning::setScheduleParam(assignment, handParams,
                                                    error)))
      return fail("--schedule-param " + error);
  }
  if (!autoschedulerName.empty() &&
      !llvm::is_contained(mlir::attn::codegen::knownAutoschedulers(),
                          autoschedulerName))
    return fail("--autoscheduler " + autoschedulerName + ": expected one of " +
                llvm::join(mlir::attn::codegen::knownAutoschedulers(), ", "));

  // Inputs must fit the argument types whichever way the function runs.
  for (unsigned i = 0; i < numArgs; ++i)
    if (auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType())) {
      std::string mismatch =
          mlir::attn::api::describeShapeMismatch(inputs[i], type);
      if (!mismatch.empty()) {
        func.emitError("input #") << i << " " << mismatch;
        return 1;
      }
    }

  // The reference runtime: with --reference, and as the oracle of --check.
  SmallVector<rt::Tensor> referenceResults;
  if (useReference || check)
    if (failed(mlir::attn::api::evaluateWithReference(func, inputs,
                                                      referenceResults)))
      return 1;

  SmallVector<rt::Tensor> results;
  if (useReference) {
    results = std::move(referenceResults);
  } else {
    namespace cg = mlir::attn::codegen;
    // The kernel's function: after the pipeline, on a copy of the module
    // (argument order and names are those of the spec).
    OwningOpRef<ModuleOp> compiled = spec.module->clone();
    if (!noDefaultPipeline) {
      std::string message;
      if (failed(mlir::attn::api::runKernelPipeline(*compiled, passPipeline,
                                                    message)))
        return message.empty() ? 1 : fail("--pass-pipeline: " + message);
    }
    auto kernelFunc = compiled->lookupSymbol<func::FuncOp>(func.getSymName());
    if (!kernelFunc || kernelFunc.isExternal())
      return fail("the pass pipeline removed @" + func.getSymName());
    cg::CompileOptions options;
    options.target = target;
    options.argNames = names;
    options.autoscheduler = autoschedulerName;
    options.schedule = handParams;
    for (const rt::Tensor &input : inputs)
      options.shapeEstimates.push_back(input.shape);
    if (!tuningCachePath.empty()) {
      namespace tuning = mlir::attn::tuning;
      std::string cacheError;
      std::vector<std::string> warnings;
      FailureOr<tuning::TuningCache> cache =
          tuning::TuningCache::load(tuningCachePath, cacheError, warnings);
      if (failed(cache))
        return fail(cacheError);
      for (const std::string &warning : warnings)
        llvm::WithColor::warning(llvm::errs(), "attn-run") << warning << "\n";
      std::optional<cg::TargetInfo> info = cg::describeTarget(target);
      tuning::CacheKey key = tuning::makeCacheKey(
          kernelFunc, options.shapeEstimates, info->resolved);
      if (const tuning::CacheEntry *hit = cache->lookup(key)) {
        options.schedule = hit->params;
        options.autoscheduler = hit->autoscheduler;
        llvm::errs() << "tune: @" << func.getSymName() << " cache hit in "
                     << tuningCachePath << ": " << hit->candidate << "\n";
      } else {
        llvm::errs() << "tune: @" << func.getSymName() << " cache miss in "
                     << tuningCachePath << "; default schedule\n";
      }
    }
    SmallString<128> aotDir;
    if (aot) {
      if (std::error_code ec =
              llvm::sys::fs::createUniqueDirectory("attn-run-aot", aotDir))
        return fail("cannot create a temporary directory: " + ec.message());
    }
    // Removes the AOT files however this block is left.
    llvm::scope_exit cleanup([&] {
      if (!aotDir.empty())
        llvm::sys::fs::remove_directories(aotDir);
    });
    FailureOr<std::unique_ptr<cg::Kernel>> kernel =
        aot ? cg::Kernel::compileAot(kernelFunc, options, aotDir)
            : cg::Kernel::compileJit(kernelFunc, options);
    if (failed(kernel))
      return 1;
    std::vector<cg::HostTensor> hostInputs;
    for (const rt::Tensor &input : inputs)
      hostInputs.push_back({input.shape, input.data});
    if (failed((*kernel)->setInputs(hostInputs)) || failed((*kernel)->run()))
      return 1;
    if (benchRuns > 0) {
      FailureOr<mlir::attn::api::Timing> timing = mlir::attn::api::timeRuns(
          benchRuns, [&] { return (*kernel)->run(); });
      if (failed(timing))
        return 1;
      llvm::outs() << "bench: @" << func.getSymName() << " median "
                   << llvm::format("%.4f", timing->medianMs) << " ms over "
                   << timing->runs << " runs (min "
                   << llvm::format("%.4f", timing->minMs) << " ms)\n";
    }
    for (cg::HostTensor &result : (*kernel)->results())
      results.push_back(
          rt::Tensor(std::move(result.shape), std::move(result.data)));
  }

  if (check) {
    mlir::attn::api::ReferenceComparison comparison =
        mlir::attn::api::compareWithReference(results, referenceResults);
    if (!comparison.mismatch.empty())
      return fail("check: @" + func.getSymName() + " " + comparison.mismatch);
    double maxAbsError = comparison.maxAbsError;
    double relError = comparison.maxRelError;
    llvm::outs() << "check: @" << func.getSymName()
                 << " max abs err = " << llvm::format("%.3e", maxAbsError)
                 << ", max rel err = " << llvm::format("%.3e", relError)
                 << "\n";
    if (!(relError <= tolerance)) {
      llvm::outs().flush();
      llvm::errs() << "check: @" << func.getSymName() << " FAILED: max rel err "
                   << llvm::format("%.3e", relError) << " > tolerance "
                   << llvm::format("%.3e", tolerance.getValue()) << "\n";
      return 1;
    }
  }

  if (outputFiles.size() > results.size())
    return fail("--output given " + llvm::Twine(outputFiles.size()) +
                " times but @" + func.getSymName() + " returns " +
                llvm::Twine(results.size()) + " results");
  for (auto [index, result] : llvm::enumerate(results)) {
    if (!quiet)
      printSummary("result #" + std::to_string(index), result);
    if (index >= outputFiles.size())
      continue;
    auto type = cast<RankedTensorType>(func.getResultTypes()[index]);
    rt::Status status =
        rt::writeNpy(outputFiles[index], result,
                     type.getElementType().isF64() ? rt::NpyDType::Float64
                                                   : rt::NpyDType::Float32);
    if (!status)
      return fail(status.message());
  }
  return 0;
}
