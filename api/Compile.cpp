//===- Compile.cpp - Compile specs to files or in-process kernels ---------===//

#include "api/Compile.h"

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

  if (options.runPipeline) {
    std::string message;
    if (failed(
            runKernelPipeline(*spec.module, options.passPipeline, message))) {
      if (!message.empty())
        error = "--pass-pipeline: " + message;
      return failure();
    }
  }
  FailureOr<SmallVector<func::FuncOp>> funcs =
      selectFunctions(*spec.module, options.funcNames, specPath, error);
  if (failed(funcs) || failed(createDirectories(options.outputDir, error)))
    return failure();

  for (func::FuncOp func : *funcs) {
    cg::CompileOptions compile;
    compile.target = options.target;
    compile.argNames = argNames[func.getSymName().str()];
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
