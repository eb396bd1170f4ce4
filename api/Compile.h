//===- Compile.h - Compile specs to files or in-process kernels -*- C++ -*-===//
//
// A spec's functions compile after attn-default-pipeline (or another
// pipeline) with the schedule api/ScheduleChoice.h chooses: to files, as
// attn-compile writes them (<func>.a + <func>.h per function and the Halide
// runtime once, codegen/Codegen.h), or to a kernel loaded in this process,
// as attn-run runs it (JIT, or ahead of time exactly as attn-compile does).
// Errors follow api/Console.h.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_COMPILE_H
#define ATTN_API_COMPILE_H

#include "api/Console.h"
#include "api/KernelCheck.h"
#include "api/ScheduleChoice.h"
#include "api/SpecLoader.h"
#include "codegen/Codegen.h"
#include "runtime/Tensor.h"

#include "llvm/ADT/SmallString.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::attn::api {

/// Sets the extra files of `emit` from "stmt", "html", "assembly" and "ptx"
/// (--emit).
LogicalResult parseEmitKinds(ArrayRef<std::string> kinds,
                             codegen::EmitOptions &emit, std::string &error);

/// The sizes at which the CPU schedules for `target` (with the knobs of
/// `params`, "group.name=value") change form, as JSON (codegen/
/// ShapeThresholds.h; attn-compile --print-thresholds).
FailureOr<std::string> sizeThresholds(StringRef target,
                                      ArrayRef<std::string> params,
                                      std::string &error);

/// Writes only the Halide runtime for `target`, as <dir>/<name>.a, creating
/// `dir` (attn-compile --runtime-only).
LogicalResult writeRuntime(StringRef dir, StringRef name, StringRef target,
                           std::string &error);

/// What compileSpec writes and how.
struct CompileSpecOptions {
  std::string outputDir;
  std::string target = "host";
  /// The functions to compile; empty: every function with a body.
  std::vector<std::string> funcNames;
  std::string passPipeline; ///< "": attn-default-pipeline
  bool runPipeline = true;  ///< false: compile the functions as written
  codegen::EmitOptions emit;
  std::string runtimeName = "attn_runtime"; ///< <outputDir>/<name>.a
  bool writeRuntime = true;
  ScheduleOptions schedule;
  /// CUDA targets: assemble each kernel's PTX with ptxas -v and print its
  /// resource use (api/GpuReport.h), with this ptxas and GPU ("": the
  /// defaults).
  bool report = false;
  std::string ptxas, reportGpu;
  /// A remark per attention op: its schedule form and why
  /// (codegen::CompileOptions::remarkSchedule).
  bool remarkSchedule = false;
  /// Also compile @f_grad (--attn-grad) of every compiled function @f.
  bool grad = false;
  /// With `grad`: --attn-grad=save-statistics=1 (@f also returns the row
  /// log-sum-exp of its softmax attention, @f_grad takes it).
  bool gradSaveStatistics = false;
};

/// Compiles the functions of `spec` (read from `specPath`, which error
/// messages name) to files in options.outputDir, as attn-compile does:
/// checks the options and reads the tuning cache, runs the pass pipeline on
/// `spec`, then for each function chooses its schedule, writes its files and
/// reports its GPU resource use if asked; finally writes the runtime.
/// `tune:` and `report:` lines go to `console`.
LogicalResult compileSpec(LoadedSpec &spec, StringRef specPath,
                          const CompileSpecOptions &options,
                          const Console &console, std::string &error);

/// Opens the spec at `specPath` in a context of its own and compiles it with
/// compileSpec.
LogicalResult compileSpecFile(StringRef specPath,
                              const CompileSpecOptions &options,
                              const Console &console, std::string &error);

/// How compileKernel compiles a function to run in this process.
struct KernelOptions {
  /// Target, argument names, hand-schedule knobs or autoscheduler, and
  /// shape estimates (the shapes the kernel will run on).
  codegen::CompileOptions compile;
  std::string passPipeline; ///< "": attn-default-pipeline
  bool runPipeline = true;  ///< false: compile the function as written
  /// "": none; else the schedule this tuning cache holds for the kernel on
  /// compile.shapeEstimates, if any (api/ScheduleChoice.h).
  std::string tuningCache;
  /// Compile ahead of time as attn-compile does (static library + runtime,
  /// linked into a temporary shared object with `c++`) instead of JIT.
  bool aot = false;
  /// With `aot`: the directory for the library, its header and the shared
  /// object, created if needed and kept afterwards (the object that ran,
  /// for a profiler or a disassembler); "": a temporary one, removed.
  std::string aotDir;
};

/// Checks `options` as attn-run takes them (the pipeline options, the
/// target, an autoscheduler or a tuning cache, and knobs `scheduleParams`
/// for the hand schedules, which it parses into options.compile.schedule).
LogicalResult checkKernelOptions(KernelOptions &options,
                                 ArrayRef<std::string> scheduleParams,
                                 std::string &error);

/// A kernel compiled and loaded in this process, run on reference-runtime
/// tensors. Owns the compiled copy of the spec and the AOT files, which it
/// removes when destroyed.
class LoadedKernel {
public:
  LoadedKernel() = default;
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel &) = delete;
  LoadedKernel &operator=(const LoadedKernel &) = delete;

  /// The function's symbol name.
  StringRef functionName() const { return funcName; }
  /// Binds `inputs` (one per argument, in order) and runs the kernel once.
  /// Errors are emitted at the function.
  LogicalResult run(ArrayRef<::attn::runtime::Tensor> inputs);
  /// Runs the kernel `runs` more times on the bound inputs.
  FailureOr<Timing> time(unsigned runs);
  /// The results of the last run.
  SmallVector<::attn::runtime::Tensor> results() const;
  /// The compiled function (after the pass pipeline).
  func::FuncOp function() const;
  /// The zero-copy calls of codegen::Kernel (the Python package's).
  FailureOr<std::vector<std::vector<int64_t>>>
  resultShapes(ArrayRef<std::vector<int64_t>> inputShapes) {
    return kernel->resultShapes(inputShapes);
  }
  LogicalResult runInPlace(ArrayRef<codegen::BufferView> inputs,
                           ArrayRef<codegen::BufferView> outputs) {
    return kernel->runInPlace(inputs, outputs);
  }

private:
  friend FailureOr<std::unique_ptr<LoadedKernel>>
  compileKernel(ModuleOp, StringRef, KernelOptions, const Console &,
                std::string &);
  OwningOpRef<ModuleOp> module; ///< the spec after the pass pipeline
  std::string funcName;
  SmallString<128> aotDir; ///< "" for a JIT kernel
  bool keepAotDir = false; ///< KernelOptions::aotDir was given
  std::unique_ptr<codegen::Kernel> kernel;
};

/// Compiles function `name` of `module` to run in this process, as attn-run
/// does: on a copy of `module`, after the pass pipeline (argument order and
/// names are those of the spec).
FailureOr<std::unique_ptr<LoadedKernel>>
compileKernel(ModuleOp module, StringRef name, KernelOptions options,
              const Console &console, std::string &error);

} // namespace mlir::attn::api

#endif // ATTN_API_COMPILE_H
