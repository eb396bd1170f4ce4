//===- Tensor.cpp - Dense tensors of the reference runtime ----------------===//
//
// Tensor construction, element counts with overflow checks and the
// deterministic uniform generator (splitmix64).
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"

#include <cmath>
#include <limits>
#include <new>

namespace attn::runtime {

int64_t checkedNumElements(const std::vector<int64_t> &shape) {
  for (int64_t dim : shape)
    if (dim < 0)
      return -1;
  for (int64_t dim : shape)
    if (dim == 0)
      return 0;
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (count > std::numeric_limits<int64_t>::max() / dim)
      return -1;
    count *= dim;
  }
  return count;
}

Tensor::Tensor(std::vector<int64_t> dims) : shape(std::move(dims)) {
  // A shape whose size overflows (or cannot be allocated) leaves `data`
  // empty; every runtime entry point rejects such an inconsistent tensor.
  int64_t count = checkedNumElements(shape);
  if (count <= 0)
    return;
  try {
    data.assign(static_cast<size_t>(count), 0.0);
  } catch (...) {
    data.clear();
  }
}

Tensor::Tensor(std::vector<int64_t> dims, std::vector<double> values)
    : shape(std::move(dims)), data(std::move(values)) {}

std::string formatShape(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string result;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      result += 'x';
    result += std::to_string(shape[i]);
  }
  return result;
}

std::string Tensor::shapeString() const { return formatShape(shape); }

namespace {
uint64_t splitmix64(uint64_t &state) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
} // namespace

void fillUniform(Tensor &tensor, uint64_t seed, double low, double high) {
  // Element i (row-major) takes the i-th output of splitmix64 started at
  // `seed`; its top 53 bits give u in [0, 1) and the value is
  // low + (high - low) * u (kept below `high` despite rounding).
  uint64_t state = seed;
  for (double &value : tensor.data) {
    double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
    double v = low + (high - low) * u;
    if (high > low && v >= high)
      v = std::nextafter(high, low);
    value = v;
  }
}

} // namespace attn::runtime
