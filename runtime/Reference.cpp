//===- Reference.cpp - Reference kernels for every attn op
//-----------------===//
//
// Naive loops with double accumulation. Every entry point validates its
// operands first, computes into a local tensor (so `out` may alias an input
// and is left untouched on error) and never throws.
//
//===----------------------------------------------------------------------===//

#include "runtime/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace attn::runtime {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string numStr(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

Status fail(const char *op, const std::string &message) {
  return Status::error(std::string(op) + ": " + message);
}

/// Checks that `t` has a valid shape and exactly as many values as its shape
/// says.
Status checkTensor(const char *op, const char *name, const Tensor &t) {
  int64_t count = checkedNumElements(t.shape);
  if (count < 0)
    return fail(op, std::string(name) + " shape " + t.shapeString() +
                        " has a negative dim or too many elements");
  if (static_cast<uint64_t>(count) != t.data.size())
    return fail(op, std::string(name) + " has shape " + t.shapeString() + " (" +
                        std::to_string(count) + " elements) but holds " +
                        std::to_string(t.data.size()) + " values");
  return Status::ok();
}

Status checkRankAtLeast2(const char *op, const char *name, const Tensor &t,
                         const char *layout) {
  if (t.rank() < 2)
    return fail(op, std::string(name) + " must have rank >= 2 " + layout +
                        ", got " + t.shapeString());
  return Status::ok();
}

Status checkEps(const char *op, double eps) {
  if (!(eps >= 0.0) || !std::isfinite(eps))
    return fail(op, "eps must be a finite number >= 0, got " + numStr(eps));
  return Status::ok();
}

/// Sets `result` to a zero tensor of `shape`; fails on overflow or when the
/// allocation fails.
Status allocate(const char *op, const std::vector<int64_t> &shape,
                Tensor &result) {
  int64_t count = checkedNumElements(shape);
  if (count < 0)
    return fail(op, "result shape " + formatShape(shape) +
                        " has a negative dim or too many elements");
  try {
    result.shape = shape;
    result.data.assign(static_cast<size_t>(count), 0.0);
  } catch (...) {
    return fail(op,
                "cannot allocate the result of shape " + formatShape(shape));
  }
  return Status::ok();
}

/// Multiplies with an overflow check; false on overflow (operands >= 0).
bool checkedMul(int64_t a, int64_t b, int64_t &result) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    return false;
  result = a * b;
  return true;
}

/// out (rows x cols) = A B with A rows x inner and B inner x cols, row-major,
/// accumulated in double. A transposed operand is stored as its transpose
/// (inner x rows, cols x inner).
void multiply(const double *a, bool transposeA, const double *b,
              bool transposeB, int64_t rows, int64_t inner, int64_t cols,
              double *out) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < inner; ++p)
        acc += (transposeA ? a[p * rows + i] : a[i * inner + p]) *
               (transposeB ? b[j * inner + p] : b[p * cols + j]);
      out[i * cols + j] = acc;
    }
}

std::vector<int64_t> leadingDims(const Tensor &t, int64_t trailing) {
  return std::vector<int64_t>(t.shape.begin(), t.shape.end() - trailing);
}

/// numpy broadcasting of several shapes (right-aligned; a dim of 1 or a
/// missing dim stretches). Maps a flat index of the broadcast shape to the
/// flat index of each operand.
struct Broadcast {
  std::vector<int64_t> shape;
  /// strides[k][d]: stride of operand k along result dim d (0 if stretched).
  std::vector<std::vector<int64_t>> strides;

  int64_t index(size_t operand, int64_t flat) const {
    int64_t result = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t i = flat % shape[d];
      flat /= shape[d];
      result += i * strides[operand][d];
    }
    return result;
  }
};

bool broadcastShapes(const std::vector<std::vector<int64_t>> &shapes,
                     Broadcast &bc) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  bc.shape.assign(rank, 1);
  for (const auto &s : shapes) {
    size_t offset = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t &dim = bc.shape[offset + d];
      if (s[d] == dim || s[d] == 1)
        continue;
      if (dim != 1)
        return false;
      dim = s[d];
    }
  }
  bc.strides.clear();
  for (const auto &s : shapes) {
    std::vector<int64_t> strides(rank, 0);
    size_t offset = rank - s.size();
    // Unsigned: with a zero dim the products may wrap, but then the result
    // is empty and the strides are never used.
    uint64_t stride = 1;
    for (size_t d = s.size(); d-- > 0;) {
      strides[offset + d] = s[d] == 1 ? 0 : static_cast<int64_t>(stride);
      stride *= static_cast<uint64_t>(s[d]);
    }
    bc.strides.push_back(std::move(strides));
  }
  return true;
}

/// The log-sum-exp of the strided slice x[begin * stride], ...,
/// x[(end - 1) * stride]: NaN if an entry is NaN or +inf (the softmax is
/// NaN there), +inf if every entry is -inf or there is none (the softmax's
/// weights are 0, and exp(x - lse) gives them).
static double sliceLogSumExp(const double *x, int64_t stride, int64_t begin,
                             int64_t end) {
  double maxValue = -kInf;
  for (int64_t i = begin; i < end; ++i) {
    double v = x[i * stride];
    if (std::isnan(v) || v == kInf)
      return std::numeric_limits<double>::quiet_NaN();
    maxValue = std::max(maxValue, v);
  }
  if (maxValue == -kInf)
    return kInf;
  double total = 0.0;
  for (int64_t i = begin; i < end; ++i)
    if (x[i * stride] != -kInf)
      total += std::exp(x[i * stride] - maxValue);
  return maxValue + std::log(total);
}

/// Softmax, Sum, Count or None over the strided slice x[0], x[stride], ...
/// of `fullLen` entries of which only [begin, end) are visible: the others
/// are set to 0 and ignored. Softmax ignores -inf entries and gives 0 when
/// nothing is left; Count divides by `fullLen`.
void normalizeSlice(double *x, int64_t stride, int64_t begin, int64_t end,
                    int64_t fullLen, NormKind kind, double eps) {
  for (int64_t i = 0; i < begin; ++i)
    x[i * stride] = 0.0;
  for (int64_t i = end; i < fullLen; ++i)
    x[i * stride] = 0.0;
  switch (kind) {
  case NormKind::Softmax: {
    double maxValue = -kInf;
    bool hasNaN = false;
    for (int64_t i = begin; i < end; ++i) {
      double v = x[i * stride];
      if (std::isnan(v))
        hasNaN = true;
      else if (v > maxValue)
        maxValue = v;
    }
    if (hasNaN) {
      for (int64_t i = begin; i < end; ++i)
        x[i * stride] = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    if (maxValue == -kInf) {
      for (int64_t i = begin; i < end; ++i)
        x[i * stride] = 0.0;
      return;
    }
    double sum = 0.0;
    for (int64_t i = begin; i < end; ++i) {
      double v = x[i * stride];
      double e = v == -kInf ? 0.0 : std::exp(v - maxValue);
      x[i * stride] = e;
      sum += e;
    }
    for (int64_t i = begin; i < end; ++i)
      x[i * stride] /= sum;
    return;
  }
  case NormKind::Sum: {
    double sum = eps;
    for (int64_t i = begin; i < end; ++i)
      sum += x[i * stride];
    for (int64_t i = begin; i < end; ++i)
      x[i * stride] /= sum;
    return;
  }
  case NormKind::Count: {
    double length = static_cast<double>(fullLen);
    for (int64_t i = begin; i < end; ++i)
      x[i * stride] /= length;
    return;
  }
  case NormKind::None:
    return;
  }
}

double applyMap(double x, FeatureMap map) {
  switch (map) {
  case FeatureMap::Identity:
    return x;
  case FeatureMap::EluPlusOne:
    return x > 0.0 ? x + 1.0 : std::exp(x);
  case FeatureMap::Relu:
    return x < 0.0 ? 0.0 : x;
  }
  return x;
}

bool validKind(NormKind kind) {
  return kind == NormKind::Softmax || kind == NormKind::Sum ||
         kind == NormKind::Count || kind == NormKind::None;
}

bool validMap(FeatureMap map) {
  return map == FeatureMap::Identity || map == FeatureMap::EluPlusOne ||
         map == FeatureMap::Relu;
}

Status checkAxis(const char *op, const Tensor &t, int64_t axis) {
  if (axis < 0 || axis >= t.rank())
    return fail(op, "axis " + std::to_string(axis) + " is out of range for " +
                        "input " + t.shapeString() + " of rank " +
                        std::to_string(t.rank()));
  return Status::ok();
}

/// Splits `shape` around `axis` into outer * len * inner.
void splitAxis(const std::vector<int64_t> &shape, int64_t axis, int64_t &outer,
               int64_t &len, int64_t &inner) {
  // Unsigned: the products only wrap when some dim is 0, and then nothing
  // is computed.
  uint64_t outerProduct = 1, innerProduct = 1;
  for (int64_t d = 0; d < axis; ++d)
    outerProduct *= static_cast<uint64_t>(shape[d]);
  for (size_t d = axis + 1; d < shape.size(); ++d)
    innerProduct *= static_cast<uint64_t>(shape[d]);
  outer = static_cast<int64_t>(outerProduct);
  len = shape[axis];
  inner = static_cast<int64_t>(innerProduct);
}

/// Checks an additive attention mask (..., n, m) against checked query, key
/// and value; bc becomes the broadcast of all four operands' leading dims
/// (the mask is operand 3).
Status checkMask(const char *op, const Tensor &mask, const Tensor &query,
                 const Tensor &key, const Tensor &value, Broadcast &bc) {
  if (Status s = checkTensor(op, "mask", mask); !s)
    return s;
  if (Status s = checkRankAtLeast2(op, "mask", mask, "(..., n, m)"); !s)
    return s;
  const int64_t n = query.shape[query.rank() - 2];
  const int64_t m = key.shape[key.rank() - 2];
  int64_t mn = mask.shape[mask.rank() - 2], mm = mask.shape.back();
  if (mn != n || mm != m)
    return fail(op, "mask " + mask.shapeString() + " must end in " +
                        std::to_string(n) + "x" + std::to_string(m) +
                        " (queries x keys) for query " + query.shapeString() +
                        " and key " + key.shapeString());
  if (!broadcastShapes({leadingDims(query, 2), leadingDims(key, 2),
                        leadingDims(value, 2), leadingDims(mask, 2)},
                       bc))
    return fail(op, "leading dims do not broadcast: query " +
                        query.shapeString() + ", key " + key.shapeString() +
                        ", value " + value.shapeString() + ", mask " +
                        mask.shapeString());
  return Status::ok();
}

/// Common checks of the (..., n, dk) x (..., m, dk) x (..., m, dv) attention
/// operands; fills the broadcast of their leading dims (and of `extra`).
Status checkQKV(const char *op, const char *qName, const Tensor &q,
                const char *kName, const Tensor &k, const char *vName,
                const Tensor &v, Broadcast &bc) {
  if (Status s = checkTensor(op, qName, q); !s)
    return s;
  if (Status s = checkTensor(op, kName, k); !s)
    return s;
  if (Status s = checkTensor(op, vName, v); !s)
    return s;
  if (Status s = checkRankAtLeast2(op, qName, q, "(..., n, dk)"); !s)
    return s;
  if (Status s = checkRankAtLeast2(op, kName, k, "(..., m, dk)"); !s)
    return s;
  if (Status s = checkRankAtLeast2(op, vName, v, "(..., m, dv)"); !s)
    return s;
  int64_t dkQ = q.shape.back(), dkK = k.shape.back();
  if (dkQ != dkK)
    return fail(op, std::string("feature dims do not match: ") + qName + " " +
                        q.shapeString() + " has " + std::to_string(dkQ) + ", " +
                        kName + " " + k.shapeString() + " has " +
                        std::to_string(dkK));
  int64_t mK = k.shape[k.rank() - 2], mV = v.shape[v.rank() - 2];
  if (mK != mV)
    return fail(op, std::string("position dims do not match: ") + kName + " " +
                        k.shapeString() + " has " + std::to_string(mK) + ", " +
                        vName + " " + v.shapeString() + " has " +
                        std::to_string(mV));
  if (!broadcastShapes(
          {leadingDims(q, 2), leadingDims(k, 2), leadingDims(v, 2)}, bc))
    return fail(op, std::string("leading dims do not broadcast: ") + qName +
                        " " + q.shapeString() + ", " + kName + " " +
                        k.shapeString() + ", " + vName + " " + v.shapeString());
  return Status::ok();
}

/// Adds weight * sample(level at (x, y)) to acc[0..D): bilinear, zeros
/// padding. `base` points at value[n, levelStart, h, 0]; rows of the level
/// are `rowStride` apart.
void sampleAccumulate(const double *base, int64_t rowStride, int64_t height,
                      int64_t width, int64_t depth, double x, double y,
                      bool alignCorners, double weight, double *acc) {
  if (!std::isfinite(x) || !std::isfinite(y) || height <= 0 || width <= 0)
    return;
  double w = static_cast<double>(width), h = static_cast<double>(height);
  double px = alignCorners ? x * (w - 1.0) : x * w - 0.5;
  double py = alignCorners ? y * (h - 1.0) : y * h - 0.5;
  // Some corner is inside only if floor(p) is in [-1, size - 1]; checking in
  // double first keeps the int conversion below in range.
  if (!(px >= -1.0 && px < w && py >= -1.0 && py < h))
    return;
  double fx0 = std::floor(px), fy0 = std::floor(py);
  int64_t x0 = static_cast<int64_t>(fx0), y0 = static_cast<int64_t>(fy0);
  double fx = px - fx0, fy = py - fy0;
  const int64_t xs[2] = {x0, x0 + 1};
  const int64_t ys[2] = {y0, y0 + 1};
  const double wx[2] = {1.0 - fx, fx};
  const double wy[2] = {1.0 - fy, fy};
  for (int cy = 0; cy < 2; ++cy) {
    if (ys[cy] < 0 || ys[cy] >= height)
      continue;
    for (int cx = 0; cx < 2; ++cx) {
      if (xs[cx] < 0 || xs[cx] >= width)
        continue;
      double cornerWeight = weight * wx[cx] * wy[cy];
      const double *row = base + (ys[cy] * width + xs[cx]) * rowStride;
      for (int64_t d = 0; d < depth; ++d)
        acc[d] += cornerWeight * row[d];
    }
  }
}

/// The first row of each level in a value tensor (N, Lv, M, D) and Lv.
Status levelRows(const char *op, const std::vector<SpatialLevel> &levels,
                 std::vector<int64_t> &levelStart, int64_t &total) {
  levelStart.clear();
  total = 0;
  for (size_t l = 0; l < levels.size(); ++l) {
    const SpatialLevel &level = levels[l];
    if (level.height < 0 || level.width < 0)
      return fail(op, "level " + std::to_string(l) + " has a negative size " +
                          std::to_string(level.height) + "x" +
                          std::to_string(level.width));
    int64_t area;
    if (!checkedMul(level.height, level.width, area) ||
        total > std::numeric_limits<int64_t>::max() - area)
      return fail(op, "the level sizes overflow (level " + std::to_string(l) +
                          " is " + std::to_string(level.height) + "x" +
                          std::to_string(level.width) + ")");
    levelStart.push_back(total);
    total += area;
  }
  return Status::ok();
}

/// Validates the value / locations / levels of a multi-scale gather and
/// computes the first row of each level.
Status checkSampling(const char *op, const Tensor &value,
                     const Tensor &locations,
                     const std::vector<SpatialLevel> &levels,
                     std::vector<int64_t> &levelStart) {
  if (Status s = checkTensor(op, "value", value); !s)
    return s;
  if (Status s = checkTensor(op, "locations", locations); !s)
    return s;
  if (value.rank() != 4)
    return fail(op, "value must have rank 4 (N, Lv, M, D), got " +
                        value.shapeString());
  if (locations.rank() != 6)
    return fail(op, "locations must have rank 6 (N, Lq, M, L, P, 2), got " +
                        locations.shapeString());
  if (locations.shape[5] != 2)
    return fail(op, "the last dim of locations " + locations.shapeString() +
                        " must be 2 (x, y), got " +
                        std::to_string(locations.shape[5]));
  if (locations.shape[0] != value.shape[0])
    return fail(op, "batch dims do not match: value " + value.shapeString() +
                        " has N = " + std::to_string(value.shape[0]) +
                        ", locations " + locations.shapeString() + " has " +
                        std::to_string(locations.shape[0]));
  if (locations.shape[2] != value.shape[2])
    return fail(op, "head dims do not match: value " + value.shapeString() +
                        " has M = " + std::to_string(value.shape[2]) +
                        ", locations " + locations.shapeString() + " has " +
                        std::to_string(locations.shape[2]));
  if (locations.shape[3] != static_cast<int64_t>(levels.size()))
    return fail(op, "locations " + locations.shapeString() +
                        " has L = " + std::to_string(locations.shape[3]) +
                        " levels but the level list has " +
                        std::to_string(levels.size()));
  int64_t total;
  if (Status s = levelRows(op, levels, levelStart, total); !s)
    return s;
  if (total != value.shape[1]) {
    std::string list;
    for (size_t l = 0; l < levels.size(); ++l)
      list += (l ? ", " : "") + std::to_string(levels[l].height) + "x" +
              std::to_string(levels[l].width);
    return fail(op, "value " + value.shapeString() +
                        " has Lv = " + std::to_string(value.shape[1]) +
                        " but the levels [" + list + "] have " +
                        std::to_string(total) + " positions in all");
  }
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Primitive ops
//===----------------------------------------------------------------------===//

Status matmul(const Tensor &lhs, const Tensor &rhs, bool transposeLhs,
              bool transposeRhs, Tensor &out) {
  const char *op = "matmul";
  if (Status s = checkTensor(op, "lhs", lhs); !s)
    return s;
  if (Status s = checkTensor(op, "rhs", rhs); !s)
    return s;
  if (Status s = checkRankAtLeast2(op, "lhs", lhs, "(..., M, K)"); !s)
    return s;
  if (Status s = checkRankAtLeast2(op, "rhs", rhs, "(..., K, N)"); !s)
    return s;
  int64_t l0 = lhs.shape[lhs.rank() - 2], l1 = lhs.shape.back();
  int64_t r0 = rhs.shape[rhs.rank() - 2], r1 = rhs.shape.back();
  int64_t m = transposeLhs ? l1 : l0, kL = transposeLhs ? l0 : l1;
  int64_t kR = transposeRhs ? r1 : r0, n = transposeRhs ? r0 : r1;
  if (kL != kR)
    return fail(op, "contraction dims do not match: lhs " + lhs.shapeString() +
                        (transposeLhs ? " (transposed)" : "") + " has K = " +
                        std::to_string(kL) + ", rhs " + rhs.shapeString() +
                        (transposeRhs ? " (transposed)" : "") +
                        " has K = " + std::to_string(kR));
  Broadcast bc;
  if (!broadcastShapes({leadingDims(lhs, 2), leadingDims(rhs, 2)}, bc))
    return fail(op, "leading dims do not broadcast: lhs " + lhs.shapeString() +
                        ", rhs " + rhs.shapeString());
  std::vector<int64_t> shape = bc.shape;
  shape.push_back(m);
  shape.push_back(n);
  Tensor result;
  if (Status s = allocate(op, shape, result); !s)
    return s;
  int64_t k = kL;
  if (!result.data.empty()) {
    int64_t batches = result.numElements() / (m * n);
    for (int64_t b = 0; b < batches; ++b) {
      const double *l = lhs.data.data() + bc.index(0, b) * l0 * l1;
      const double *r = rhs.data.data() + bc.index(1, b) * r0 * r1;
      multiply(l, transposeLhs, r, transposeRhs, m, k, n,
               result.data.data() + b * m * n);
    }
  }
  out = std::move(result);
  return Status::ok();
}

Status normalize(const Tensor &input, NormKind kind, int64_t axis, double eps,
                 Tensor &out) {
  const char *op = "normalize";
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  if (Status s = checkAxis(op, input, axis); !s)
    return s;
  if (!validKind(kind))
    return fail(op, "unknown normalization kind");
  if (Status s = checkEps(op, eps); !s)
    return s;
  Tensor result;
  if (Status s = allocate(op, input.shape, result); !s)
    return s;
  result.data = input.data;
  int64_t outer, len, inner;
  splitAxis(input.shape, axis, outer, len, inner);
  if (!result.data.empty())
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        normalizeSlice(result.data.data() + o * len * inner + i, inner, 0, len,
                       len, kind, eps);
  out = std::move(result);
  return Status::ok();
}

Status softmaxFromLse(const Tensor &input, const Tensor &lse, int64_t axis,
                      Tensor &out) {
  const char *op = "softmaxFromLse";
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  if (Status s = checkTensor(op, "lse", lse); !s)
    return s;
  if (Status s = checkAxis(op, input, axis); !s)
    return s;
  std::vector<int64_t> lseShape = input.shape;
  lseShape[static_cast<size_t>(axis)] = 1;
  if (lse.shape != lseShape)
    return fail(op, "lse " + lse.shapeString() + " must have the input's " +
                        "shape " + input.shapeString() + " with size 1 at " +
                        "axis " + std::to_string(axis));
  Tensor result;
  if (Status s = allocate(op, input.shape, result); !s)
    return s;
  int64_t outer, len, inner;
  splitAxis(input.shape, axis, outer, len, inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < len; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (o * len + j) * inner + i;
        result.data[at] = std::exp(input.data[at] - lse.data[o * inner + i]);
      }
  out = std::move(result);
  return Status::ok();
}

/// out = fn(input) element by element, with input's shape.
template <typename ElementFn>
static Status mapElements(const char *op, const Tensor &input, ElementFn fn,
                          Tensor &out) {
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  Tensor result;
  if (Status s = allocate(op, input.shape, result); !s)
    return s;
  for (size_t i = 0; i < input.data.size(); ++i)
    result.data[i] = fn(input.data[i]);
  out = std::move(result);
  return Status::ok();
}

Status scale(const Tensor &input, double factor, Tensor &out) {
  return mapElements(
      "scale", input, [&](double x) { return factor * x; }, out);
}

Status floor(const Tensor &input, Tensor &out) {
  return mapElements(
      "floor", input, [](double x) { return std::floor(x); }, out);
}

/// The block of `sizes[d]` elements `strides[d]` apart from `offsets[d]`
/// along each dim d (one entry per dim) must lie inside `t`.
static Status checkBlock(const char *op, const Tensor &t,
                         const std::vector<int64_t> &offsets,
                         const std::vector<int64_t> &sizes,
                         const std::vector<int64_t> &strides) {
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (offsets[d] < 0 || sizes[d] < 0 || strides[d] < 1)
      return fail(op, "dim " + std::to_string(d) + ": offset " +
                          std::to_string(offsets[d]) + ", size " +
                          std::to_string(sizes[d]) + ", stride " +
                          std::to_string(strides[d]) +
                          " (offsets and sizes >= 0, strides >= 1)");
    // The last index, offset + (size - 1) * stride, must be in range.
    int64_t span;
    if (sizes[d] > 0 && (!checkedMul(sizes[d] - 1, strides[d], span) ||
                         span >= t.shape[d] - offsets[d]))
      return fail(op, "dim " + std::to_string(d) + " of " + t.shapeString() +
                          ": " + std::to_string(sizes[d]) + " elements from " +
                          std::to_string(offsets[d]) + " with stride " +
                          std::to_string(strides[d]) + " run out of bounds");
  }
  return Status::ok();
}

Status slice(const Tensor &input, const std::vector<int64_t> &offsets,
             const std::vector<int64_t> &sizes,
             const std::vector<int64_t> &strides, Tensor &out) {
  const char *op = "slice";
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  const size_t rank = input.shape.size();
  if (offsets.size() != rank || sizes.size() != rank || strides.size() != rank)
    return fail(op, "offsets, sizes and strides need one entry per dim of " +
                        input.shapeString());
  if (Status s = checkBlock(op, input, offsets, sizes, strides); !s)
    return s;
  Tensor result;
  if (Status s = allocate(op, sizes, result); !s)
    return s;
  // Row-major strides of the input, then one odometer over the result.
  std::vector<int64_t> inputStride(rank, 1);
  for (size_t d = rank; d-- > 1;)
    inputStride[d - 1] = inputStride[d] * input.shape[d];
  std::vector<int64_t> index(rank, 0);
  for (double &element : result.data) {
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += (offsets[d] + index[d] * strides[d]) * inputStride[d];
    element = input.data[at];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  out = std::move(result);
  return Status::ok();
}

Status insertSlice(const Tensor &source, const Tensor &dest,
                   const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &strides, Tensor &out) {
  const char *op = "insertSlice";
  if (Status s = checkTensor(op, "source", source); !s)
    return s;
  if (Status s = checkTensor(op, "dest", dest); !s)
    return s;
  const size_t rank = dest.shape.size();
  if (source.shape.size() != rank || offsets.size() != rank ||
      strides.size() != rank)
    return fail(op, "source " + source.shapeString() +
                        ", offsets and strides need one entry per dim of "
                        "dest " +
                        dest.shapeString());
  if (Status s = checkBlock(op, dest, offsets, source.shape, strides); !s)
    return s;
  Tensor result;
  if (Status s = allocate(op, dest.shape, result); !s)
    return s;
  result.data = dest.data;
  std::vector<int64_t> destStride(rank, 1);
  for (size_t d = rank; d-- > 1;)
    destStride[d - 1] = destStride[d] * dest.shape[d];
  // One odometer over the source, as in slice.
  std::vector<int64_t> index(rank, 0);
  for (double element : source.data) {
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += (offsets[d] + index[d] * strides[d]) * destStride[d];
    result.data[at] = element;
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < source.shape[d])
        break;
      index[d] = 0;
    }
  }
  out = std::move(result);
  return Status::ok();
}

Status featureMap(const Tensor &input, FeatureMap map, Tensor &out) {
  if (!validMap(map))
    return fail("featureMap", "unknown feature map");
  return mapElements(
      "featureMap", input, [&](double x) { return applyMap(x, map); }, out);
}

Status featureMapGrad(const Tensor &input, const Tensor &cotangent,
                      FeatureMap map, Tensor &out) {
  const char *op = "featureMapGrad";
  if (!validMap(map))
    return fail(op, "unknown feature map");
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  if (Status s = checkTensor(op, "cotangent", cotangent); !s)
    return s;
  if (input.shape != cotangent.shape)
    return fail(op, "input " + input.shapeString() + " and cotangent " +
                        cotangent.shapeString() + " must have the same shape");
  Tensor result;
  if (Status s = allocate(op, input.shape, result); !s)
    return s;
  for (size_t i = 0; i < input.data.size(); ++i) {
    double x = input.data[i], g = cotangent.data[i];
    if (map == FeatureMap::Relu)
      // Flat for x <= 0: the cotangent stops there, a non-finite one too
      // (as PyTorch's threshold_backward); a NaN input gives NaN.
      result.data[i] = std::isnan(x) ? x : x > 0.0 ? g : 0.0;
    else if (map == FeatureMap::EluPlusOne)
      result.data[i] = g * (x > 0.0 ? 1.0 : std::exp(x));
    else
      result.data[i] = g;
  }
  out = std::move(result);
  return Status::ok();
}

Status prefixSum(const Tensor &input, int64_t axis, Tensor &out, bool exclusive,
                 bool reverse) {
  const char *op = "prefixSum";
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  if (Status s = checkAxis(op, input, axis); !s)
    return s;
  Tensor result;
  if (Status s = allocate(op, input.shape, result); !s)
    return s;
  int64_t outer, len, inner;
  splitAxis(input.shape, axis, outer, len, inner);
  if (!result.data.empty())
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double acc = 0.0;
        for (int64_t step = 0; step < len; ++step) {
          int64_t p = reverse ? len - 1 - step : step;
          int64_t index = (o * len + p) * inner + i;
          if (exclusive) {
            result.data[index] = acc;
            acc += input.data[index];
          } else {
            acc += input.data[index];
            result.data[index] = acc;
          }
        }
      }
  out = std::move(result);
  return Status::ok();
}

namespace {
/// Applies `combine` to every pair of broadcast elements of lhs and rhs.
template <typename Combine>
Status broadcastBinary(const char *op, const Tensor &lhs, const Tensor &rhs,
                       Tensor &out, Combine combine) {
  if (Status s = checkTensor(op, "lhs", lhs); !s)
    return s;
  if (Status s = checkTensor(op, "rhs", rhs); !s)
    return s;
  Broadcast bc;
  if (!broadcastShapes({lhs.shape, rhs.shape}, bc))
    return fail(op, "shapes do not broadcast: lhs " + lhs.shapeString() +
                        ", rhs " + rhs.shapeString());
  Tensor result;
  if (Status s = allocate(op, bc.shape, result); !s)
    return s;
  for (size_t i = 0; i < result.data.size(); ++i) {
    int64_t flat = static_cast<int64_t>(i);
    result.data[i] =
        combine(lhs.data[bc.index(0, flat)], rhs.data[bc.index(1, flat)]);
  }
  out = std::move(result);
  return Status::ok();
}
} // namespace

Status add(const Tensor &lhs, const Tensor &rhs, Tensor &out) {
  return broadcastBinary("add", lhs, rhs, out,
                         [](double l, double r) { return l + r; });
}

Status mul(const Tensor &lhs, const Tensor &rhs, Tensor &out) {
  return broadcastBinary("mul", lhs, rhs, out,
                         [](double l, double r) { return l * r; });
}

Status div(const Tensor &lhs, const Tensor &rhs, double eps, Tensor &out) {
  if (Status s = checkEps("div", eps); !s)
    return s;
  return broadcastBinary("div", lhs, rhs, out,
                         [eps](double l, double r) { return l / (r + eps); });
}

Status reduceSum(const Tensor &input, int64_t axis, Tensor &out) {
  const char *op = "reduceSum";
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  if (Status s = checkAxis(op, input, axis); !s)
    return s;
  std::vector<int64_t> shape = input.shape;
  shape[axis] = 1;
  Tensor result;
  if (Status s = allocate(op, shape, result); !s)
    return s;
  int64_t outer, len, inner;
  splitAxis(input.shape, axis, outer, len, inner);
  for (int64_t o = 0; o < outer && !result.data.empty(); ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = 0.0;
      for (int64_t p = 0; p < len; ++p)
        acc += input.data[(o * len + p) * inner + i];
      result.data[o * inner + i] = acc;
    }
  out = std::move(result);
  return Status::ok();
}

/// True when `from` broadcasts to `to` unchanged: no more dims, and each
/// dim (right-aligned) 1 or equal.
static bool broadcastsTo(const std::vector<int64_t> &from,
                         const std::vector<int64_t> &to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[offset + d])
      return false;
  return true;
}

Status broadcastLike(const Tensor &input, const std::vector<int64_t> &shape,
                     Tensor &out) {
  const char *op = "broadcastLike";
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  if (!broadcastsTo(input.shape, shape))
    return fail(op, "input " + input.shapeString() + " does not broadcast to " +
                        formatShape(shape));
  Tensor result;
  if (Status s = allocate(op, shape, result); !s)
    return s;
  Broadcast bc; // bc.shape is `shape`
  broadcastShapes({input.shape, shape}, bc);
  for (size_t i = 0; i < result.data.size(); ++i)
    result.data[i] = input.data[bc.index(0, static_cast<int64_t>(i))];
  out = std::move(result);
  return Status::ok();
}

Status unbroadcast(const Tensor &input, const std::vector<int64_t> &shape,
                   Tensor &out) {
  const char *op = "unbroadcast";
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  if (!broadcastsTo(shape, input.shape))
    return fail(op, "shape " + formatShape(shape) +
                        " does not broadcast to input " + input.shapeString());
  Tensor result;
  if (Status s = allocate(op, shape, result); !s)
    return s;
  // Each input element adds into the element it was broadcast from.
  Broadcast bc; // bc.shape is input's
  broadcastShapes({shape, input.shape}, bc);
  for (size_t i = 0; i < input.data.size(); ++i)
    result.data[bc.index(0, static_cast<int64_t>(i))] += input.data[i];
  out = std::move(result);
  return Status::ok();
}

Status causalMask(const Tensor &input, double fill, Tensor &out) {
  const char *op = "causalMask";
  if (Status s = checkTensor(op, "input", input); !s)
    return s;
  if (Status s = checkRankAtLeast2(op, "input", input, "(..., n, m)"); !s)
    return s;
  Tensor result;
  if (Status s = allocate(op, input.shape, result); !s)
    return s;
  result.data = input.data;
  int64_t n = input.shape[input.rank() - 2], m = input.shape.back();
  if (!result.data.empty()) {
    int64_t batches = result.numElements() / (n * m);
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < m; ++j)
          result.data[(b * n + i) * m + j] = fill;
  }
  out = std::move(result);
  return Status::ok();
}

/// The shared loop of bilinearGather and gatherPixels: out (N, Lq, M, L, P,
/// D) with `sample` called once per (n, q, h, l, p) on the (x, y) pair, the
/// first element of head h at level l's first row, the level, the stride
/// between pixels (M x D), D, and the sample's D outputs (zero-initialized).
template <typename SampleFn>
static Status gatherSamples(const char *op, const Tensor &value,
                            const Tensor &samples,
                            const std::vector<SpatialLevel> &levels,
                            Tensor &out, SampleFn sample) {
  std::vector<int64_t> levelStart;
  if (Status s = checkSampling(op, value, samples, levels, levelStart); !s)
    return s;
  const int64_t batch = value.shape[0], lv = value.shape[1],
                heads = value.shape[2], depth = value.shape[3];
  const int64_t lq = samples.shape[1], numLevels = samples.shape[3],
                points = samples.shape[4];
  Tensor result;
  if (Status s =
          allocate(op, {batch, lq, heads, numLevels, points, depth}, result);
      !s)
    return s;
  if (!result.data.empty()) {
    double *o = result.data.data();
    const double *xy = samples.data.data();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t q = 0; q < lq; ++q)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t l = 0; l < numLevels; ++l) {
            const double *base = value.data.data() +
                                 ((n * lv + levelStart[l]) * heads + h) * depth;
            for (int64_t p = 0; p < points; ++p, xy += 2, o += depth)
              sample(xy, base, levels[l], heads * depth, depth, o);
          }
  }
  out = std::move(result);
  return Status::ok();
}

Status bilinearGather(const Tensor &value, const Tensor &locations,
                      const std::vector<SpatialLevel> &levels,
                      bool alignCorners, Tensor &out) {
  return gatherSamples(
      "bilinearGather", value, locations, levels, out,
      [&](const double *loc, const double *base, const SpatialLevel &level,
          int64_t rowStride, int64_t depth, double *o) {
        sampleAccumulate(base, rowStride, level.height, level.width, depth,
                         loc[0], loc[1], alignCorners, 1.0, o);
      });
}

Status gatherPixels(const Tensor &value, const Tensor &pixels,
                    const std::vector<SpatialLevel> &levels, Tensor &out) {
  return gatherSamples(
      "gatherPixels", value, pixels, levels, out,
      [&](const double *pixel, const double *base, const SpatialLevel &level,
          int64_t rowStride, int64_t depth, double *o) {
        double x = std::floor(pixel[0]), y = std::floor(pixel[1]);
        // Compared in double, so the int conversion below is in range;
        // NaN fails every comparison and gives 0 too.
        if (!(x >= 0.0 && x < double(level.width) && y >= 0.0 &&
              y < double(level.height)))
          return; // stays 0
        const double *src =
            base + (int64_t(y) * level.width + int64_t(x)) * rowStride;
        std::copy(src, src + depth, o);
      });
}

Status scatterPixels(const Tensor &cotangent, const Tensor &pixels,
                     const std::vector<SpatialLevel> &levels, Tensor &out) {
  const char *op = "scatterPixels";
  if (Status s = checkTensor(op, "cotangent", cotangent); !s)
    return s;
  if (Status s = checkTensor(op, "pixels", pixels); !s)
    return s;
  if (cotangent.rank() != 6)
    return fail(op, "cotangent must have rank 6 (N, Lq, M, L, P, D), got " +
                        cotangent.shapeString());
  if (pixels.rank() != 6)
    return fail(op, "pixels must have rank 6 (N, Lq, M, L, P, 2), got " +
                        pixels.shapeString());
  if (pixels.shape[5] != 2)
    return fail(op, "the last dim of pixels " + pixels.shapeString() +
                        " must be 2 (x, y), got " +
                        std::to_string(pixels.shape[5]));
  for (size_t d = 0; d < 5; ++d)
    if (pixels.shape[d] != cotangent.shape[d])
      return fail(op, "cotangent " + cotangent.shapeString() + " and pixels " +
                          pixels.shapeString() +
                          " must agree in (N, Lq, M, L, P)");
  if (pixels.shape[3] != static_cast<int64_t>(levels.size()))
    return fail(op, "pixels " + pixels.shapeString() +
                        " has L = " + std::to_string(pixels.shape[3]) +
                        " levels but the level list has " +
                        std::to_string(levels.size()));
  std::vector<int64_t> levelStart;
  int64_t lv;
  if (Status s = levelRows(op, levels, levelStart, lv); !s)
    return s;
  const int64_t batch = pixels.shape[0], lq = pixels.shape[1],
                heads = pixels.shape[2], numLevels = pixels.shape[3],
                points = pixels.shape[4], depth = cotangent.shape[5];
  Tensor result;
  if (Status s = allocate(op, {batch, lv, heads, depth}, result); !s)
    return s;
  if (!result.data.empty() && !cotangent.data.empty()) {
    const double *xy = pixels.data.data();
    const double *dy = cotangent.data.data();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t q = 0; q < lq; ++q)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t l = 0; l < numLevels; ++l)
            for (int64_t p = 0; p < points; ++p, xy += 2, dy += depth) {
              const SpatialLevel &level = levels[l];
              double x = std::floor(xy[0]), y = std::floor(xy[1]);
              // As in gatherPixels: compared in double, NaN fails too.
              if (!(x >= 0.0 && x < double(level.width) && y >= 0.0 &&
                    y < double(level.height)))
                continue;
              int64_t row =
                  levelStart[l] + int64_t(y) * level.width + int64_t(x);
              double *o =
                  result.data.data() + ((n * lv + row) * heads + h) * depth;
              for (int64_t d = 0; d < depth; ++d)
                o[d] += dy[d];
            }
  }
  out = std::move(result);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// High-level attention ops
//===----------------------------------------------------------------------===//

Status dotProductAttention(const Tensor &query, const Tensor &key,
                           const Tensor &value, const Tensor *mask,
                           const std::vector<NormStep> &steps, double scale,
                           FeatureMap map, bool causal, Tensor &out,
                           Tensor *lse) {
  const char *op = "dotProductAttention";
  Broadcast bc;
  if (Status s = checkQKV(op, "query", query, "key", key, "value", value, bc);
      !s)
    return s;
  const int64_t n = query.shape[query.rank() - 2], dk = query.shape.back();
  const int64_t m = key.shape[key.rank() - 2], dv = value.shape.back();
  if (mask)
    if (Status s = checkMask(op, *mask, query, key, value, bc); !s)
      return s;
  if (!validMap(map))
    return fail(op, "unknown feature map");
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!validKind(steps[i].kind))
      return fail(op, "step " + std::to_string(i) +
                          " has an unknown normalization kind");
    if (steps[i].axis != NormAxis::Keys && steps[i].axis != NormAxis::Queries)
      return fail(op, "step " + std::to_string(i) + " has an unknown axis");
    if (!(steps[i].eps >= 0.0) || !std::isfinite(steps[i].eps))
      return fail(op, "step " + std::to_string(i) +
                          ": eps must be a finite number >= 0, got " +
                          numStr(steps[i].eps));
  }
  if (lse) {
    int softmaxKeys = 0, others = 0;
    for (const NormStep &step : steps) {
      if (step.kind == NormKind::None)
        continue;
      if (step.kind == NormKind::Softmax && step.axis == NormAxis::Keys)
        ++softmaxKeys;
      else
        ++others;
    }
    if (softmaxKeys != 1 || others != 0)
      return fail(op, "the row log-sum-exp needs the steps to be one softmax "
                      "over keys (besides none steps)");
  }
  std::vector<int64_t> shape = bc.shape;
  shape.push_back(n);
  std::vector<int64_t> lseShape = shape;
  shape.push_back(dv);
  Tensor result, rowLse;
  if (Status s = allocate(op, shape, result); !s)
    return s;
  if (lse) {
    if (Status s = allocate(op, lseShape, rowLse); !s)
      return s;
  }
  if (!result.data.empty()) {
    int64_t scoreCount;
    if (!checkedMul(n, m, scoreCount))
      return fail(op, "the score matrix " + std::to_string(n) + "x" +
                          std::to_string(m) + " is too large");
    std::vector<double> phiQ, phiK, scores;
    try {
      phiQ.resize(query.data.size());
      phiK.resize(key.data.size());
      scores.resize(static_cast<size_t>(scoreCount));
    } catch (...) {
      return fail(op, "cannot allocate the " + std::to_string(n) + "x" +
                          std::to_string(m) + " score matrix");
    }
    for (size_t i = 0; i < phiQ.size(); ++i)
      phiQ[i] = applyMap(query.data[i], map);
    for (size_t i = 0; i < phiK.size(); ++i)
      phiK[i] = applyMap(key.data[i], map);
    // Visible keys of row i: [0, rowEnd(i)); visible queries of column j:
    // [colBegin(j), n).
    auto rowEnd = [&](int64_t i) { return causal ? std::min(i + 1, m) : m; };
    auto colBegin = [&](int64_t j) { return causal ? std::min(j, n) : 0; };
    int64_t batches = result.numElements() / (n * dv);
    for (int64_t b = 0; b < batches; ++b) {
      const double *q = phiQ.data() + bc.index(0, b) * n * dk;
      const double *k = phiK.data() + bc.index(1, b) * m * dk;
      const double *v = value.data.data() + bc.index(2, b) * m * dv;
      const double *msk =
          mask ? mask->data.data() + bc.index(3, b) * n * m : nullptr;
      double *s = scores.data();
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          if (j >= rowEnd(i)) {
            s[i * m + j] = 0.0;
            continue;
          }
          double acc = 0.0;
          for (int64_t d = 0; d < dk; ++d)
            acc += q[i * dk + d] * k[j * dk + d];
          acc *= scale;
          // A -inf mask entry hides its score whatever Q and K give (NaN
          // and inf included), as the kernels test the mask itself.
          if (msk)
            acc = msk[i * m + j] == -kInf ? -kInf : acc + msk[i * m + j];
          s[i * m + j] = acc;
        }
      // The log-sum-exp of the visible scores, before the steps.
      for (int64_t i = 0; lse && i < n; ++i)
        rowLse.data[b * n + i] = sliceLogSumExp(s + i * m, 1, 0, rowEnd(i));
      for (const NormStep &step : steps) {
        if (step.axis == NormAxis::Keys) {
          for (int64_t i = 0; i < n; ++i)
            normalizeSlice(s + i * m, 1, 0, rowEnd(i), m, step.kind, step.eps);
        } else {
          for (int64_t j = 0; j < m; ++j)
            normalizeSlice(s + j, m, colBegin(j), n, n, step.kind, step.eps);
        }
      }
      double *o = result.data.data() + b * n * dv;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j < rowEnd(i); ++j)
            acc += s[i * m + j] * v[j * dv + e];
          o[i * dv + e] = acc;
        }
    }
  }
  out = std::move(result);
  if (lse)
    *lse = std::move(rowLse);
  return Status::ok();
}

Status attentionGrad(const Tensor &query, const Tensor &key,
                     const Tensor &value, const Tensor &cotangent, double scale,
                     bool causal, Tensor &dQuery, Tensor &dKey, Tensor &dValue,
                     const Tensor *lse, const Tensor *mask,
                     const Tensor *output) {
  const char *op = "attentionGrad";
  Broadcast bc;
  if (Status s = checkQKV(op, "query", query, "key", key, "value", value, bc);
      !s)
    return s;
  if (mask)
    if (Status s = checkMask(op, *mask, query, key, value, bc); !s)
      return s;
  if (Status s = checkTensor(op, "cotangent", cotangent); !s)
    return s;
  if (!std::isfinite(scale))
    return fail(op, "scale must be finite, got " + numStr(scale));
  const int64_t n = query.shape[query.rank() - 2], dk = query.shape.back();
  const int64_t m = key.shape[key.rank() - 2], dv = value.shape.back();
  std::vector<int64_t> outShape = bc.shape;
  outShape.push_back(n);
  outShape.push_back(dv);
  if (cotangent.shape != outShape)
    return fail(op, "cotangent " + cotangent.shapeString() +
                        " must have the attention's result shape");
  if (lse) {
    if (Status s = checkTensor(op, "lse", *lse); !s)
      return s;
    std::vector<int64_t> lseShape(outShape.begin(), outShape.end() - 1);
    if (lse->shape != lseShape)
      return fail(op, "lse " + lse->shapeString() +
                          " must have one value per row of the attention's "
                          "result");
  }
  if (output) {
    if (!lse)
      return fail(op, "output (for D = rowsum(dO * O)) needs lse");
    if (Status s = checkTensor(op, "output", *output); !s)
      return s;
    if (output->shape != outShape)
      return fail(op, "output " + output->shapeString() +
                          " must have the attention's result shape");
  }
  auto withRows = [&](int64_t rows, int64_t cols) {
    std::vector<int64_t> shape = bc.shape;
    shape.push_back(rows);
    shape.push_back(cols);
    return shape;
  };
  Tensor dq, dk_, dv_;
  if (Status s = allocate(op, withRows(n, dk), dq); !s)
    return s;
  if (Status s = allocate(op, withRows(m, dk), dk_); !s)
    return s;
  if (Status s = allocate(op, withRows(m, dv), dv_); !s)
    return s;
  int64_t batches = 1;
  for (int64_t d : bc.shape)
    batches *= d;
  if (n > 0 && m > 0 && batches > 0) {
    int64_t scoreCount;
    if (!checkedMul(n, m, scoreCount))
      return fail(op, "the score matrix " + std::to_string(n) + "x" +
                          std::to_string(m) + " is too large");
    std::vector<double> p, dp;
    try {
      p.resize(static_cast<size_t>(scoreCount));
      dp.resize(static_cast<size_t>(scoreCount));
    } catch (...) {
      return fail(op, "cannot allocate the " + std::to_string(n) + "x" +
                          std::to_string(m) + " score matrices");
    }
    auto rowEnd = [&](int64_t i) { return causal ? std::min(i + 1, m) : m; };
    for (int64_t b = 0; b < batches; ++b) {
      const double *q = query.data.data() + bc.index(0, b) * n * dk;
      const double *k = key.data.data() + bc.index(1, b) * m * dk;
      const double *v = value.data.data() + bc.index(2, b) * m * dv;
      const double *dO = cotangent.data.data() + b * n * dv;
      double *gq = dq.data.data() + b * n * dk;
      double *gk = dk_.data.data() + b * m * dk;
      double *gv = dv_.data.data() + b * m * dv;
      const double *savedLse = lse ? lse->data.data() + b * n : nullptr;
      const double *savedOut =
          output ? output->data.data() + b * n * dv : nullptr;
      const double *msk =
          mask ? mask->data.data() + bc.index(3, b) * n * m : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        double *pi = p.data() + i * m, *dpi = dp.data() + i * m;
        for (int64_t j = 0; j < rowEnd(i); ++j) {
          double acc = 0.0;
          for (int64_t d = 0; d < dk; ++d)
            acc += q[i * dk + d] * k[j * dk + d];
          acc *= scale;
          // A -inf mask entry hides its score whatever Q and K give, as in
          // the forward.
          if (msk)
            acc = msk[i * m + j] == -kInf ? -kInf : acc + msk[i * m + j];
          pi[j] = acc;
        }
        // P from the saved log-sum-exp (+inf: an empty row, P = 0), else by
        // the forward's rule, non-finite scores included (hidden entries
        // 0); the rest is IEEE arithmetic over every (i, j).
        if (savedLse) {
          // A masked score is -inf: P = 0, or NaN in a NaN row (lse NaN).
          for (int64_t j = 0; j < rowEnd(i); ++j)
            pi[j] = savedLse[i] == kInf ? 0.0 : std::exp(pi[j] - savedLse[i]);
        } else {
          normalizeSlice(pi, 1, 0, rowEnd(i), m, NormKind::Softmax, 0.0);
        }
        // D_i = sum_j P_ij dP_ij with dP = dO V^T, or rowsum(dO * O) of
        // the saved output.
        double rowDot = 0.0;
        for (int64_t j = 0; j < m; ++j) {
          double acc = 0.0;
          for (int64_t e = 0; e < dv; ++e)
            acc += dO[i * dv + e] * v[j * dv + e];
          dpi[j] = acc;
          rowDot += pi[j] * acc;
        }
        if (savedOut) {
          rowDot = 0.0;
          for (int64_t e = 0; e < dv; ++e)
            rowDot += dO[i * dv + e] * savedOut[i * dv + e];
        }
        for (int64_t j = 0; j < m; ++j)
          dpi[j] = pi[j] * (dpi[j] - rowDot); // dS
      }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          double ds = dp[i * m + j] * scale, pij = p[i * m + j];
          for (int64_t d = 0; d < dk; ++d) {
            gq[i * dk + d] += ds * k[j * dk + d];
            gk[j * dk + d] += ds * q[i * dk + d];
          }
          for (int64_t e = 0; e < dv; ++e)
            gv[j * dv + e] += pij * dO[i * dv + e];
        }
    }
  }
  dQuery = std::move(dq);
  dKey = std::move(dk_);
  dValue = std::move(dv_);
  return Status::ok();
}

Status efficientAttention(const Tensor &query, const Tensor &key,
                          const Tensor &value, EfficientVariant variant,
                          Tensor &out, Tensor *contextOut, Tensor *keyLseOut) {
  const char *op = "efficientAttention";
  Broadcast bc;
  if (Status s = checkQKV(op, "query", query, "key", key, "value", value, bc);
      !s)
    return s;
  if (variant != EfficientVariant::Softmax &&
      variant != EfficientVariant::Scaling)
    return fail(op, "unknown variant");
  const int64_t n = query.shape[query.rank() - 2], dk = query.shape.back();
  const int64_t m = key.shape[key.rank() - 2], dv = value.shape.back();
  std::vector<int64_t> shape = bc.shape;
  shape.push_back(n);
  shape.push_back(dv);
  Tensor result, contexts, keyLses;
  if (Status s = allocate(op, shape, result); !s)
    return s;
  if (contextOut) {
    std::vector<int64_t> contextShape = bc.shape;
    contextShape.push_back(dk);
    contextShape.push_back(dv);
    if (Status s = allocate(op, contextShape, contexts); !s)
      return s;
  }
  if (keyLseOut) {
    if (variant != EfficientVariant::Softmax)
      return fail(op, "the key log-sum-exp is the softmax variant's");
    std::vector<int64_t> lseShape = bc.shape;
    lseShape.push_back(1);
    lseShape.push_back(dk);
    if (Status s = allocate(op, lseShape, keyLses); !s)
      return s;
  }
  // (With no queries there is still a context to return.)
  if (!result.data.empty() || !contexts.data.empty() || !keyLses.data.empty()) {
    int64_t contextCount;
    if (!checkedMul(dk, dv, contextCount))
      return fail(op, "the context matrix " + std::to_string(dk) + "x" +
                          std::to_string(dv) + " is too large");
    std::vector<double> rhoQ, rhoK, context;
    try {
      rhoQ.resize(static_cast<size_t>(n * dk));
      rhoK.resize(static_cast<size_t>(m * dk));
      context.resize(static_cast<size_t>(contextCount));
    } catch (...) {
      return fail(op, "cannot allocate the temporaries");
    }
    const double invSqrtN = 1.0 / std::sqrt(static_cast<double>(n));
    int64_t batches = 1;
    for (int64_t size : bc.shape)
      batches *= size;
    for (int64_t b = 0; b < batches; ++b) {
      const double *q = query.data.data() + bc.index(0, b) * n * dk;
      const double *k = key.data.data() + bc.index(1, b) * m * dk;
      const double *v = value.data.data() + bc.index(2, b) * m * dv;
      if (variant == EfficientVariant::Softmax) {
        for (int64_t d = 0; keyLseOut && d < dk; ++d)
          keyLses.data[b * dk + d] = sliceLogSumExp(k + d, dk, 0, m);
        std::copy(q, q + n * dk, rhoQ.begin());
        std::copy(k, k + m * dk, rhoK.begin());
        for (int64_t i = 0; i < n; ++i)
          normalizeSlice(rhoQ.data() + i * dk, 1, 0, dk, dk, NormKind::Softmax,
                         0.0);
        for (int64_t d = 0; d < dk; ++d)
          normalizeSlice(rhoK.data() + d, dk, 0, m, m, NormKind::Softmax, 0.0);
      } else {
        for (int64_t i = 0; i < n * dk; ++i)
          rhoQ[i] = q[i] * invSqrtN;
        for (int64_t i = 0; i < m * dk; ++i)
          rhoK[i] = k[i] * invSqrtN;
      }
      // context = rhoK^T V (dk x dv).
      multiply(rhoK.data(), /*transposeA=*/true, v, false, dk, m, dv,
               context.data());
      multiply(rhoQ.data(), false, context.data(), false, n, dk, dv,
               result.data.data() + b * n * dv);
      if (contextOut)
        std::copy(context.begin(), context.end(),
                  contexts.data.data() + b * dk * dv);
    }
  }
  out = std::move(result);
  if (contextOut)
    *contextOut = std::move(contexts);
  if (keyLseOut)
    *keyLseOut = std::move(keyLses);
  return Status::ok();
}

Status externalAttention(const Tensor &input, const Tensor &memoryKey,
                         const Tensor &memoryValue, double eps, Tensor &out) {
  const char *op = "externalAttention";
  Broadcast bc;
  if (Status s = checkQKV(op, "input", input, "memoryKey", memoryKey,
                          "memoryValue", memoryValue, bc);
      !s)
    return s;
  if (Status s = checkEps(op, eps); !s)
    return s;
  const int64_t n = input.shape[input.rank() - 2], d = input.shape.back();
  const int64_t slots = memoryKey.shape[memoryKey.rank() - 2],
                dv = memoryValue.shape.back();
  std::vector<int64_t> shape = bc.shape;
  shape.push_back(n);
  shape.push_back(dv);
  Tensor result;
  if (Status s = allocate(op, shape, result); !s)
    return s;
  if (!result.data.empty()) {
    int64_t attnCount;
    if (!checkedMul(n, slots, attnCount))
      return fail(op, "the attention matrix " + std::to_string(n) + "x" +
                          std::to_string(slots) + " is too large");
    std::vector<double> a;
    try {
      a.resize(static_cast<size_t>(attnCount));
    } catch (...) {
      return fail(op, "cannot allocate the " + std::to_string(n) + "x" +
                          std::to_string(slots) + " attention matrix");
    }
    int64_t batches = result.numElements() / (n * dv);
    for (int64_t b = 0; b < batches; ++b) {
      const double *x = input.data.data() + bc.index(0, b) * n * d;
      const double *mk = memoryKey.data.data() + bc.index(1, b) * slots * d;
      const double *mv = memoryValue.data.data() + bc.index(2, b) * slots * dv;
      multiply(x, false, mk, /*transposeB=*/true, n, d, slots, a.data());
      for (int64_t s = 0; s < slots; ++s)
        normalizeSlice(a.data() + s, slots, 0, n, n, NormKind::Softmax, 0.0);
      for (int64_t i = 0; i < n; ++i)
        normalizeSlice(a.data() + i * slots, 1, 0, slots, slots, NormKind::Sum,
                       eps);
      multiply(a.data(), false, mv, false, n, slots, dv,
               result.data.data() + b * n * dv);
    }
  }
  out = std::move(result);
  return Status::ok();
}

/// The operands of deformable attention (and of its gradient): value,
/// locations and levels (checkSampling, which fills levelStart) and
/// weights of the locations' (N, Lq, M, L, P).
static Status checkDeformable(const char *op, const Tensor &value,
                              const Tensor &locations, const Tensor &weights,
                              const std::vector<SpatialLevel> &levels,
                              std::vector<int64_t> &levelStart) {
  if (Status s = checkSampling(op, value, locations, levels, levelStart); !s)
    return s;
  if (Status s = checkTensor(op, "weights", weights); !s)
    return s;
  std::vector<int64_t> expected(locations.shape.begin(),
                                locations.shape.end() - 1);
  if (weights.shape != expected)
    return fail(op, "weights " + weights.shapeString() + " must have shape " +
                        formatShape(expected) +
                        " (N, Lq, M, L, P) to match locations " +
                        locations.shapeString());
  return Status::ok();
}

Status deformableAttention(const Tensor &value, const Tensor &locations,
                           const Tensor &weights,
                           const std::vector<SpatialLevel> &levels,
                           bool alignCorners, Tensor &out) {
  const char *op = "deformableAttention";
  std::vector<int64_t> levelStart;
  if (Status s = checkDeformable(op, value, locations, weights, levels,
                                 levelStart);
      !s)
    return s;
  const int64_t batch = value.shape[0], lv = value.shape[1],
                heads = value.shape[2], depth = value.shape[3];
  const int64_t lq = locations.shape[1], numLevels = locations.shape[3],
                points = locations.shape[4];
  int64_t channels;
  if (!checkedMul(heads, depth, channels))
    return fail(op, "M*D overflows for value " + value.shapeString());
  Tensor result;
  if (Status s = allocate(op, {batch, lq, channels}, result); !s)
    return s;
  if (!result.data.empty()) {
    const double *loc = locations.data.data();
    const double *w = weights.data.data();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t q = 0; q < lq; ++q)
        for (int64_t h = 0; h < heads; ++h) {
          double *o = result.data.data() + (n * lq + q) * channels + h * depth;
          for (int64_t l = 0; l < numLevels; ++l) {
            const double *base = value.data.data() +
                                 ((n * lv + levelStart[l]) * heads + h) * depth;
            for (int64_t p = 0; p < points; ++p) {
              sampleAccumulate(base, heads * depth, levels[l].height,
                               levels[l].width, depth, loc[0], loc[1],
                               alignCorners, *w, o);
              loc += 2;
              ++w;
            }
          }
        }
  }
  out = std::move(result);
  return Status::ok();
}

Status deformableGrad(const Tensor &value, const Tensor &locations,
                      const Tensor &weights, const Tensor &cotangent,
                      const std::vector<SpatialLevel> &levels,
                      bool alignCorners, Tensor &dValue, Tensor &dLocations,
                      Tensor &dWeights) {
  const char *op = "deformableGrad";
  std::vector<int64_t> levelStart;
  if (Status s = checkDeformable(op, value, locations, weights, levels,
                                 levelStart);
      !s)
    return s;
  if (Status s = checkTensor(op, "cotangent", cotangent); !s)
    return s;
  const int64_t batch = value.shape[0], lv = value.shape[1],
                heads = value.shape[2], depth = value.shape[3];
  const int64_t lq = locations.shape[1], numLevels = locations.shape[3],
                points = locations.shape[4];
  int64_t channels;
  if (!checkedMul(heads, depth, channels))
    return fail(op, "M*D overflows for value " + value.shapeString());
  if (cotangent.shape != std::vector<int64_t>{batch, lq, channels})
    return fail(op, "cotangent " + cotangent.shapeString() +
                        " must have the result shape " +
                        formatShape({batch, lq, channels}) + " (N, Lq, M*D)");
  Tensor dv, dloc, dw;
  if (Status s = allocate(op, value.shape, dv); !s)
    return s;
  if (Status s = allocate(op, locations.shape, dloc); !s)
    return s;
  if (Status s = allocate(op, weights.shape, dw); !s)
    return s;
  if (!dw.data.empty() && depth > 0) {
    const double *loc = locations.data.data();
    const double *w = weights.data.data();
    double *gloc = dloc.data.data(), *gw = dw.data.data();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t q = 0; q < lq; ++q)
        for (int64_t h = 0; h < heads; ++h) {
          const double *g =
              cotangent.data.data() + (n * lq + q) * channels + h * depth;
          for (int64_t l = 0; l < numLevels; ++l) {
            const int64_t height = levels[l].height, width = levels[l].width;
            const int64_t first = (n * lv + levelStart[l]) * heads + h;
            for (int64_t p = 0; p < points;
                 ++p, loc += 2, gloc += 2, ++w, ++gw) {
              double x = loc[0], y = loc[1];
              if (!std::isfinite(x) || !std::isfinite(y) || height <= 0 ||
                  width <= 0)
                continue;
              double wd = double(width), hd = double(height);
              double sx = alignCorners ? wd - 1.0 : wd;
              double sy = alignCorners ? hd - 1.0 : hd;
              double px = alignCorners ? x * sx : x * wd - 0.5;
              double py = alignCorners ? y * sy : y * hd - 0.5;
              // As in sampleAccumulate: no corner inside otherwise.
              if (!(px >= -1.0 && px < wd && py >= -1.0 && py < hd))
                continue;
              double fx0 = std::floor(px), fy0 = std::floor(py);
              int64_t x0 = int64_t(fx0), y0 = int64_t(fy0);
              double fx = px - fx0, fy = py - fy0;
              const double wx[2] = {1.0 - fx, fx}, wy[2] = {1.0 - fy, fy};
              const double sign[2] = {-1.0, 1.0};
              double gx = 0.0, gy = 0.0, gWeight = 0.0;
              for (int cy = 0; cy < 2; ++cy)
                for (int cx = 0; cx < 2; ++cx) {
                  int64_t xc = x0 + cx, yc = y0 + cy;
                  if (xc < 0 || xc >= width || yc < 0 || yc >= height)
                    continue;
                  int64_t row = (first + (yc * width + xc) * heads) * depth;
                  const double *v = value.data.data() + row;
                  double *dvRow = dv.data.data() + row;
                  double dot = 0.0, scatter = *w * wx[cx] * wy[cy];
                  for (int64_t d = 0; d < depth; ++d) {
                    dot += v[d] * g[d];
                    dvRow[d] += scatter * g[d];
                  }
                  gWeight += wx[cx] * wy[cy] * dot;
                  gx += sign[cx] * wy[cy] * dot;
                  gy += wx[cx] * sign[cy] * dot;
                }
              gloc[0] = *w * sx * gx;
              gloc[1] = *w * sy * gy;
              *gw = gWeight;
            }
          }
        }
  }
  dValue = std::move(dv);
  dLocations = std::move(dloc);
  dWeights = std::move(dw);
  return Status::ok();
}

} // namespace attn::runtime
