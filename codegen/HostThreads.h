//===- HostThreads.h - Threads of a kernel's parallel loops -*- C++ -*-===//
//
// A kernel that runs inside another program's process shares the cores with
// that program's thread pool. PyTorch's is OpenMP (libgomp): its workers spin
// for a while after each parallel region, and a Halide pool started next to
// them competed with them for the two cores (a 1x1 convolution then the
// attention op took 1.0 ms longer than the two apart). When an OpenMP
// runtime is already loaded in the process, a kernel's parallel loops run on
// its team instead, as PyTorch's own ops do; otherwise on Halide's pool.
// Nothing here loads OpenMP: a process without it is unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CODEGEN_HOSTTHREADS_H
#define ATTN_CODEGEN_HOSTTHREADS_H

#include <cstdint>

namespace Halide {
struct JITUserContext;
} // namespace Halide

namespace mlir::attn::codegen {

/// Halide's parallel-for (halide_do_par_for_t): runs task(context, i,
/// closure) for i in [min, min + extent); 0, or the first error a task
/// returned.
using ParallelFor = int (*)(void *context, int (*task)(void *, int, uint8_t *),
                            int min, int extent, uint8_t *closure);

/// True when this process has an OpenMP runtime loaded (libgomp, or one
/// with its GOMP entry points) and ATTN_THREADS is not `halide`. Checked
/// at every call until one is found: a process may load OpenMP (import
/// torch) after its first kernel run.
bool processHasOpenMp();

/// A ParallelFor on that runtime's team, for an AOT kernel
/// (halide_do_par_for_t) and a JIT kernel (JITHandlers::custom_do_par_for):
/// at most omp_get_max_threads() threads (torch.set_num_threads sets it),
/// each taking the next index. A loop inside a task runs serially on its
/// thread, as OpenMP runs a nested region. Call only when
/// processHasOpenMp().
int openMpParallelFor(void *context, int (*task)(void *, int, uint8_t *),
                      int min, int extent, uint8_t *closure);
int openMpParallelForJit(Halide::JITUserContext *context,
                         int (*task)(Halide::JITUserContext *, int, uint8_t *),
                         int min, int extent, uint8_t *closure);

/// How many loops openMpParallelFor* have run in this process (a test's
/// evidence that a kernel's loops ran on the OpenMP team).
uint64_t openMpLoopsRun();

} // namespace mlir::attn::codegen

#endif // ATTN_CODEGEN_HOSTTHREADS_H
