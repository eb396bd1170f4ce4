//===- MemoryGuard.h - What a run needs in memory, checked first -*- C++
//-*-===//
//
// Under memory overcommit an allocation too large for the machine does not
// fail: the process is killed when it touches the pages. So attn-run
// estimates the bytes a run needs before it allocates anything and refuses
// a run that cannot fit, naming the largest tensors.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_API_MEMORYGUARD_H
#define ATTN_API_MEMORYGUARD_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::api {

/// The tensors a run holds at once, at least: the sizes of tensors with a
/// dynamic dim nobody gave are unknown and left out.
struct MemoryEstimate {
  struct Tensor {
    std::string what; ///< "input 'q'", "result #0", "@f's %3 (attn.matmul)"
    uint64_t bytes = 0;
  };
  std::vector<Tensor> tensors;
  uint64_t total = 0; ///< saturates at UINT64_MAX
};

/// The memory of running `func` on inputs of its argument types (dynamic
/// dims of `dynamicSize`, when >= 0): every argument and result as the
/// host's doubles, plus, with `kernel`, as the kernel's buffers of their
/// element type, plus, with `reference`, every value the reference
/// evaluator computes (doubles). Halide's own scratch is not counted.
MemoryEstimate estimateRunMemory(func::FuncOp func,
                                 ArrayRef<std::string> argNames,
                                 int64_t dynamicSize, bool kernel,
                                 bool reference);

/// MemAvailable of /proc/meminfo, in bytes; nullopt where it cannot be read.
std::optional<uint64_t> availableMemory();

/// "8G", "512M", "64K" or a byte count -> bytes; nullopt for anything else.
std::optional<uint64_t> parseByteSize(StringRef text);

/// An error message when `estimate` exceeds `limit` bytes (`limitSource`
/// says where the limit comes from), else "".
std::string checkMemory(const MemoryEstimate &estimate, uint64_t limit,
                        StringRef limitSource);

} // namespace mlir::attn::api

#endif // ATTN_API_MEMORYGUARD_H
