//===- Codegen.h - attn -> Halide code generation (public API) ---*- C++
//-*-===//
//
// Compiles one func.func of primitive or high-level attn ops into a Halide
// pipeline and either JIT-compiles it (attn-run) or writes an AOT static
// library and header (attn-compile). This header does not include Halide:
// every Halide exception is caught inside the library and reported as an
// MLIR diagnostic, so tools built without exceptions can call it.
//
// Calling convention of generated kernels (AOT and JIT alike): one
// halide_buffer_t per func argument in spec order, then one per result;
// dim 0 of a buffer is the LAST (innermost, contiguous) dim of the tensor,
// so a dense row-major array of shape (a, b, c) is a buffer with extents
// (c, b, a). Static dims of the spec are enforced; wrong sizes make the
// kernel return a non-zero error code.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CODEGEN_CODEGEN_H
#define ATTN_CODEGEN_CODEGEN_H

#include "codegen/ScheduleParams.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::codegen {

struct CompileOptions {
  /// A Halide target string ("host", "x86-64-linux-avx2", "arm-64-linux",
  /// ...).
  std::string target = "host";
  ScheduleParams schedule;
  /// Names of the arguments as written in the spec (`%q` -> "q"); they name
  /// the kernel's buffer parameters. Missing or invalid names become "argN".
  std::vector<std::string> argNames;
  /// "" for the hand schedules (codegen/Schedule*.cpp, reading `schedule`),
  /// or a Halide autoscheduler that schedules the whole pipeline instead:
  /// "Adams2019" or "Mullapudi2016" (CPU targets), "Anderson2021" (GPU
  /// targets). See knownAutoschedulers().
  std::string autoscheduler;
  /// Argument shapes (MLIR dim order) an autoscheduler plans for; they
  /// replace the estimates of dynamic dims (256 otherwise). Empty: none.
  std::vector<std::vector<int64_t>> shapeEstimates;
  /// Emit a remark at each attention op saying which form of algorithm and
  /// schedule it got and why (attn-compile/attn-run --remark-schedule).
  bool remarkSchedule = false;
};

/// The autoschedulers CompileOptions::autoscheduler accepts.
ArrayRef<StringRef> knownAutoschedulers();

/// The directory the autoscheduler plugins are loaded from:
/// $ATTN_AUTOSCHEDULER_DIR if set, else the one found beside libHalide at
/// configure time.
std::string autoschedulerPluginDir();

/// What a target string resolves to ("host" becomes this machine's target).
struct TargetInfo {
  std::string resolved; ///< Halide's canonical target string
  bool gpu = false;     ///< has a GPU feature (cuda, opencl, ...)
  bool cuda = false;
  int floatVectorWidth = 1; ///< natural f32 lanes (16 on AVX-512, 8 on AVX2)
};

/// The resolved target, or std::nullopt if `target` is not valid.
std::optional<TargetInfo> describeTarget(StringRef target);

/// Which extra files compileToFiles writes beside <name>.a and <name>.h.
struct EmitOptions {
  bool stmt = false;     ///< <name>.stmt: the lowered loop nest
  bool html = false;     ///< <name>.stmt.html
  bool assembly = false; ///< <name>.s
  /// <name>.ptx: the PTX of every CUDA kernel (CUDA targets only; it is
  /// the device code Halide embeds in the object, for ptxas).
  bool ptx = false;
};

/// True if `target` is "host" or a valid Halide target string.
bool isValidTarget(StringRef target);

/// What tools print for an invalid target.
std::string invalidTargetMessage(StringRef target);

/// Writes <dir>/<name>.a and <dir>/<name>.h (plus what `emit` asks for) for
/// `func`, where <name> is the function's symbol name. The library does not
/// contain the Halide runtime (see compileRuntime).
LogicalResult compileToFiles(func::FuncOp func, StringRef dir,
                             const CompileOptions &options,
                             const EmitOptions &emit);

/// The PTX modules Halide embedded in `archive`, an object compiled by
/// compileToFiles for a CUDA target, one string per module (each with its own
/// .version/.target header). Fails with an error at `loc` if there is none.
FailureOr<std::vector<std::string>> readPtxModules(StringRef archive,
                                                   Location loc);

/// Writes the Halide runtime for `target` as a static library at `path`,
/// once for all kernels an app links.
LogicalResult compileRuntime(StringRef path, StringRef target, Location loc);

/// A dense row-major tensor on the host, in double whatever the element type
/// of the kernel (values are converted to f32 for f32 kernels).
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

/// Memory its caller owns, bound to a kernel argument or result without a
/// copy (the Python package's zero-copy call): a dense row-major array of
/// `shape` holding elements of the argument's or result's element type,
/// which the caller has checked.
struct BufferView {
  void *data = nullptr;
  std::vector<int64_t> shape;
};

/// A compiled kernel that runs in this process: JIT-compiled, or compiled
/// ahead of time exactly as attn-compile does (static library + runtime),
/// linked into a shared object and loaded, so tests can check the AOT code
/// path against the reference runtime. Errors are emitted at the function's
/// location.
class Kernel {
public:
  static FailureOr<std::unique_ptr<Kernel>>
  compileJit(func::FuncOp func, const CompileOptions &options);
  /// Writes <name>.a, attn_runtime.a and <name>.so into `workDir` (which
  /// must exist); needs a C++ compiler driver (`c++`) to link the .so.
  static FailureOr<std::unique_ptr<Kernel>>
  compileAot(func::FuncOp func, const CompileOptions &options,
             StringRef workDir);
  ~Kernel();

  /// Copies the inputs (one per argument, in order) into kernel buffers and
  /// allocates the results. Inputs that do not fit the argument types fail.
  LogicalResult setInputs(ArrayRef<HostTensor> inputs);
  /// Runs the kernel once on the bound inputs.
  LogicalResult run();
  /// The results of the last run.
  std::vector<HostTensor> results() const;

  /// The shapes of the results for inputs of `inputShapes` (one per
  /// argument, in order); inputs that do not fit the argument types fail.
  FailureOr<std::vector<std::vector<int64_t>>>
  resultShapes(ArrayRef<std::vector<int64_t>> inputShapes);
  /// Runs the kernel once on `inputs` and writes `outputs` in place, with
  /// no copy (host memory; GPU targets copy in and out). The output shapes
  /// must be resultShapes of the input shapes. Thread-safe: calls on one
  /// kernel run one at a time.
  LogicalResult runInPlace(ArrayRef<BufferView> inputs,
                           ArrayRef<BufferView> outputs);

  struct Impl; ///< defined in Codegen.cpp

private:
  explicit Kernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_CODEGEN_H
