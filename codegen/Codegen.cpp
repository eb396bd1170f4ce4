//===- Codegen.cpp - AOT and JIT entry points -----------------------------===//
//
// The library boundary: every Halide call runs inside `guarded`, which turns
// Halide exceptions (CompileError, RuntimeError, InternalError, any
// Halide::Error) into MLIR diagnostics, so no exception escapes to the
// (exception-free) tools.
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"

#include "codegen/Algorithm.h"
#include "codegen/HostThreads.h"
#include "codegen/Schedule.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <mutex>
#include <thread>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define ATTN_LEAK_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_LEAK_SANITIZER 1
#endif
#endif
#ifdef ATTN_LEAK_SANITIZER
#include <sanitizer/lsan_interface.h>
#endif

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::codegen;

namespace {

std::string trimmed(const char *text) { return StringRef(text).trim().str(); }

/// The last message of an AOT kernel's runtime. Halide's default handler
/// prints and calls abort(); the loaded kernel's runtime reports here
/// instead, so a failed run is an error code plus this message.
thread_local std::string lastAotError;
extern "C" void recordAotError(void *, const char *message) {
  lastAotError = message;
}

/// Runs `body`; a Halide (or other C++) exception becomes an error at `loc`
/// prefixed with `what`.
template <typename Body>
LogicalResult guarded(Location loc, const llvm::Twine &what, Body &&body) {
  try {
    return body();
  } catch (const Halide::CompileError &e) {
    emitError(loc) << what << ": Halide compile error: " << trimmed(e.what());
  } catch (const Halide::RuntimeError &e) {
    emitError(loc) << what << ": Halide runtime error: " << trimmed(e.what());
  } catch (const Halide::InternalError &e) {
    emitError(loc) << what << ": Halide internal error: " << trimmed(e.what());
  } catch (const Halide::Error &e) {
    emitError(loc) << what << ": Halide error: " << trimmed(e.what());
  } catch (const std::exception &e) {
    emitError(loc) << what << ": " << e.what();
  }
  return failure();
}

/// While alive, drops Halide's one-time warning that bf16/f16 arithmetic is
/// emulated: attn never computes in 16 bits (docs/precision.md), it only
/// converts loads and stores, so the warning would mislead. Other warnings
/// print as Halide prints them. Errors are rethrown as the exceptions Halide
/// throws without a reporter (compilation raises compile and internal
/// errors only), so `guarded` and compileIsolated see them unchanged.
class QuietFloat16Warning : public Halide::CompileTimeErrorReporter {
public:
  QuietFloat16Warning() { Halide::set_custom_compile_time_error_reporter(this); }
  ~QuietFloat16Warning() override {
    Halide::set_custom_compile_time_error_reporter(nullptr);
  }
  QuietFloat16Warning(const QuietFloat16Warning &) = delete;
  QuietFloat16Warning &operator=(const QuietFloat16Warning &) = delete;

  void warning(const char *message) override {
    if (!StringRef(message).contains("(b)float16 type operation is emulated"))
      llvm::errs() << message;
  }
  void error(const char *message) override {
    if (StringRef(message).starts_with("Internal"))
      throw Halide::InternalError(message);
    throw Halide::CompileError(message);
  }
};

FailureOr<Halide::Target> parseTarget(StringRef text, Location loc) {
  if (text == "host")
    return Halide::get_host_target();
  if (!Halide::Target::validate_target_string(text.str())) {
    emitError(loc) << invalidTargetMessage(text);
    return failure();
  }
  Halide::Target target(text.str());
  return target;
}

/// Why a kernel compiled for `target` cannot run on this machine (an empty
/// string when it can): another architecture or OS, or a CPU feature the
/// host lacks (running it would die on an illegal instruction). JIT
/// kernels, and AOT kernels attn-run links and runs, need the host's.
std::string cannotRunOnHost(const Halide::Target &target) {
  Halide::Target host = Halide::get_host_target();
  if (target.arch != host.arch || target.bits != host.bits ||
      target.os != host.os)
    return "the target " + target.to_string() + " is not this machine's (" +
           host.to_string() + ")";
  static const std::pair<Halide::Target::Feature, const char *> kCpuFeatures[] =
      {{Halide::Target::SSE41, "sse41"},
       {Halide::Target::AVX, "avx"},
       {Halide::Target::AVX2, "avx2"},
       {Halide::Target::AVXVNNI, "avxvnni"},
       {Halide::Target::FMA, "fma"},
       {Halide::Target::FMA4, "fma4"},
       {Halide::Target::F16C, "f16c"},
       {Halide::Target::AVX512, "avx512"},
       {Halide::Target::AVX512_KNL, "avx512_knl"},
       {Halide::Target::AVX512_Skylake, "avx512_skylake"},
       {Halide::Target::AVX512_Cannonlake, "avx512_cannonlake"},
       {Halide::Target::AVX512_SapphireRapids, "avx512_sapphirerapids"},
       {Halide::Target::AVX512_Zen4, "avx512_zen4"},
       {Halide::Target::AVX512_Zen5, "avx512_zen5"},
       {Halide::Target::ARMDotProd, "arm_dot_prod"},
       {Halide::Target::ARMFp16, "arm_fp16"},
       {Halide::Target::SVE, "sve"},
       {Halide::Target::SVE2, "sve2"}};
  std::string missing;
  for (auto [feature, name] : kCpuFeatures)
    if (target.has_feature(feature) && !host.has_feature(feature))
      missing += std::string(missing.empty() ? "" : ", ") + name;
  if (missing.empty())
    return "";
  return "this machine's CPU lacks target features " + missing +
         " (host target: " + host.to_string() + ")";
}

bool isIdentifier(StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// Whether Halide may name one of its own temporaries `name`: a letter and
/// a number (Halide::Internal::unique_name, e.g. t309 or a1). An input
/// buffer so named aliased one and failed to compile (found by the
/// differential fuzzer, test/fuzz).
bool isHalideTemporaryName(StringRef name) {
  return name.size() > 1 && llvm::isAlpha(name.front()) &&
         llvm::all_of(name.drop_front(), llvm::isDigit);
}

/// Argument names usable as C identifiers and unique (else "argN"), with
/// an underscore after a name Halide may use itself (a1_).
std::vector<std::string> cleanArgNames(func::FuncOp func,
                                       const std::vector<std::string> &names) {
  std::vector<std::string> result;
  std::set<std::string> seen;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = i < names.size() ? names[i] : "";
    if (isHalideTemporaryName(name))
      name += "_";
    if (!isIdentifier(name) || name == func.getSymName() ||
        !seen.insert(name).second)
      name = "arg" + std::to_string(i);
    result.push_back(name);
  }
  return result;
}

/// Loads the plugin of autoscheduler `name` (once per process).
LogicalResult loadAutoscheduler(StringRef name, Location loc) {
  static std::set<std::string> loaded;
  if (loaded.count(name.str()))
    return success();
  if (!llvm::is_contained(knownAutoschedulers(), name)) {
    emitError(loc) << "unknown autoscheduler '" << name << "' (known: "
                   << llvm::join(knownAutoschedulers(), ", ") << ")";
    return failure();
  }
  std::string dir = autoschedulerPluginDir();
  SmallString<256> path(dir);
  llvm::sys::path::append(path, "libautoschedule_" + name.lower() + ".so");
  if (dir.empty() || !llvm::sys::fs::exists(path)) {
    emitError(loc) << "the Halide autoscheduler plugin for " << name
                   << " is not at '" << path
                   << "' (set ATTN_AUTOSCHEDULER_DIR to the folder holding "
                      "libautoschedule_*.so)";
    return failure();
  }
  Halide::load_plugin(std::string(path));
  loaded.insert(name.str());
  return success();
}

/// Symbolic input sizes of `algorithm` ("q.extent.0", Halide dim order)
/// bound to `shapes` (MLIR order, one per input); inputs without a shape
/// are left out.
std::map<std::string, Halide::Expr>
sizeBindings(const KernelAlgorithm &algorithm,
             const std::vector<std::vector<int64_t>> &shapes) {
  std::map<std::string, Halide::Expr> sizes;
  for (auto [index, param] : llvm::enumerate(algorithm.inputs)) {
    if (index >= shapes.size() ||
        static_cast<int>(shapes[index].size()) != param.dimensions())
      continue;
    const std::vector<int64_t> &shape = shapes[index];
    for (size_t d = 0; d < shape.size(); ++d)
      sizes[param.name() + ".extent." + std::to_string(d)] =
          Halide::Expr(static_cast<int>(shape[shape.size() - 1 - d]));
  }
  return sizes;
}

/// Estimates of every input and output for an autoscheduler: the shapes
/// being tuned where given (Algorithm.cpp already estimated static dims and
/// 256 for dynamic ones).
void setShapeEstimates(KernelAlgorithm &algorithm,
                       const std::vector<std::vector<int64_t>> &shapes) {
  if (shapes.empty())
    return;
  for (auto [index, param] : llvm::enumerate(algorithm.inputs)) {
    if (index >= shapes.size() ||
        static_cast<int>(shapes[index].size()) != param.dimensions())
      continue;
    Halide::Region estimates;
    for (size_t d = shapes[index].size(); d-- > 0;)
      estimates.push_back({0, static_cast<int>(shapes[index][d])});
    param.set_estimates(estimates);
  }
  std::map<std::string, Halide::Expr> sizes = sizeBindings(algorithm, shapes);
  for (TensorFunc &output : algorithm.outputs) {
    Halide::Region estimates;
    bool known = true;
    for (size_t d = output.rank(); d-- > 0;) {
      Halide::Expr size = Halide::Internal::simplify(
          Halide::Internal::substitute(sizes, output.shape[d]));
      auto value = Halide::Internal::as_const_int(size);
      known = known && value && *value > 0;
      estimates.push_back({0, known ? static_cast<int>(*value) : 1});
    }
    if (known)
      output.func.set_estimates(estimates);
  }
}

/// Autoscheduler parameters: the machine's parallelism; for the beam
/// searches (Adams2019, Anderson2021) a greedy beam of 1, as their default
/// beam of 32 spends about a minute on a five-op kernel, longer than most
/// tuning budgets, and is rerun on every compile of a cached choice.
Halide::AutoschedulerParams autoschedulerParams(StringRef name) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::map<std::string, std::string> extra = {
      {"parallelism", std::to_string(threads)}};
  if (name == "Adams2019" || name == "Anderson2021")
    extra["beam_size"] = "1";
  return Halide::AutoschedulerParams(name.str(), extra);
}

/// Builds and schedules the pipeline of `func`. Throws Halide errors.
FailureOr<KernelAlgorithm> buildScheduled(func::FuncOp func,
                                          const CompileOptions &options,
                                          const Halide::Target &target) {
  if (!isIdentifier(func.getSymName())) {
    func.emitError("kernel name '")
        << func.getSymName() << "' is not a C identifier";
    return failure();
  }
  // The key split and the efficient chunks are algorithms the CPU hand
  // schedules know; the GPU schedules and the autoschedulers get the plain
  // form.
  AlgorithmOptions algorithmOptions;
  if (options.autoscheduler.empty() && !target.has_gpu_feature()) {
    algorithmOptions.keySplit = options.schedule.attention.keySplit;
    algorithmOptions.causalKeySplit = options.schedule.attention.causalKeySplit;
    algorithmOptions.fewRows = options.schedule.attention.fewRows;
    algorithmOptions.keyPart = options.schedule.attention.keyPart;
    const ChunkedProductParams &chunked = options.schedule.chunkedProduct;
    algorithmOptions.efficientChunk = chunked.chunkMaxima ? chunked.chunk : 0;
    algorithmOptions.normalizeChunk = options.schedule.reduction.chunk;
    algorithmOptions.gradQueryBlock =
        options.schedule.attentionGrad.onePassQueryBlock;
    algorithmOptions.gradKeyBlock =
        options.schedule.attentionGrad.onePassKeyBlock;
  }
  algorithmOptions.integerFloat16Casts = target.has_gpu_feature();
  // Pairs pay only where vdpbf16ps outruns the f32 FMA: on Zen 4 and Zen 5
  // it does two products per lane at the FMA's rate. On Sapphire Rapids
  // class Intel cores (the target feature that also names AMX) it issues at
  // a quarter of vfmadd's rate, half the FLOPs: bench/roofline measured 162
  // against 337 GFLOP/s on an Emerald Rapids host, and bf16 softmax ran
  // 1.4x slower paired than on FMAs of the widened values.
  bool bf16DotTarget =
      target.features_any_of(
          {Halide::Target::AVX512_Zen4, Halide::Target::AVX512_Zen5}) &&
      !target.has_feature(Halide::Target::AVX512_SapphireRapids);
  int bf16Pairs = options.schedule.precision.bf16Pairs;
  algorithmOptions.bf16DotProducts =
      options.autoscheduler.empty() && !target.has_gpu_feature() &&
      (bf16Pairs == 2 || (bf16Pairs == 1 && bf16DotTarget));
  FailureOr<KernelAlgorithm> algorithm = buildAlgorithm(
      func, cleanArgNames(func, options.argNames), algorithmOptions);
  if (failed(algorithm))
    return failure();
  if (options.autoscheduler.empty()) {
    scheduleKernel(*algorithm, options.schedule, target);
    if (options.remarkSchedule)
      for (const OpStages &op : algorithm->ops)
        if (!op.form.empty())
          emitRemark(Location(op.loc))
              << "schedule of @" << func.getSymName() << ": " << op.form;
    return algorithm;
  }
  if (options.remarkSchedule)
    emitRemark(func.getLoc()) << "schedule of @" << func.getSymName()
                              << ": Halide's " << options.autoscheduler
                              << " autoscheduler (no hand schedule)";
  Location loc = func.getLoc();
  bool gpuScheduler = options.autoscheduler == "Anderson2021";
  if (gpuScheduler != target.has_gpu_feature()) {
    emitError(loc) << "autoscheduler " << options.autoscheduler
                   << (gpuScheduler ? " needs a GPU target, not "
                                    : " schedules CPU targets only, not ")
                   << target.to_string();
    return failure();
  }
  if (failed(loadAutoscheduler(options.autoscheduler, loc)))
    return failure();
  setShapeEstimates(*algorithm, options.shapeEstimates);
  // The autoscheduler writes its schedule into the Funcs themselves, so
  // every later pipeline() of this algorithm carries it.
  algorithm->pipeline().apply_autoscheduler(
      target, autoschedulerParams(options.autoscheduler));
  return algorithm;
}

/// Runs the LLVM part of an AOT compilation in a child process. LLVM inside
/// Halide reports some backend failures (e.g. instruction selection on
/// targets it supports only partly) with abort(); a child that dies becomes
/// an error here instead of taking the tool down. Halide exceptions in the
/// child are passed back through a pipe.
template <typename Body>
LogicalResult compileIsolated(Location loc, const std::string &target,
                              Body &&body) {
  int fds[2];
  if (pipe(fds) != 0) { // no isolation possible: compile in process
    body();
    return success();
  }
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    body();
    return success();
  }
  if (child == 0) {
    close(fds[0]);
    std::string message;
    try {
      body();
    } catch (const Halide::Error &e) {
      message = std::string("Halide error: ") + e.what();
    } catch (const std::exception &e) {
      message = e.what();
    }
    if (!message.empty())
      (void)!write(fds[1], message.data(), message.size());
    _exit(message.empty() ? 0 : 1);
  }
  close(fds[1]);
  std::string message;
  char chunk[4096];
  for (ssize_t n; (n = read(fds[0], chunk, sizeof(chunk))) > 0;)
    message.append(chunk, n);
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return success();
  if (WIFSIGNALED(status)) {
    emitError(loc) << "LLVM inside Halide crashed (signal " << WTERMSIG(status)
                   << ") generating code for target " << target
                   << "; its message is above. (The plain `avx512` feature "
                      "lacks AVX-512VL; x86-64-linux-avx512_skylake has it.)";
    return failure();
  }
  emitError(loc) << StringRef(message).trim();
  return failure();
}

/// Copies every PTX module of `archive` into `ptxPath`: <name>.ptx, then
/// <name>.1.ptx, ...
LogicalResult extractPtx(const std::string &archive, const std::string &ptxPath,
                         Location loc) {
  FailureOr<std::vector<std::string>> modules = readPtxModules(archive, loc);
  if (failed(modules))
    return failure();
  for (auto [index, module] : llvm::enumerate(*modules)) {
    std::string file = ptxPath;
    if (index > 0)
      file = ptxPath.substr(0, ptxPath.size() - 4) + "." +
             std::to_string(index) + ".ptx";
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    if (ec)
      return emitError(loc, "cannot write ") << file << ": " << ec.message();
    os << module << "\n";
  }
  return success();
}

} // namespace

/// Halide embeds the PTX of a CUDA pipeline in the object as a
/// NUL-terminated string produced by LLVM's NVPTX back end.
FailureOr<std::vector<std::string>>
mlir::attn::codegen::readPtxModules(StringRef archive, Location loc) {
  auto contents = llvm::MemoryBuffer::getFile(archive, /*IsText=*/false);
  if (!contents)
    return emitError(loc, "cannot read ")
           << archive << ": " << contents.getError().message();
  StringRef bytes = (*contents)->getBuffer();
  const StringRef marker = "//\n// Generated by LLVM NVPTX Back-End";
  std::vector<std::string> modules;
  for (size_t at = bytes.find(marker); at != StringRef::npos;
       at = bytes.find(marker, at + 1))
    modules.push_back(bytes.slice(at, bytes.find('\0', at)).str());
  if (modules.empty())
    return emitError(loc, "no PTX found in ")
           << archive << " (the pipeline has no CUDA kernel)";
  return modules;
}

ArrayRef<StringRef> mlir::attn::codegen::knownAutoschedulers() {
  static const StringRef names[] = {"Adams2019", "Mullapudi2016",
                                    "Anderson2021"};
  return names;
}

std::string mlir::attn::codegen::autoschedulerPluginDir() {
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("ATTN_AUTOSCHEDULER_DIR"))
    return *dir;
  // An installed tool (cmake --install) finds the plugins installed next to
  // libHalide, in <prefix>/lib.
  static int anchor;
  std::string executable = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  if (!executable.empty()) {
    SmallString<256> installed(llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(executable)));
    llvm::sys::path::append(installed, "lib", "libautoschedule_adams2019.so");
    if (llvm::sys::fs::exists(installed))
      return llvm::sys::path::parent_path(installed).str();
  }
  return ATTN_HALIDE_PLUGIN_DIR;
}

std::optional<TargetInfo>
mlir::attn::codegen::describeTarget(StringRef target) {
  if (!isValidTarget(target))
    return std::nullopt;
  try {
    Halide::Target parsed = target == "host" ? Halide::get_host_target()
                                             : Halide::Target(target.str());
    return TargetInfo{parsed.to_string(), parsed.has_gpu_feature(),
                      parsed.has_feature(Halide::Target::CUDA),
                      parsed.natural_vector_size(Halide::Float(32))};
  } catch (...) {
    return std::nullopt;
  }
}

bool mlir::attn::codegen::isValidTarget(StringRef target) {
  try {
    return target == "host" ||
           Halide::Target::validate_target_string(target.str());
  } catch (...) {
    return false;
  }
}

std::string mlir::attn::codegen::invalidTargetMessage(StringRef target) {
  return "unknown Halide target '" + target.str() +
         "' (examples: host, x86-64-linux-avx2, x86-64-linux-avx512, "
         "arm-64-linux)";
}

LogicalResult mlir::attn::codegen::compileToFiles(func::FuncOp func,
                                                  StringRef dir,
                                                  const CompileOptions &options,
                                                  const EmitOptions &emit) {
  Location loc = func.getLoc();
  return guarded(loc, "compiling @" + func.getSymName(), [&] {
    FailureOr<Halide::Target> target = parseTarget(options.target, loc);
    if (failed(target))
      return failure();
    // The runtime comes from compileRuntime, once per app.
    Halide::Target kernelTarget =
        target->with_feature(Halide::Target::NoRuntime);
    FailureOr<KernelAlgorithm> algorithm =
        buildScheduled(func, options, kernelTarget);
    if (failed(algorithm))
      return failure();
    auto path = [&](StringRef extension) {
      SmallString<256> file(dir);
      llvm::sys::path::append(file, func.getSymName() + extension);
      return std::string(file);
    };
    std::map<Halide::OutputFileType, std::string> outputs = {
        {Halide::OutputFileType::static_library, path(".a")},
        {Halide::OutputFileType::c_header, path(".h")}};
    if (emit.stmt)
      outputs[Halide::OutputFileType::stmt] = path(".stmt");
    if (emit.html)
      outputs[Halide::OutputFileType::stmt_html] = path(".stmt.html");
    if (emit.assembly)
      outputs[Halide::OutputFileType::assembly] = path(".s");
    if (emit.ptx && !target->has_feature(Halide::Target::CUDA)) {
      emitError(loc) << "--emit ptx needs a CUDA target (e.g. host-cuda), "
                     << "not " << target->to_string();
      return failure();
    }
    if (failed(compileIsolated(loc, target->to_string(), [&] {
          QuietFloat16Warning quiet;
          algorithm->pipeline().compile_to(outputs, algorithm->arguments(),
                                           func.getSymName().str(),
                                           kernelTarget);
        })))
      return failure();
    if (emit.ptx)
      return extractPtx(path(".a"), path(".ptx"), loc);
    return success();
  });
}

LogicalResult mlir::attn::codegen::compileRuntime(StringRef path,
                                                  StringRef target,
                                                  Location loc) {
  return guarded(loc, "compiling the Halide runtime", [&] {
    FailureOr<Halide::Target> parsed = parseTarget(target, loc);
    if (failed(parsed))
      return failure();
    Halide::compile_standalone_runtime(
        {{Halide::OutputFileType::static_library, path.str()}}, *parsed);
    return success();
  });
}

//===----------------------------------------------------------------------===//
// JIT
//===----------------------------------------------------------------------===//

struct Kernel::Impl {
  Location loc;
  std::string name;
  KernelAlgorithm algorithm;
  Halide::Pipeline pipeline; ///< JIT only
  Halide::Target target;     ///< what it was compiled for (JIT and AOT)
  std::vector<RankedTensorType> argTypes;
  std::vector<Halide::Buffer<>> inputs, outputs;
  /// AOT only: the loaded shared object and its `<name>_argv` entry point.
  void *library = nullptr;
  int (*entry)(void **) = nullptr;
  /// AOT only: the loaded runtime's halide_copy_to_host (GPU targets leave
  /// results on the device).
  int (*copyToHost)(void *, halide_buffer_t *) = nullptr;
  /// AOT only: the loaded runtime's halide_set_custom_do_par_for and its
  /// own thread pool's loop (HostThreads.h chooses per run).
  ParallelFor (*setParallelFor)(ParallelFor) = nullptr;
  ParallelFor ownParallelFor = nullptr;
  /// Held by runInPlace: binding and running share the inputs and outputs.
  std::mutex running;

  ~Impl() {
    // Device memory belongs to the runtime of the target: release it while
    // that runtime (the AOT library, or libHalide for JIT) is still loaded.
    for (auto *buffers : {&inputs, &outputs})
      for (Halide::Buffer<> &buffer : *buffers)
        if (buffer.defined() && buffer.raw_buffer()->device)
          buffer.device_free();
    if (library)
      dlclose(library);
  }
};

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Kernel::~Kernel() = default;

static std::unique_ptr<Kernel::Impl> newImpl(func::FuncOp func) {
  // In place: the mutex neither copies nor moves.
  std::unique_ptr<Kernel::Impl> impl(
      new Kernel::Impl{func.getLoc(), func.getSymName().str()});
  for (Type type : func.getArgumentTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      impl->argTypes.push_back(tensor);
  return impl;
}

FailureOr<std::unique_ptr<Kernel>>
Kernel::compileJit(func::FuncOp func, const CompileOptions &options) {
  std::unique_ptr<Impl> impl = newImpl(func);
  LogicalResult result =
      guarded(impl->loc, "JIT-compiling @" + func.getSymName(), [&] {
        FailureOr<Halide::Target> target =
            parseTarget(options.target, impl->loc);
        if (failed(target))
          return failure();
        if (std::string why = cannotRunOnHost(*target); !why.empty()) {
          emitError(impl->loc) << "cannot run a JIT kernel here: " << why;
          return failure();
        }
        impl->target = *target;
        FailureOr<KernelAlgorithm> algorithm =
            buildScheduled(func, options, *target);
        if (failed(algorithm))
          return failure();
        impl->algorithm = std::move(*algorithm);
        impl->pipeline = impl->algorithm.pipeline();
        QuietFloat16Warning quiet;
        impl->pipeline.compile_jit(*target);
        return success();
      });
  if (failed(result))
    return failure();
  return std::unique_ptr<Kernel>(new Kernel(std::move(impl)));
}

FailureOr<std::unique_ptr<Kernel>>
Kernel::compileAot(func::FuncOp func, const CompileOptions &options,
                   StringRef workDir) {
  std::unique_ptr<Impl> impl = newImpl(func);
  Location loc = impl->loc;
  // The kernel runs in this process: on this machine's CPU.
  if (FailureOr<Halide::Target> target = parseTarget(options.target, loc);
      failed(target))
    return failure();
  else if (std::string why = cannotRunOnHost(*target); !why.empty())
    return emitError(loc) << "cannot run an AOT kernel here: " << why;
  if (failed(compileToFiles(func, workDir, options, EmitOptions())))
    return failure();
  auto path = [&](const llvm::Twine &file) {
    SmallString<256> result(workDir);
    llvm::sys::path::append(result, file);
    return std::string(result);
  };
  std::string runtime = path("attn_runtime.a");
  if (failed(compileRuntime(runtime, options.target, loc)))
    return failure();
  // The shapes and element types of the results, without compiling again.
  LogicalResult built = guarded(loc, "compiling @" + func.getSymName(), [&] {
    FailureOr<Halide::Target> target = parseTarget(options.target, loc);
    if (failed(target))
      return failure();
    impl->target = *target;
    FailureOr<KernelAlgorithm> algorithm =
        buildScheduled(func, options, *target);
    if (failed(algorithm))
      return failure();
    impl->algorithm = std::move(*algorithm);
    return success();
  });
  if (failed(built))
    return failure();

  llvm::ErrorOr<std::string> compiler = llvm::sys::findProgramByName("c++");
  if (!compiler)
    return emitError(loc, "cannot link the AOT kernel: no `c++` on PATH");
  std::string library = path(func.getSymName() + ".so");
  std::string archive = path(func.getSymName() + ".a");
  // -Bsymbolic: the kernel uses its own runtime, not halide_* symbols of
  // another library loaded in this process.
  SmallVector<StringRef> argv = {*compiler,
                                 "-shared",
                                 "-o",
                                 library,
                                 "-Wl,-Bsymbolic",
                                 "-Wl,--whole-archive",
                                 archive,
                                 runtime,
                                 "-Wl,--no-whole-archive",
                                 "-lpthread",
                                 "-ldl"};
  std::string message;
  if (llvm::sys::ExecuteAndWait(*compiler, argv, std::nullopt, {}, 0, 0,
                                &message) != 0)
    return emitError(loc, "linking ") << library << " failed: " << message;
  impl->library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->library)
    return emitError(loc, "cannot load ") << library << ": " << dlerror();
  std::string entry = func.getSymName().str() + "_argv";
  impl->entry =
      reinterpret_cast<int (*)(void **)>(dlsym(impl->library, entry.c_str()));
  if (!impl->entry)
    return emitError(loc, "") << library << " has no symbol " << entry;
  using ErrorHandler = void (*)(void *, const char *);
  auto setErrorHandler = reinterpret_cast<ErrorHandler (*)(ErrorHandler)>(
      dlsym(impl->library, "halide_set_error_handler"));
  if (!setErrorHandler)
    return emitError(loc, "")
           << library << " has no symbol halide_set_error_handler";
  setErrorHandler(recordAotError);
  impl->copyToHost = reinterpret_cast<int (*)(void *, halide_buffer_t *)>(
      dlsym(impl->library, "halide_copy_to_host"));
  if (!impl->copyToHost)
    return emitError(loc, "")
           << library << " has no symbol halide_copy_to_host";
  impl->setParallelFor = reinterpret_cast<ParallelFor (*)(ParallelFor)>(
      dlsym(impl->library, "halide_set_custom_do_par_for"));
  impl->ownParallelFor = reinterpret_cast<ParallelFor>(
      dlsym(impl->library, "halide_default_do_par_for"));
  if (!impl->setParallelFor || !impl->ownParallelFor)
    return emitError(loc, "") << library
                              << " has no symbol halide_set_custom_do_par_for "
                                 "or halide_default_do_par_for";
  return std::unique_ptr<Kernel>(new Kernel(std::move(impl)));
}

/// Host doubles into a dense buffer of f64, f32, bf16 or f16 (round to
/// nearest even; callers pass values of the type, which convert exactly).
static void storeHostData(const std::vector<double> &data,
                          Halide::Buffer<> &buffer) {
  Halide::Type type = buffer.type();
  void *raw = buffer.data();
  for (size_t i = 0; i < data.size(); ++i) {
    if (type == Halide::Float(64))
      static_cast<double *>(raw)[i] = data[i];
    else if (type == Halide::Float(32))
      static_cast<float *>(raw)[i] = static_cast<float>(data[i]);
    else if (type == Halide::BFloat(16))
      static_cast<Halide::bfloat16_t *>(raw)[i] = Halide::bfloat16_t(data[i]);
    else
      static_cast<Halide::float16_t *>(raw)[i] = Halide::float16_t(data[i]);
  }
}

/// The elements of a dense buffer of f64, f32, bf16 or f16, as doubles.
static std::vector<double> loadHostData(const Halide::Buffer<> &buffer) {
  Halide::Type type = buffer.type();
  const void *raw = buffer.data();
  std::vector<double> data(buffer.number_of_elements());
  for (size_t i = 0; i < data.size(); ++i) {
    if (type == Halide::Float(64))
      data[i] = static_cast<const double *>(raw)[i];
    else if (type == Halide::Float(32))
      data[i] = static_cast<const float *>(raw)[i];
    else if (type == Halide::BFloat(16))
      data[i] = static_cast<double>(static_cast<const Halide::bfloat16_t *>(raw)[i]);
    else
      data[i] = static_cast<double>(static_cast<const Halide::float16_t *>(raw)[i]);
  }
  return data;
}

/// Emits an error unless an input of `shape` fits argument `index`.
static LogicalResult checkInputShape(Kernel::Impl &k, size_t index,
                                     ArrayRef<int64_t> shape) {
  RankedTensorType type = k.argTypes[index];
  bool fits = static_cast<int64_t>(shape.size()) == type.getRank();
  for (size_t d = 0; fits && d < shape.size(); ++d)
    fits = (type.isDynamicDim(d) || type.getDimSize(d) == shape[d]) &&
           shape[d] >= 0 && shape[d] <= std::numeric_limits<int32_t>::max();
  if (fits)
    return success();
  std::string text = llvm::join(
      llvm::map_range(shape, [](int64_t s) { return std::to_string(s); }),
      "x");
  return emitError(k.loc) << "input #" << index << " ('"
                          << k.algorithm.inputs[index].name() << "') has shape "
                          << text << " but the function expects " << type;
}

/// The Halide extents (innermost first) of each result for inputs of
/// `inputShapes`, which fit the arguments: result sizes are expressions of
/// the input extents.
static FailureOr<std::vector<std::vector<int>>>
resultExtents(Kernel::Impl &k, ArrayRef<std::vector<int64_t>> inputShapes) {
  std::map<std::string, Halide::Expr> sizes;
  for (auto [index, shape] : llvm::enumerate(inputShapes))
    for (size_t d = 0; d < shape.size(); ++d)
      sizes[k.algorithm.inputs[index].name() + ".extent." +
            std::to_string(d)] =
          Halide::Expr(static_cast<int>(shape[shape.size() - 1 - d]));
  std::vector<std::vector<int>> results;
  for (const TensorFunc &output : k.algorithm.outputs) {
    std::vector<int> extents;
    for (size_t d = output.rank(); d-- > 0;) {
      Halide::Expr size = Halide::Internal::simplify(
          Halide::Internal::substitute(sizes, output.shape[d]));
      auto value = Halide::Internal::as_const_int(size);
      if (!value || *value < 0)
        return emitError(k.loc) << "cannot compute dim " << d << " of result '"
                                << output.func.name()
                                << "' from the input sizes";
      extents.push_back(static_cast<int>(*value));
    }
    results.push_back(std::move(extents));
  }
  return results;
}

/// Checks the count and shapes of `inputShapes` and computes the result
/// extents (the shared prologue of binding inputs, by copy or in place).
static FailureOr<std::vector<std::vector<int>>>
checkInputsAndSizeResults(Kernel::Impl &k,
                          ArrayRef<std::vector<int64_t>> inputShapes) {
  if (inputShapes.size() != k.algorithm.inputs.size())
    return emitError(k.loc)
           << "@" << k.name << " takes " << k.algorithm.inputs.size()
           << " inputs, got " << inputShapes.size();
  for (auto [index, shape] : llvm::enumerate(inputShapes))
    if (failed(checkInputShape(k, index, shape)))
      return failure();
  FailureOr<std::vector<std::vector<int>>> extents;
  if (failed(guarded(k.loc, "sizing the results of @" + k.name, [&] {
        extents = resultExtents(k, inputShapes);
        return success(succeeded(extents));
      })))
    return failure();
  return extents;
}

/// Halide extents (innermost first) of a row-major `shape`.
static std::vector<int> halideExtents(ArrayRef<int64_t> shape) {
  std::vector<int> extents;
  for (size_t d = shape.size(); d-- > 0;)
    extents.push_back(static_cast<int>(shape[d]));
  return extents;
}

LogicalResult Kernel::setInputs(ArrayRef<HostTensor> inputs) {
  Impl &k = *impl;
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor &input : inputs)
    shapes.push_back(input.shape);
  FailureOr<std::vector<std::vector<int>>> outputExtents =
      checkInputsAndSizeResults(k, shapes);
  if (failed(outputExtents))
    return failure();
  return guarded(k.loc, "binding the inputs of @" + k.name, [&] {
    k.inputs.clear();
    for (auto [index, input] : llvm::enumerate(inputs)) {
      Halide::ImageParam &param = k.algorithm.inputs[index];
      Halide::Buffer<> buffer(param.type(), halideExtents(input.shape),
                              param.name());
      storeHostData(input.data, buffer);
      // The data was written on the host: a GPU pipeline must copy it to
      // the device before reading it.
      buffer.set_host_dirty();
      param.set(buffer);
      k.inputs.push_back(buffer);
    }
    k.outputs.clear();
    for (auto [output, extents] :
         llvm::zip_equal(k.algorithm.outputs, *outputExtents))
      k.outputs.emplace_back(output.type, extents, output.func.name());
    return success();
  });
}

FailureOr<std::vector<std::vector<int64_t>>>
Kernel::resultShapes(ArrayRef<std::vector<int64_t>> inputShapes) {
  FailureOr<std::vector<std::vector<int>>> extents =
      checkInputsAndSizeResults(*impl, inputShapes);
  if (failed(extents))
    return failure();
  std::vector<std::vector<int64_t>> shapes;
  for (const std::vector<int> &result : *extents)
    shapes.emplace_back(result.rbegin(), result.rend());
  return shapes;
}

/// A Halide buffer over `view`'s memory (no copy, not owned).
static Halide::Buffer<> wrapView(const BufferView &view, Halide::Type type,
                                 const std::string &name) {
  std::vector<int> extents = halideExtents(view.shape);
  std::vector<halide_dimension_t> dims(extents.size());
  int64_t stride = 1;
  for (size_t d = 0; d < extents.size(); ++d) {
    dims[d] = halide_dimension_t(0, extents[d], static_cast<int32_t>(stride));
    stride *= extents[d];
  }
  return Halide::Buffer<>(type, view.data, static_cast<int>(dims.size()),
                          dims.data(), name);
}

LogicalResult Kernel::runInPlace(ArrayRef<BufferView> inputs,
                                 ArrayRef<BufferView> outputs) {
  Impl &k = *impl;
  std::lock_guard<std::mutex> oneRunAtATime(k.running);
  std::vector<std::vector<int64_t>> inputShapes, outputShapes;
  for (const BufferView &input : inputs)
    inputShapes.push_back(input.shape);
  FailureOr<std::vector<std::vector<int64_t>>> expected =
      resultShapes(inputShapes);
  if (failed(expected))
    return failure();
  if (outputs.size() != expected->size())
    return emitError(k.loc) << "@" << k.name << " has " << expected->size()
                            << " results, got " << outputs.size()
                            << " output buffers";
  for (auto [index, output] : llvm::enumerate(outputs))
    if (output.shape != (*expected)[index])
      return emitError(k.loc)
             << "output #" << index << " of @" << k.name
             << " has the wrong shape for these inputs";
  return guarded(k.loc, "running @" + k.name, [&] {
    k.inputs.clear();
    for (auto [index, input] : llvm::enumerate(inputs)) {
      Halide::ImageParam &param = k.algorithm.inputs[index];
      Halide::Buffer<> buffer = wrapView(input, param.type(), param.name());
      buffer.set_host_dirty();
      param.set(buffer);
      k.inputs.push_back(buffer);
    }
    k.outputs.clear();
    for (auto [output, view] : llvm::zip_equal(k.algorithm.outputs, outputs))
      k.outputs.push_back(wrapView(view, output.type, output.func.name()));
    LogicalResult ran = run();
    // The views' memory is the caller's: keep no reference to it.
    for (Halide::ImageParam &param : k.algorithm.inputs)
      param.reset();
    k.inputs.clear();
    k.outputs.clear();
    return ran;
  });
}

namespace {
/// In a sanitizer build, exempts what a run on a device target allocates
/// from the leak check: the device runtimes (PoCL, Halide's OpenCL and CUDA
/// runtimes) keep state for the life of the process from a kernel's first
/// run (contexts, compiled programs, their caches), which LeakSanitizer
/// reports, partly from JIT code it cannot symbolize, so no suppression
/// can name it (docs/reliability.md, "Sanitizers"). Host targets stay
/// checked.
class DeviceRunLeakExemption {
public:
  explicit DeviceRunLeakExemption(bool device) : device(device) {
#ifdef ATTN_LEAK_SANITIZER
    if (device)
      __lsan_disable();
#endif
  }
  ~DeviceRunLeakExemption() {
#ifdef ATTN_LEAK_SANITIZER
    if (device)
      __lsan_enable();
#endif
  }
  DeviceRunLeakExemption(const DeviceRunLeakExemption &) = delete;
  DeviceRunLeakExemption &operator=(const DeviceRunLeakExemption &) = delete;

private:
  [[maybe_unused]] bool device;
};
} // namespace

LogicalResult Kernel::run() {
  Impl &k = *impl;
  DeviceRunLeakExemption exemption(k.target.has_gpu_feature());
  if (k.entry) {
    std::vector<void *> args;
    for (Halide::Buffer<> &buffer : k.inputs)
      args.push_back(buffer.raw_buffer());
    for (Halide::Buffer<> &buffer : k.outputs)
      args.push_back(buffer.raw_buffer());
    lastAotError.clear();
    k.setParallelFor(processHasOpenMp() ? &openMpParallelFor
                                        : k.ownParallelFor);
    if (int error = k.entry(args.data()))
      return emitError(k.loc)
             << "running @" << k.name << ": the AOT kernel returned error "
             << error << ": " << StringRef(lastAotError).trim();
    // GPU targets leave the results on the device (a no-op otherwise).
    for (Halide::Buffer<> &buffer : k.outputs)
      if (int error = k.copyToHost(nullptr, buffer.raw_buffer()))
        return emitError(k.loc)
               << "running @" << k.name << ": copying result '" << buffer.name()
               << "' to the host failed with error " << error << ": "
               << StringRef(lastAotError).trim();
    return success();
  }
  return guarded(k.loc, "running @" + k.name, [&] {
    std::vector<Halide::Buffer<>> outputs = k.outputs;
    Halide::JITUserContext context;
    if (processHasOpenMp())
      context.handlers.custom_do_par_for = &openMpParallelForJit;
    k.pipeline.realize(&context, Halide::Realization(outputs), k.target);
    // GPU targets leave the results on the device (a no-op otherwise).
    for (Halide::Buffer<> &buffer : outputs)
      buffer.copy_to_host();
    return success();
  });
}

std::vector<HostTensor> Kernel::results() const {
  std::vector<HostTensor> results;
  for (const Halide::Buffer<> &buffer : impl->outputs) {
    HostTensor tensor;
    for (int d = buffer.dimensions(); d-- > 0;)
      tensor.shape.push_back(buffer.dim(d).extent());
    tensor.data = loadHostData(buffer);
    results.push_back(std::move(tensor));
  }
  return results;
}
