//===- Tensor.h - Dense tensors and status values of the runtime -*- C++
//-*-===//
//
// The reference runtime stores every tensor as row-major doubles: it is the
// oracle the generated kernels are checked against, so it accumulates in
// double whatever the element type of the files it reads. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_TENSOR_H
#define ATTN_RUNTIME_TENSOR_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::runtime {

/// Success or an error message. The runtime never throws and never aborts on
/// bad input: every entry point reports through a Status.
class [[nodiscard]] Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.text = std::move(message);
    return s;
  }
  bool isOk() const { return !failed; }
  explicit operator bool() const { return !failed; }
  const std::string &message() const { return text; }

private:
  bool failed = false;
  std::string text;
};

/// A dense row-major tensor of doubles. Rank 0 is a scalar (one element).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  Tensor() = default;
  explicit Tensor(std::vector<int64_t> shape);
  Tensor(std::vector<int64_t> shape, std::vector<double> data);

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const { return static_cast<int64_t>(data.size()); }
  /// "2x3x4", as in MLIR tensor types; "scalar" for rank 0.
  std::string shapeString() const;
};

/// "2x3x4" for a shape, "scalar" for rank 0.
std::string formatShape(const std::vector<int64_t> &shape);

/// Number of elements of `shape`, or -1 if a dim is negative or the product
/// overflows int64 (so callers can reject absurd sizes instead of crashing).
int64_t checkedNumElements(const std::vector<int64_t> &shape);

/// Fills `tensor` with uniform values in [low, high) from a deterministic
/// generator (splitmix64) seeded with `seed`; the same seed gives the same
/// values on every platform.
void fillUniform(Tensor &tensor, uint64_t seed, double low = 0.0,
                 double high = 1.0);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_TENSOR_H
