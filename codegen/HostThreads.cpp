//===- HostThreads.cpp - Parallel loops on the process's OpenMP team ------===//
//
// The GOMP entry points are looked up in a runtime that is already loaded
// (found among the loaded objects, opened with RTLD_NOLOAD): attn neither
// links nor loads OpenMP.
//
//===----------------------------------------------------------------------===//

#include "codegen/HostThreads.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <mutex>

using namespace mlir::attn::codegen;

namespace {
/// GOMP_parallel(fn, data, num_threads, flags): runs fn(data) on every
/// thread of a team (libgomp's ABI since GCC 4.9, which LLVM's and Intel's
/// runtimes also export); omp_get_max_threads: the team size a region
/// started on this thread gets (torch.set_num_threads sets it).
struct OpenMpRuntime {
  void (*parallel)(void (*)(void *), void *, unsigned, unsigned) = nullptr;
  int (*maxThreads)() = nullptr;
};

std::mutex lookupMutex;
std::atomic<const OpenMpRuntime *> found{nullptr};
std::atomic<uint64_t> loopsRun{0};
/// Set on a thread while it runs tasks of a loop: a loop inside a task runs
/// serially on that thread (OpenMP would give it a team of one anyway).
thread_local bool inLoop = false;

/// The path of a loaded OpenMP runtime, found among the loaded objects
/// (about a microsecond; dlopen with RTLD_NOLOAD by soname searched the
/// library path on disk, 80 us, too slow for every run).
int findOpenMp(dl_phdr_info *info, size_t, void *path) {
  const char *name = info->dlpi_name;
  const char *base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  for (const char *prefix : {"libgomp.so", "libomp.so", "libiomp5.so"})
    if (std::strncmp(base, prefix, std::strlen(prefix)) == 0) {
      *static_cast<const char **>(path) = name;
      return 1;
    }
  return 0;
}

const OpenMpRuntime *lookUp() {
  if (const OpenMpRuntime *runtime = found.load(std::memory_order_acquire))
    return runtime;
  std::lock_guard<std::mutex> lock(lookupMutex);
  if (const OpenMpRuntime *runtime = found.load(std::memory_order_acquire))
    return runtime;
  const char *path = nullptr;
  dl_iterate_phdr(findOpenMp, &path);
  // RTLD_NOLOAD: a handle to the loaded copy, never a new one. It stays
  // open: the runtime is loaded for good anyway.
  void *handle = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : nullptr;
  if (!handle)
    return nullptr;
  auto *runtime = new OpenMpRuntime;
  runtime->parallel = reinterpret_cast<decltype(runtime->parallel)>(
      dlsym(handle, "GOMP_parallel"));
  runtime->maxThreads = reinterpret_cast<decltype(runtime->maxThreads)>(
      dlsym(handle, "omp_get_max_threads"));
  if (!runtime->parallel || !runtime->maxThreads) {
    delete runtime;
    return nullptr;
  }
  found.store(runtime, std::memory_order_release);
  return runtime;
}

/// One parallel-for: the team's threads take the next index until none is
/// left or a task failed.
template <typename Context> struct Loop {
  Context *context;
  int (*task)(Context *, int, uint8_t *);
  int min, extent;
  uint8_t *closure;
  std::atomic<int> next{0};
  std::atomic<int> error{0};

  static void runOnThread(void *data) {
    auto &loop = *static_cast<Loop *>(data);
    bool outer = !inLoop;
    inLoop = true;
    while (loop.error.load(std::memory_order_relaxed) == 0) {
      int index = loop.next.fetch_add(1, std::memory_order_relaxed);
      if (index >= loop.extent)
        break;
      if (int status =
              loop.task(loop.context, loop.min + index, loop.closure)) {
        int none = 0;
        loop.error.compare_exchange_strong(none, status);
      }
    }
    if (outer)
      inLoop = false;
  }
};

template <typename Context>
int parallelFor(Context *context, int (*task)(Context *, int, uint8_t *),
                int min, int extent, uint8_t *closure) {
  if (extent <= 0)
    return 0;
  const OpenMpRuntime *runtime = lookUp();
  loopsRun.fetch_add(1, std::memory_order_relaxed);
  // A single task runs on this thread as it is, so loops inside it still
  // get the team (a batch of one).
  if (extent == 1)
    return task(context, min, closure);
  Loop<Context> loop{context, task, min, extent, closure};
  // No more threads than tasks: an idle thread still has to be woken.
  int threads = inLoop ? 1 : runtime->maxThreads();
  if (threads <= 1)
    Loop<Context>::runOnThread(&loop);
  else
    runtime->parallel(&Loop<Context>::runOnThread, &loop,
                      static_cast<unsigned>(std::min(threads, extent)), 0);
  return loop.error.load();
}
} // namespace

uint64_t mlir::attn::codegen::openMpLoopsRun() {
  return loopsRun.load(std::memory_order_relaxed);
}

bool mlir::attn::codegen::processHasOpenMp() {
  const char *choice = std::getenv("ATTN_THREADS");
  if (choice && std::strcmp(choice, "halide") == 0)
    return false;
  return lookUp() != nullptr;
}

int mlir::attn::codegen::openMpParallelFor(void *context,
                                           int (*task)(void *, int, uint8_t *),
                                           int min, int extent,
                                           uint8_t *closure) {
  return parallelFor(context, task, min, extent, closure);
}

int mlir::attn::codegen::openMpParallelForJit(
    Halide::JITUserContext *context,
    int (*task)(Halide::JITUserContext *, int, uint8_t *), int min, int extent,
    uint8_t *closure) {
  return parallelFor(context, task, min, extent, closure);
}
