//===- Compile.cpp - Compile specs to files or in-process kernels ---------===//

#include "api/Compile.h"

#include "api/Gradient.h"

#include "api/GpuReport.h"
#include "codegen/ShapeThresholds.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <map>

using namespace mlir;
using namespace mlir::attn::api;
namespace cg = mlir::attn::codegen;
namespace rt = ::attn::runtime;

LogicalResult mlir::attn::api::parseEmitKinds(ArrayRef<std::string> kinds,
                                              cg::EmitOptions &emit,
                                              std::string &error) {
  for (const std::string &kind : kinds) {
    if (kind == "stmt") {
      emit.stmt = true;
    } else if (kind == "html") {
      emit.html = true;
    } else if (kind == "assembly") {
      emit.assembly = true;
    } else if (kind == "ptx") {
      emit.ptx = true;
    } else {
      error = "--emit " + kind +
              ": expected stmt, html, assembly or ptx (comma-separated)";
      return failure();
    }
  }
  return success();
}

FailureOr<std::string>
mlir::attn::api::sizeThresholds(StringRef target, ArrayRef<std::string> params,
                                std::string &error) {
  std::optional<cg::TargetInfo> info = cg::describeTarget(target);
  if (!info) {
    error = cg::invalidTargetMessage(target);
    return failure();
  }
  cg::ScheduleParams knobs;
  if (failed(parseScheduleParams(params, knobs, error)))
    return failure();
  return cg::sizeThresholdsJson(knobs, info->floatVectorWidth);
}

/// <dir>/<name>.a
static SmallString<256> archivePath(StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  llvm::sys::path::append(path, name + ".a");
  return path;
}

/// Creates `dir` and its parents.
static LogicalResult createDirectories(StringRef dir, std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = ("cannot create " + dir + ": " + ec.message()).str();
    return failure();
  }
  return success();
}

LogicalResult mlir::attn::api::writeRuntime(StringRef dir, StringRef name,
                                            StringRef target,
                                            std::string &error) {
  if (!cg::isValidTarget(target)) {
    error = cg::invalidTargetMessage(target);
    return failure();
  }
  if (failed(createDirectories(dir, error)))
    return failure();
  MLIRContext context;
  llvm::SourceMgr noSources;
  SourceMgrDiagnosticHandler diagnostics(noSources, &context);
  return cg::compileRuntime(archivePath(dir, name), target,
                            UnknownLoc::get(&context));
}

LogicalResult mlir::attn::api::compileSpec(LoadedSpec &spec, StringRef specPath,
                                           const CompileSpecOptions &options,
                                           const Console &console,
                                           std::string &error) {
  if (!cg::isValidTarget(options.target)) {
    error = cg::invalidTargetMessage(options.target);
    return failure();
  }
  if ((!options.reportGpu.empty() || !options.ptxas.empty()) &&
      !options.report) {
    error = "--report-arch and --ptxas only apply with --report";
    return failure();
  }
  FailureOr<ScheduleSetup> schedules =
      resolveScheduleSetup(options.schedule, options.target, console, error);
  if (failed(schedules))
    return failure();
  std::optional<GpuReportSetup> report;
  if (options.report) {
    FailureOr<GpuReportSetup> setup = resolveGpuReport(
        options.target, options.reportGpu, options.ptxas, error);
    if (failed(setup))
      return failure();
    report = *setup;
  }

  // Source names of the arguments, before passes rewrite the functions.
  std::map<std::string, std::vector<std::string>> argNames;
  for (auto func : spec.module->getOps<func::FuncOp>())
    argNames[func.getSymName().str()] = argumentNames(spec.parserState, func);
  std::vector<std::string> funcNames = options.funcNames;
  if (options.grad) {
    if (failed(
            addGradients(spec, options.funcNames, options.gradSaveStatistics)))
      return failure();
    // Each @f_grad takes f's argument names, then dresult0, ..., then
    // lse0, ... with saved statistics.
    for (auto grad : spec.module->getOps<func::FuncOp>()) {
      auto of = grad->getAttrOfType<FlatSymbolRefAttr>("attn.gradient_of");
      auto func = of ? spec.module->lookupSymbol<func::FuncOp>(of.getAttr())
                     : func::FuncOp();
      if (!func)
        continue;
      argNames[grad.getSymName().str()] =
          gradientArgumentNames(func, argNames[func.getSymName().str()]);
      if (llvm::is_contained(options.funcNames, func.getSymName()))
        funcNames.push_back(grad.getSymName().str());
    }
  }

  {
    std::string message;
    if (failed(runKernelPipeline(*spec.module, options.runPipeline,
                                 options.passPipeline, message))) {
      if (!message.empty())
        error = "--pass-pipeline: " + message;
      return failure();
    }
  }
  FailureOr<SmallVector<func::FuncOp>> funcs =
      selectFunctions(*spec.module, funcNames, specPath, error);
  if (failed(funcs) || failed(createDirectories(options.outputDir, error)))
    return failure();

  for (func::FuncOp func : *funcs) {
    cg::CompileOptions compile;
    compile.target = options.target;
    compile.argNames = argNames[func.getSymName().str()];
    compile.remarkSchedule = options.remarkSchedule;
    if (failed(chooseSchedule(func, *schedules, compile, console)) ||
        failed(
            cg::compileToFiles(func, options.outputDir, compile, options.emit)))
      return failure();
    if (report && failed(reportGpuUsage(
                      func, archivePath(options.outputDir, func.getSymName()),
                      *report, console)))
      return failure();
  }
  if (!options.writeRuntime)
    return success();
  return cg::compileRuntime(archivePath(options.outputDir, options.runtimeName),
                            options.target, spec.module->getLoc());
}

LogicalResult
mlir::attn::api::compileSpecFile(StringRef specPath,
                                 const CompileSpecOptions &options,
                                 const Console &console, std::string &error) {
  SpecFile file;
  // The tuner forks a child per candidate: no idle pass-manager threads.
  if (failed(openSpecFile(specPath, file, error,
                          /*multithreading=*/!options.schedule.tune)))
    return failure();
  return compileSpec(file.spec, specPath, options, console, error);
}

LogicalResult
mlir::attn::api::checkKernelOptions(KernelOptions &options,
                                    ArrayRef<std::string> scheduleParams,
                                    std::string &error) {
  auto fail = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  const cg::CompileOptions &compile = options.compile;
  if (!options.runPipeline && !options.passPipeline.empty())
    return fail("--no-default-pipeline and --pass-pipeline exclude each "
                "other");
  if (!cg::isValidTarget(compile.target))
    return fail(cg::invalidTargetMessage(compile.target));
  bool cached = !options.tuningCache.empty();
  if (!compile.autoscheduler.empty() && cached)
    return fail("--autoscheduler and --tuning-cache exclude each other");
  if (!scheduleParams.empty() && (!compile.autoscheduler.empty() || cached))
    return fail("--schedule-param sets the hand schedules; it excludes "
                "--reference, --autoscheduler and --tuning-cache");
  if (failed(
          parseScheduleParams(scheduleParams, options.compile.schedule, error)))
    return failure();
  if (!compile.autoscheduler.empty())
    return checkAutoscheduler(compile.autoscheduler, error);
  return success();
}

LoadedKernel::~LoadedKernel() {
  // The shared object of an AOT kernel goes before its files.
  kernel.reset();
  if (!aotDir.empty() && !keepAotDir)
    llvm::sys::fs::remove_directories(aotDir);
}

LogicalResult LoadedKernel::run(ArrayRef<rt::Tensor> inputs) {
  std::vector<cg::HostTensor> hostInputs;
  for (const rt::Tensor &input : inputs)
    hostInputs.push_back({input.shape, input.data});
  return success(succeeded(kernel->setInputs(hostInputs)) &&
                 succeeded(kernel->run()));
}

FailureOr<Timing> LoadedKernel::time(unsigned runs) {
  return timeRuns(runs, [&] { return kernel->run(); });
}

SmallVector<rt::Tensor> LoadedKernel::results() const {
  SmallVector<rt::Tensor> results;
  for (cg::HostTensor &result : kernel->results())
    results.push_back(
        rt::Tensor(std::move(result.shape), std::move(result.data)));
  return results;
}

func::FuncOp LoadedKernel::function() const {
  return ModuleOp(module.get()).lookupSymbol<func::FuncOp>(funcName);
}

FailureOr<std::unique_ptr<LoadedKernel>>
mlir::attn::api::compileKernel(ModuleOp module, StringRef name,
                               KernelOptions options, const Console &console,
                               std::string &error) {
  auto loaded = std::make_unique<LoadedKernel>();
  loaded->funcName = name.str();
  loaded->module = module.clone();
  {
    std::string message;
    if (failed(runKernelPipeline(*loaded->module, options.runPipeline,
                                 options.passPipeline, message))) {
      if (!message.empty())
        error = "--pass-pipeline: " + message;
      return failure();
    }
  }
  auto func = loaded->module->lookupSymbol<func::FuncOp>(name);
  if (!func || func.isExternal()) {
    error = ("the pass pipeline removed @" + name).str();
    return failure();
  }
  if (!options.tuningCache.empty() &&
      failed(useCachedSchedule(func, options.tuningCache, options.compile,
                               console, error)))
    return failure();
  if (options.aot && !options.aotDir.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.aotDir)) {
      error = "cannot create " + options.aotDir + ": " + ec.message();
      return failure();
    }
    loaded->aotDir = options.aotDir;
    loaded->keepAotDir = true;
  } else if (options.aot) {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
            "attn-run-aot", loaded->aotDir)) {
      error = "cannot create a temporary directory: " + ec.message();
      return failure();
    }
  }
  FailureOr<std::unique_ptr<cg::Kernel>> kernel =
      options.aot
          ? cg::Kernel::compileAot(func, options.compile, loaded->aotDir)
          : cg::Kernel::compileJit(func, options.compile);
  if (failed(kernel))
    return failure();
  loaded->kernel = std::move(*kernel);
  return loaded;
}
