//===- GpuReport.h - GPU resource use of compiled CUDA kernels --*- C++ -*-===//
//
// attn-compile --report: assembles the PTX that Halide embeds in a CUDA
// kernel's object with the CUDA toolkit's `ptxas -v` and reads, for each GPU
// kernel, its registers, static shared memory and spills. Halide sizes
// shared memory at launch, so the shared bytes count only static shared
// memory (docs/codegen.md).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_GPUREPORT_H
#define ATTN_API_GPUREPORT_H

#include "api/Console.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace mlir::attn::api {

/// Register, shared-memory and spill usage of one kernel, from ptxas -v.
struct KernelUsage {
  std::string name;
  unsigned registers = 0, sharedBytes = 0, spillStoreBytes = 0,
           spillLoadBytes = 0;
};

/// The ptxas a report runs and the GPU it assembles for.
struct GpuReportSetup {
  std::string ptxas;
  std::string gpuName; ///< sm_XX
};

/// Checks that `target` is a CUDA target and finds ptxas: `ptxas` if given
/// (else $ATTN_PTXAS, else /usr/local/cuda/bin/ptxas; a bare name is looked
/// up in PATH), assembling for `gpuName` if given (else sm_XX of the
/// target's highest cuda_capability_XX feature, sm_80 if it names none).
FailureOr<GpuReportSetup> resolveGpuReport(StringRef target, StringRef gpuName,
                                           StringRef ptxas, std::string &error);

/// Parses ptxas -v output: a kernel starts at "Compiling entry function
/// 'k'"; its spill line and "Used R registers[, S bytes smem]" follow.
std::vector<KernelUsage> parsePtxasVerbose(StringRef output);

/// Assembles one PTX module of `func`'s kernel with ptxas -v and returns
/// the kernels it reports. Errors are emitted at `func`.
FailureOr<std::vector<KernelUsage>>
assembleWithPtxas(func::FuncOp func, StringRef ptx,
                  const GpuReportSetup &setup);

/// Assembles every PTX module of `archive` (`func` compiled for a CUDA
/// target by codegen::compileToFiles) and prints, module by module, one line
/// per kernel to console.out:
///   report: @f kernel K: R registers, S bytes shared, N bytes spill stores,
///   M bytes spill loads
LogicalResult reportGpuUsage(func::FuncOp func, StringRef archive,
                             const GpuReportSetup &setup,
                             const Console &console);

} // namespace mlir::attn::api

#endif // ATTN_API_GPUREPORT_H
