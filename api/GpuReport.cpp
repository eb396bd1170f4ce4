//===- GpuReport.cpp - GPU resource use of compiled CUDA kernels ----------===//

#include "api/GpuReport.h"

#include "codegen/Codegen.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace mlir::attn::api;

/// The features of a Halide target string ("x86-64-linux-cuda-...",
/// "host-cuda"): every '-'-separated token (arch, bits and os tokens never
/// name a CUDA feature, so they need not be told apart).
static bool hasFeature(StringRef targetString, StringRef feature) {
  SmallVector<StringRef> tokens;
  targetString.split(tokens, '-');
  return llvm::is_contained(tokens, feature);
}

/// sm_XX for the target's highest cuda_capability_XX feature, sm_80 if none.
static std::string defaultGpuName(StringRef targetString) {
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

FailureOr<GpuReportSetup>
mlir::attn::api::resolveGpuReport(StringRef target, StringRef gpuName,
                                  StringRef ptxas, std::string &error) {
  if (!hasFeature(target, "cuda")) {
    error = ("--report needs a CUDA target (e.g. "
             "x86-64-linux-cuda-cuda_capability_80), not '" +
             target + "'")
                .str();
    return failure();
  }
  GpuReportSetup setup;
  setup.gpuName = gpuName.empty() ? defaultGpuName(target) : gpuName.str();
  if (!llvm::Regex("^sm_[0-9]+a?$").match(setup.gpuName)) {
    error = "--report-arch " + setup.gpuName +
            ": expected sm_XX (e.g. sm_80, sm_90)";
    return failure();
  }
  std::string requested = ptxas.str();
  if (requested.empty())
    requested = llvm::sys::Process::GetEnv("ATTN_PTXAS")
                    .value_or("/usr/local/cuda/bin/ptxas");
  // A bare name is looked up in PATH; a path is taken as is.
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(requested);
  if (!found || !llvm::sys::fs::can_execute(*found)) {
    error = "--report needs the CUDA toolkit's ptxas, not found at '" +
            requested + "' (set --ptxas PATH or ATTN_PTXAS)";
    return failure();
  }
  setup.ptxas = *found;
  return setup;
}

std::vector<KernelUsage> mlir::attn::api::parsePtxasVerbose(StringRef output) {
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

FailureOr<std::vector<KernelUsage>>
mlir::attn::api::assembleWithPtxas(func::FuncOp func, StringRef ptx,
                                   const GpuReportSetup &setup) {
  StringRef name = func.getSymName();
  SmallString<128> ptxPath, cubinPath, logPath;
  int ptxFd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "attn-report", "ptx", ptxFd, ptxPath))
    return func.emitError("cannot create a temporary file: ") << ec.message();
  llvm::FileRemover removePtx(ptxPath);
  {
    llvm::raw_fd_ostream os(ptxFd, /*shouldClose=*/true);
    os << ptx << "\n";
  }
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attn-report", "cubin", cubinPath))
    return func.emitError("cannot create a temporary file: ") << ec.message();
  llvm::FileRemover removeCubin(cubinPath);
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attn-report", "log", logPath))
    return func.emitError("cannot create a temporary file: ") << ec.message();
  llvm::FileRemover removeLog(logPath);

  SmallVector<StringRef> args = {setup.ptxas, "-v", "--gpu-name", setup.gpuName,
                                 ptxPath,     "-o", cubinPath};
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
  return kernels;
}

LogicalResult mlir::attn::api::reportGpuUsage(func::FuncOp func,
                                              StringRef archive,
                                              const GpuReportSetup &setup,
                                              const Console &console) {
  FailureOr<std::vector<std::string>> modules =
      codegen::readPtxModules(archive, func.getLoc());
  if (failed(modules))
    return failure();
  for (const std::string &module : *modules) {
    FailureOr<std::vector<KernelUsage>> kernels =
        assembleWithPtxas(func, module, setup);
    if (failed(kernels))
      return failure();
    for (const KernelUsage &kernel : *kernels)
      *console.out << "report: @" << func.getSymName() << " kernel "
                   << kernel.name << ": " << kernel.registers << " registers, "
                   << kernel.sharedBytes << " bytes shared, "
                   << kernel.spillStoreBytes << " bytes spill stores, "
                   << kernel.spillLoadBytes << " bytes spill loads\n";
  }
  return success();
}
