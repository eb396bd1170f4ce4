//===- HostThreadsTest.cpp - Kernels on the process's OpenMP team ---------===//
//
// codegen/HostThreads.h: a process without OpenMP keeps Halide's thread
// pool; once an OpenMP runtime is loaded (as `import torch` loads libgomp),
// parallel loops run on its team: every index once, the first error
// returned, and JIT and AOT kernels give the same results as on Halide's
// pool. ctest runs each test in a process of its own
// (gtest_discover_tests), so the first sees a process without OpenMP.
//
//===----------------------------------------------------------------------===//

#include "codegen/HostThreads.h"
#include "codegen/Codegen.h"
#include "dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace mlir;
using namespace mlir::attn::codegen;

namespace {

/// Loads the system's libgomp as PyTorch loads its own (same soname).
void loadOpenMp() {
  ASSERT_NE(dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL), nullptr)
      << dlerror();
  ASSERT_TRUE(processHasOpenMp());
}

struct Visits {
  std::vector<std::atomic<int>> counts;
  std::mutex threadsMutex;
  std::set<std::thread::id> threads;
  int failAt = -1;
  explicit Visits(int n) : counts(n) {}
};

int visit(void *context, int index, uint8_t *) {
  auto &visits = *static_cast<Visits *>(context);
  visits.counts[index - 10].fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(visits.threadsMutex);
    visits.threads.insert(std::this_thread::get_id());
  }
  // Long enough that a second thread takes part.
  std::this_thread::sleep_for(std::chrono::microseconds(50));
  return index == visits.failAt ? 7 : 0;
}

TEST(HostThreads, NoOpenMpUntilOneIsLoaded) {
  EXPECT_FALSE(processHasOpenMp());
  loadOpenMp();
  setenv("ATTN_THREADS", "halide", 1);
  EXPECT_FALSE(processHasOpenMp());
  unsetenv("ATTN_THREADS");
  EXPECT_TRUE(processHasOpenMp());
}

TEST(HostThreads, EveryIndexOnceOnTheTeam) {
  loadOpenMp();
  Visits visits(200);
  EXPECT_EQ(openMpParallelFor(&visits, visit, 10, 200, nullptr), 0);
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(visits.counts[i].load(), 1) << "index " << i + 10;
  if (std::thread::hardware_concurrency() > 1) {
    EXPECT_GT(visits.threads.size(), 1u);
  }
  Visits none(1);
  EXPECT_EQ(openMpParallelFor(&none, visit, 10, 0, nullptr), 0);
  EXPECT_EQ(none.counts[0].load(), 0);
}

TEST(HostThreads, ReturnsATaskError) {
  loadOpenMp();
  Visits visits(100);
  visits.failAt = 60;
  EXPECT_EQ(openMpParallelFor(&visits, visit, 10, 100, nullptr), 7);
  EXPECT_EQ(visits.counts[50].load(), 1);
}

/// Softmax attention with enough rows for parallel row blocks, and a batch
/// loop around them.
constexpr const char *kSpec = R"mlir(
  func.func @attention(%q: tensor<3x512x32xf32>, %k: tensor<3x512x32xf32>, %v: tensor<3x512x32xf32>) -> tensor<3x512x32xf32> {
    %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125
        : tensor<3x512x32xf32>, tensor<3x512x32xf32>, tensor<3x512x32xf32> -> tensor<3x512x32xf32>
    return %o : tensor<3x512x32xf32>
  })mlir";

std::vector<HostTensor> inputs() {
  std::vector<HostTensor> result;
  for (int seed = 1; seed <= 3; ++seed) {
    HostTensor tensor{{3, 512, 32}, {}};
    for (int i = 0; i < 3 * 512 * 32; ++i)
      tensor.data.push_back(((i * 37 + seed * 11) % 29) / 14.5 - 1.0);
    result.push_back(tensor);
  }
  return result;
}

std::vector<double> run(Kernel &kernel) {
  EXPECT_TRUE(succeeded(kernel.setInputs(inputs())));
  EXPECT_TRUE(succeeded(kernel.run()));
  return kernel.results().at(0).data;
}

TEST(HostThreads, KernelsGiveTheSameResultsOnTheTeam) {
  MLIRContext context;
  context.loadDialect<attn::AttnDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kSpec, &context);
  ASSERT_TRUE(module);
  func::FuncOp func = *module->getOps<func::FuncOp>().begin();
  CompileOptions options;
  FailureOr<std::unique_ptr<Kernel>> jit = Kernel::compileJit(func, options);
  ASSERT_TRUE(succeeded(jit));
  SmallString<128> workDir;
  ASSERT_FALSE(
      llvm::sys::fs::createUniqueDirectory("attn-host-threads", workDir));
  FailureOr<std::unique_ptr<Kernel>> aot =
      Kernel::compileAot(func, options, workDir);
  ASSERT_TRUE(succeeded(aot));
  // Halide's pool first: no OpenMP yet (or, should the process have one,
  // ATTN_THREADS=halide).
  setenv("ATTN_THREADS", "halide", 1);
  uint64_t before = openMpLoopsRun();
  std::vector<double> jitOnHalide = run(**jit), aotOnHalide = run(**aot);
  EXPECT_EQ(openMpLoopsRun(), before);
  unsetenv("ATTN_THREADS");

  loadOpenMp();
  std::vector<double> jitOnTeam = run(**jit);
  uint64_t afterJit = openMpLoopsRun();
  EXPECT_GT(afterJit, before);
  std::vector<double> aotOnTeam = run(**aot);
  EXPECT_GT(openMpLoopsRun(), afterJit);
  // The same code on other threads: the same bits.
  EXPECT_EQ(jitOnTeam, jitOnHalide);
  EXPECT_EQ(aotOnTeam, aotOnHalide);
  aot->reset();
  llvm::sys::fs::remove_directories(workDir);
}

} // namespace
