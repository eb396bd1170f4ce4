//===- MemoryGuard.cpp - What a run needs in memory, checked first --------===//

#include "api/MemoryGuard.h"

#include "dialect/AttnShapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

using namespace mlir;
using namespace mlir::attn::api;

namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  return a > kSaturated - b ? kSaturated : a + b;
}

uint64_t saturatingMul(uint64_t a, uint64_t b) {
  return a != 0 && b > kSaturated / a ? kSaturated : a * b;
}

/// Elements of `type` with dynamic dims of `dynamicSize`; nullopt when a
/// dynamic dim has no size.
std::optional<uint64_t> elements(RankedTensorType type, int64_t dynamicSize) {
  uint64_t count = 1;
  for (int64_t dim : type.getShape()) {
    if (ShapedType::isDynamic(dim)) {
      if (dynamicSize < 0)
        return std::nullopt;
      dim = dynamicSize;
    }
    count = saturatingMul(count, static_cast<uint64_t>(dim));
  }
  return count;
}

std::string formatBytes(uint64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes == kSaturated)
    os << "more than 2^64 bytes";
  else if (bytes >= (1ull << 30))
    os << llvm::format("%.1f GiB", double(bytes) / double(1ull << 30));
  else if (bytes >= (1ull << 20))
    os << llvm::format("%.1f MiB", double(bytes) / double(1ull << 20));
  else
    os << bytes << " bytes";
  return text;
}

} // namespace

MemoryEstimate mlir::attn::api::estimateRunMemory(
    func::FuncOp func, ArrayRef<std::string> argNames, int64_t dynamicSize,
    bool kernel, bool reference) {
  MemoryEstimate estimate;
  auto add = [&](std::string what, Type type, bool asDouble, bool asStored) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return;
    std::optional<uint64_t> count = elements(tensor, dynamicSize);
    if (!count)
      return;
    uint64_t bytes = 0;
    if (asDouble)
      bytes = saturatingMul(*count, sizeof(double));
    if (asStored) {
      bytes =
          saturatingAdd(bytes, saturatingMul(*count, elementBytes(tensor)));
    }
    estimate.tensors.push_back({std::move(what), bytes});
    estimate.total = saturatingAdd(estimate.total, bytes);
  };
  for (auto [index, arg] : llvm::enumerate(func.getArguments()))
    add("input '" +
            (index < argNames.size() ? argNames[index]
                                     : "#" + std::to_string(index)) +
            "'",
        arg.getType(), /*asDouble=*/true, kernel);
  for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
    add("result #" + std::to_string(index), type, /*asDouble=*/true, kernel);
  if (reference)
    func.walk([&](Operation *op) {
      if (isa<func::ReturnOp>(op))
        return;
      for (Value result : op->getResults())
        add("the reference's value of '" + op->getName().getStringRef().str() +
                "'",
            result.getType(), /*asDouble=*/true, /*asStored=*/false);
    });
  std::stable_sort(estimate.tensors.begin(), estimate.tensors.end(),
                   [](const MemoryEstimate::Tensor &a,
                      const MemoryEstimate::Tensor &b) {
                     return a.bytes > b.bytes;
                   });
  return estimate;
}

std::optional<uint64_t> mlir::attn::api::availableMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    uint64_t kib = 0;
    if (fields >> key >> kib >> unit && key == "MemAvailable:" && unit == "kB")
      return saturatingMul(kib, 1024);
  }
  return std::nullopt;
}

std::optional<uint64_t> mlir::attn::api::parseByteSize(StringRef text) {
  text = text.trim();
  uint64_t scale = 1;
  if (!text.empty()) {
    switch (llvm::toUpper(text.back())) {
    case 'K':
      scale = 1ull << 10;
      break;
    case 'M':
      scale = 1ull << 20;
      break;
    case 'G':
      scale = 1ull << 30;
      break;
    case 'T':
      scale = 1ull << 40;
      break;
    }
    if (scale != 1)
      text = text.drop_back();
  }
  uint64_t value;
  if (text.empty() || text.getAsInteger(10, value) ||
      saturatingMul(value, scale) == kSaturated)
    return std::nullopt;
  return value * scale;
}

std::string mlir::attn::api::checkMemory(const MemoryEstimate &estimate,
                                         uint64_t limit,
                                         StringRef limitSource) {
  if (estimate.total <= limit)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "the run needs at least " << formatBytes(estimate.total) << " but "
     << formatBytes(limit) << " " << limitSource << "; the largest: ";
  constexpr size_t kNamed = 4;
  for (size_t i = 0; i < std::min(kNamed, estimate.tensors.size()); ++i)
    os << (i ? ", " : "") << estimate.tensors[i].what << " "
       << formatBytes(estimate.tensors[i].bytes);
  if (estimate.tensors.size() > kNamed)
    os << ", ...";
  return text;
}
