//===- RuntimeTest.cpp - Unit tests of the reference kernels
//---------------===//
//
// Small hand-computed cases for every op, identities between the high-level
// ops and their decompositions into primitives, and every error class.
// Tolerances: hand-computed values 1e-14 absolute + relative; identities on
// random inputs 1e-12 relative (all arithmetic is double).
//
//===----------------------------------------------------------------------===//

#include "runtime/Precision.h"
#include "runtime/Reference.h"
#include "runtime/Tensor.h"

#include "test/unit/StatusMatchers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

using namespace attn::runtime;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kE = std::exp(1.0);

Tensor T(std::vector<int64_t> shape, std::vector<double> data) {
  return Tensor(std::move(shape), std::move(data));
}

Tensor random(std::vector<int64_t> shape, uint64_t seed, double low = -1.0,
              double high = 1.0) {
  Tensor t(std::move(shape));
  fillUniform(t, seed, low, high);
  return t;
}

/// Shapes equal and every element within tol * max(1, |expected|).
void expectClose(const Tensor &actual, const Tensor &expected,
                 double tol = 1e-14) {
  ASSERT_EQ(actual.shape, expected.shape)
      << actual.shapeString() << " vs " << expected.shapeString();
  ASSERT_EQ(actual.data.size(), expected.data.size());
  for (size_t i = 0; i < actual.data.size(); ++i) {
    double e = expected.data[i];
    if (std::isinf(e)) {
      EXPECT_EQ(actual.data[i], e) << "at flat index " << i;
      continue;
    }
    EXPECT_NEAR(actual.data[i], e, tol * std::max(1.0, std::fabs(e)))
        << "at flat index " << i;
  }
}

void expectValues(const Tensor &actual, std::vector<int64_t> shape,
                  std::vector<double> values, double tol = 1e-14) {
  expectClose(actual, T(std::move(shape), std::move(values)), tol);
}

/// Relative comparison for identities: |a - e| <= tol * max|e| over the
/// tensor (the scale of the values), elementwise.
void expectIdentity(const Tensor &actual, const Tensor &expected,
                    double tol = 1e-12) {
  ASSERT_EQ(actual.shape, expected.shape)
      << actual.shapeString() << " vs " << expected.shapeString();
  double scaleMax = 0.0;
  for (double e : expected.data)
    scaleMax = std::max(scaleMax, std::fabs(e));
  ASSERT_GT(scaleMax, 0.0);
  for (size_t i = 0; i < actual.data.size(); ++i)
    EXPECT_NEAR(actual.data[i], expected.data[i], tol * scaleMax)
        << "at flat index " << i;
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

TEST(TensorTest, ShapeStringAndCounts) {
  EXPECT_EQ(Tensor({2, 3, 4}).shapeString(), "2x3x4");
  EXPECT_EQ(Tensor(std::vector<int64_t>{}).shapeString(), "scalar");
  EXPECT_EQ(Tensor(std::vector<int64_t>{}).numElements(), 1);
  EXPECT_EQ(Tensor({0, 5}).numElements(), 0);
  EXPECT_EQ(checkedNumElements({}), 1);
  EXPECT_EQ(checkedNumElements({2, 3, 4}), 24);
  EXPECT_EQ(checkedNumElements({2, -1}), -1);
  EXPECT_EQ(checkedNumElements({int64_t(1) << 62, 4}), -1);
  EXPECT_EQ(checkedNumElements({int64_t(1) << 62, 2}), -1);
  EXPECT_EQ(checkedNumElements({int64_t(1) << 61, 2}), int64_t(1) << 62);
  EXPECT_EQ(checkedNumElements({0, int64_t(1) << 62, int64_t(1) << 62}), 0);
  Tensor zeros({2, 2});
  EXPECT_EQ(zeros.data, std::vector<double>(4, 0.0));
  // An overflowing shape does not crash; the tensor is rejected later.
  Tensor huge({int64_t(1) << 62, 4});
  EXPECT_TRUE(huge.data.empty());
}

TEST(TensorTest, FillUniformIsSplitMix64) {
  Tensor t({1000});
  fillUniform(t, 0);
  // splitmix64(seed 0) first output is 0xe220a8397b1dcdaf.
  EXPECT_EQ(t.data[0], double(0xe220a8397b1dcdafull >> 11) * 0x1.0p-53);
  for (double v : t.data) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
  Tensor same({1000}), other({1000}), ranged({1000});
  fillUniform(same, 0);
  fillUniform(other, 1);
  fillUniform(ranged, 0, -2.0, 3.0);
  EXPECT_EQ(t.data, same.data);
  EXPECT_NE(t.data, other.data);
  for (size_t i = 0; i < t.data.size(); ++i) {
    EXPECT_DOUBLE_EQ(ranged.data[i], -2.0 + 5.0 * t.data[i]);
    EXPECT_GE(ranged.data[i], -2.0);
    EXPECT_LT(ranged.data[i], 3.0);
  }
}

//===----------------------------------------------------------------------===//
// Primitive ops
//===----------------------------------------------------------------------===//

// Rounding straight from double to bf16, f16 and f32: to nearest, ties to
// even, gradual underflow, overflow to infinity.
TEST(PrecisionTest, RoundsToNearestEven) {
  using E = ElementType;
  // bf16 has 8 significand bits: the spacing above 1 is 2^-7.
  EXPECT_EQ(roundTo(E::BFloat16, 1 + 0x1p-8), 1.0);               // tie to even
  EXPECT_EQ(roundTo(E::BFloat16, 1 + 3 * 0x1p-8), 1 + 0x1p-6);    // tie to even
  EXPECT_EQ(roundTo(E::BFloat16, 1 + 0x1p-8 + 0x1p-30), 1 + 0x1p-7); // above
  EXPECT_EQ(roundTo(E::BFloat16, 0.1), 0.10009765625);
  EXPECT_EQ(roundTo(E::BFloat16, 257.0), 256.0);
  EXPECT_EQ(roundTo(E::BFloat16, 259.0), 260.0);
  EXPECT_EQ(roundTo(E::BFloat16, -0x1.fe8p127), -0x1.fep127); // max finite
  // The midpoint above the largest finite value rounds to even, 2^128:
  // infinity.
  EXPECT_EQ(roundTo(E::BFloat16, 0x1.ffp127),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(roundTo(E::BFloat16, 0x1.8p-133), 0x1p-132); // subnormal tie
  // f16: 11 significand bits, normals from 2^-14, max 65504.
  EXPECT_EQ(roundTo(E::Float16, 0.1), 0x1.998p-4);
  EXPECT_EQ(roundTo(E::Float16, 2049.0), 2048.0);
  EXPECT_EQ(roundTo(E::Float16, 2051.0), 2052.0);
  EXPECT_EQ(roundTo(E::Float16, 65519.0), 65504.0);
  EXPECT_EQ(roundTo(E::Float16, 65520.0),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(roundTo(E::Float16, 0x1.4p-24), 0x1p-24); // subnormal spacing
  EXPECT_EQ(roundTo(E::Float16, 0x1p-26), 0.0);
  // f32 from double, without double rounding.
  EXPECT_EQ(roundTo(E::Float32, 0.1), double(0.1f));
  EXPECT_EQ(roundTo(E::Float64, 0.1), 0.1);
  // Zeros keep their sign; NaN and infinities pass.
  EXPECT_TRUE(std::signbit(roundTo(E::BFloat16, -0.0)));
  EXPECT_TRUE(std::isnan(roundTo(E::Float16, std::nan(""))));
  EXPECT_EQ(roundTo(E::Float16, -std::numeric_limits<double>::infinity()),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(unitRoundoff(E::BFloat16), 0x1p-8);
  EXPECT_EQ(unitRoundoff(E::Float16), 0x1p-11);
  EXPECT_EQ(unitRoundoff(E::Float32), 0x1p-24);
}

// Every f16 bit pattern decodes and encodes back to itself (NaNs to NaN).
TEST(PrecisionTest, Float16BitsRoundTrip) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double value = fromFloat16Bits(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_EQ((bits >> 10) & 0x1f, 0x1fu);
      continue;
    }
    EXPECT_EQ(roundTo(ElementType::Float16, value), value) << bits;
    EXPECT_EQ(float16Bits(value), bits) << bits;
  }
}

TEST(MatmulTest, HandComputed) {
  Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = T({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor out;
  ASSERT_OK(matmul(a, b, false, false, out));
  expectValues(out, {2, 2}, {58, 64, 139, 154});
  // a^T (3x2) x a (2x3).
  ASSERT_OK(matmul(a, a, true, false, out));
  expectValues(out, {3, 3}, {17, 22, 27, 22, 29, 36, 27, 36, 45});
  // a x a^T.
  ASSERT_OK(matmul(a, a, false, true, out));
  expectValues(out, {2, 2}, {14, 32, 32, 77});
  // b^T x a^T = (a b)^T.
  ASSERT_OK(matmul(b, a, true, true, out));
  expectValues(out, {2, 2}, {58, 139, 64, 154});
}

TEST(MatmulTest, BroadcastsLeadingDims) {
  // lhs (2, 1, 1, 2), rhs (3, 2, 1) -> (2, 3, 1, 1).
  Tensor lhs = T({2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor rhs = T({3, 2, 1}, {1, 0, 0, 1, 1, 1});
  Tensor out;
  ASSERT_OK(matmul(lhs, rhs, false, false, out));
  expectValues(out, {2, 3, 1, 1}, {1, 2, 3, 3, 4, 7});
  // Rank-2 rhs against batched lhs.
  ASSERT_OK(matmul(lhs, T({2, 1}, {1, 1}), false, false, out));
  expectValues(out, {2, 1, 1, 1}, {3, 7});
}

TEST(MatmulTest, Errors) {
  Tensor out = T({1}, {42});
  EXPECT_ERROR(
      matmul(T({3}, {1, 2, 3}), T({3, 1}, {1, 2, 3}), false, false, out),
      "matmul", "lhs", "rank >= 2", "3");
  EXPECT_ERROR(matmul(Tensor({2, 3}), Tensor({2, 3}), false, false, out),
               "matmul", "contraction", "2x3", "K = 3", "K = 2");
  EXPECT_ERROR(matmul(Tensor({2, 2, 3}), Tensor({3, 3, 1}), false, false, out),
               "matmul", "broadcast", "2x2x3", "3x3x1");
  EXPECT_ERROR(matmul(T({2, 2}, {1, 2, 3}), Tensor({2, 2}), false, false, out),
               "matmul", "2x2", "4 elements", "3 values");
  EXPECT_ERROR(
      matmul(T({int64_t(1) << 62, 4}, {}), Tensor({4, 1}), false, false, out),
      "matmul", "too many elements");
  // `out` is untouched on error.
  expectValues(out, {1}, {42});
}

TEST(EmptyTest, ZeroDimsNextToHugeDims) {
  // Zero elements, but products of the other dims overflow int64: every op
  // must return an empty result without overflowing.
  const int64_t big = int64_t(1) << 62;
  Tensor empty({0, big, big, 1, 1});
  ASSERT_TRUE(empty.data.empty());
  Tensor out;
  ASSERT_OK(normalize(empty, NormKind::Softmax, 0, 0, out));
  EXPECT_EQ(out.shape, empty.shape);
  EXPECT_TRUE(out.data.empty());
  ASSERT_OK(prefixSum(empty, 4, out));
  ASSERT_OK(matmul(empty, Tensor({1, 1}), false, false, out));
  EXPECT_EQ(out.shape, empty.shape);
  ASSERT_OK(add(empty, Tensor({1, 1, 1, 1}), out));
  EXPECT_EQ(out.shape, empty.shape);
  ASSERT_OK(dotProductAttention(empty, Tensor({3, 1}), Tensor({3, 2}), nullptr,
                                {{NormKind::Softmax, NormAxis::Keys}}, 1.0,
                                FeatureMap::Identity, true, out));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{0, big, big, 1, 2}));
  // m = 0 keys: softmax over an empty slice gives an all-zero output.
  ASSERT_OK(dotProductAttention(T({2, 1}, {1, 2}), Tensor({0, 1}),
                                Tensor({0, 3}), nullptr,
                                {{NormKind::Softmax, NormAxis::Keys}}, 1.0,
                                FeatureMap::Identity, false, out));
  expectValues(out, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(NormalizeTest, Softmax) {
  Tensor out;
  ASSERT_OK(
      normalize(T({2}, {0, std::log(3.0)}), NormKind::Softmax, 0, 0, out));
  expectValues(out, {2}, {0.25, 0.75});
  // Large values: the max is subtracted first.
  ASSERT_OK(normalize(T({2}, {1000, 1000 + std::log(3.0)}), NormKind::Softmax,
                      0, 0, out));
  expectValues(out, {2}, {0.25, 0.75}, 1e-12);
  // -inf is masked; an all -inf slice is zeros, not NaN.
  ASSERT_OK(normalize(T({2, 3}, {-kInf, 0, std::log(3.0), -kInf, -kInf, -kInf}),
                      NormKind::Softmax, 1, 0, out));
  expectValues(out, {2, 3}, {0, 0.25, 0.75, 0, 0, 0});
  // Axis 0 of a 2x2 normalizes columns.
  ASSERT_OK(normalize(T({2, 2}, {0, 1, std::log(3.0), 1}), NormKind::Softmax, 0,
                      0, out));
  expectValues(out, {2, 2}, {0.25, 0.5, 0.75, 0.5});
  // A middle axis of a 3-D tensor.
  ASSERT_OK(normalize(T({1, 2, 2}, {0, 5, std::log(3.0), 5}), NormKind::Softmax,
                      1, 0, out));
  expectValues(out, {1, 2, 2}, {0.25, 0.5, 0.75, 0.5});
}

TEST(NormalizeTest, SumCountNone) {
  Tensor out;
  ASSERT_OK(normalize(T({2, 2}, {1, 3, 2, 2}), NormKind::Sum, 1, 1.0, out));
  expectValues(out, {2, 2}, {0.2, 0.6, 0.4, 0.4});
  ASSERT_OK(normalize(T({2, 2}, {1, 3, 2, 2}), NormKind::Sum, 0, 0.0, out));
  expectValues(out, {2, 2}, {1.0 / 3, 0.6, 2.0 / 3, 0.4});
  ASSERT_OK(normalize(T({2, 2}, {2, 4, 6, 8}), NormKind::Count, 1, 0, out));
  expectValues(out, {2, 2}, {1, 2, 3, 4});
  ASSERT_OK(normalize(T({3, 1}, {3, 6, 9}), NormKind::Count, 0, 0, out));
  expectValues(out, {3, 1}, {1, 2, 3});
  ASSERT_OK(normalize(T({2}, {5, -7}), NormKind::None, 0, 0, out));
  expectValues(out, {2}, {5, -7});
}

TEST(NormalizeTest, Errors) {
  Tensor out;
  EXPECT_ERROR(normalize(Tensor({2, 3}), NormKind::Softmax, 2, 0, out),
               "normalize", "axis 2", "2x3");
  EXPECT_ERROR(normalize(Tensor({2, 3}), NormKind::Softmax, -1, 0, out),
               "normalize", "axis -1");
  EXPECT_ERROR(normalize(T({}, {1}), NormKind::Softmax, 0, 0, out), "normalize",
               "axis 0", "scalar");
  EXPECT_ERROR(normalize(Tensor({2}), NormKind::Sum, 0, -1e-9, out),
               "normalize", "eps", "-1e-09");
  EXPECT_ERROR(normalize(Tensor({2}), NormKind::Sum, 0, kNaN, out), "normalize",
               "eps");
}

TEST(ElementwiseTest, ScaleFeatureMapPrefixSumAddCausalMask) {
  Tensor out;
  ASSERT_OK(scale(T({3}, {1, -2, 0.5}), -2.0, out));
  expectValues(out, {3}, {-2, 4, -1});

  ASSERT_OK(featureMap(T({4}, {-1, 0, 2, -kInf}), FeatureMap::EluPlusOne, out));
  expectValues(out, {4}, {std::exp(-1.0), 1, 3, 0});
  ASSERT_OK(featureMap(T({3}, {-1, 0, 2}), FeatureMap::Relu, out));
  expectValues(out, {3}, {0, 0, 2});
  ASSERT_OK(featureMap(T({3}, {-1, 0, 2}), FeatureMap::Identity, out));
  expectValues(out, {3}, {-1, 0, 2});

  Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_OK(prefixSum(x, 1, out));
  expectValues(out, {2, 3}, {1, 3, 6, 4, 9, 15});
  ASSERT_OK(prefixSum(x, 0, out));
  expectValues(out, {2, 3}, {1, 2, 3, 5, 7, 9});
  EXPECT_ERROR(prefixSum(x, 2, out), "prefixSum", "axis 2", "2x3");

  // (2, 1) + (3) -> (2, 3); scalar + (2).
  ASSERT_OK(add(T({2, 1}, {10, 20}), T({3}, {1, 2, 3}), out));
  expectValues(out, {2, 3}, {11, 12, 13, 21, 22, 23});
  ASSERT_OK(add(T({}, {1}), T({2}, {1, 2}), out));
  expectValues(out, {2}, {2, 3});
  EXPECT_ERROR(add(Tensor({2, 3}), Tensor({2}), out), "add", "broadcast", "2x3",
               "lhs", "rhs");

  ASSERT_OK(causalMask(T({2, 3}, {1, 2, 3, 4, 5, 6}), -kInf, out));
  expectValues(out, {2, 3}, {1, -kInf, -kInf, 4, 5, -kInf});
  ASSERT_OK(causalMask(T({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
                       0.0, out));
  expectValues(out, {2, 3, 2}, {1, 0, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12});
  EXPECT_ERROR(causalMask(Tensor({3}), 0.0, out), "causalMask", "rank >= 2",
               "3");

  // The output may alias the input.
  Tensor y = T({2}, {1, 2});
  ASSERT_OK(scale(y, 3.0, y));
  expectValues(y, {2}, {3, 6});
}

TEST(ElementwiseTest, ExclusivePrefixSum) {
  Tensor out;
  Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_OK(prefixSum(x, 1, out, /*exclusive=*/true));
  expectValues(out, {2, 3}, {0, 1, 3, 0, 4, 9});
  ASSERT_OK(prefixSum(x, 0, out, /*exclusive=*/true));
  expectValues(out, {2, 3}, {0, 0, 0, 1, 2, 3});
  EXPECT_ERROR(prefixSum(x, 2, out, true), "prefixSum", "axis 2", "2x3");
}

TEST(ElementwiseTest, MulAndDivBroadcast) {
  Tensor out;
  // (2, 1) * (3) -> (2, 3).
  ASSERT_OK(mul(T({2, 1}, {10, -2}), T({3}, {1, 2, 3}), out));
  expectValues(out, {2, 3}, {10, 20, 30, -2, -4, -6});
  ASSERT_OK(mul(T({}, {0.5}), T({2}, {4, 8}), out));
  expectValues(out, {2}, {2, 4});
  EXPECT_ERROR(mul(Tensor({2, 3}), Tensor({2}), out), "mul", "broadcast", "2x3",
               "lhs", "rhs");

  // a / (b + eps), b broadcast along the last dim.
  ASSERT_OK(div(T({2, 2}, {1, 2, 3, 4}), T({2, 1}, {1, 3}), 1.0, out));
  expectValues(out, {2, 2}, {0.5, 1, 0.75, 1});
  ASSERT_OK(div(T({2}, {1, -6}), T({2}, {4, 3}), 0.0, out));
  expectValues(out, {2}, {0.25, -2});
  EXPECT_ERROR(div(Tensor({2}), Tensor({2}), -1.0, out), "div", "eps", "-1");
  EXPECT_ERROR(div(Tensor({2}), Tensor({2}), kNaN, out), "div", "eps");
  EXPECT_ERROR(div(Tensor({2, 3}), Tensor({2}), 0.0, out), "div", "broadcast");
}

TEST(ElementwiseTest, ReduceSumKeepsTheDim) {
  Tensor out;
  Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_OK(reduceSum(x, 1, out));
  expectValues(out, {2, 1}, {6, 15});
  ASSERT_OK(reduceSum(x, 0, out));
  expectValues(out, {1, 3}, {5, 7, 9});
  // The middle dim of a rank-3 tensor.
  ASSERT_OK(reduceSum(T({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), 1, out));
  expectValues(out, {2, 1, 2}, {4, 6, 12, 14});
  // A zero-length axis sums to 0.
  ASSERT_OK(reduceSum(Tensor({2, 0}), 1, out));
  expectValues(out, {2, 1}, {0, 0});
  EXPECT_ERROR(reduceSum(x, 2, out), "reduceSum", "axis 2", "2x3");
}

//===----------------------------------------------------------------------===//
// Dot-product attention, hand computed
//===----------------------------------------------------------------------===//

const std::vector<NormStep> kSoftmaxKeys = {
    {NormKind::Softmax, NormAxis::Keys}};
const std::vector<NormStep> kCountKeys = {{NormKind::Count, NormAxis::Keys}};

TEST(DotProductTest, SoftmaxTwoByTwo) {
  Tensor q = T({2, 2}, {1, 0, 0, 1}), k = T({2, 2}, {1, 0, 0, 1});
  Tensor v = T({2, 2}, {1, 2, 3, 4});
  Tensor out;
  // S = I, P = [[e, 1], [1, e]] / (e + 1).
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, kSoftmaxKeys, 1.0,
                                FeatureMap::Identity, false, out));
  double d = kE + 1;
  expectValues(
      out, {2, 2},
      {(kE + 3) / d, (2 * kE + 4) / d, (1 + 3 * kE) / d, (2 + 4 * kE) / d});
  // scale 2: S = 2I.
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, kSoftmaxKeys, 2.0,
                                FeatureMap::Identity, false, out));
  double e2 = kE * kE;
  expectValues(out, {2, 2},
               {(e2 + 3) / (e2 + 1), (2 * e2 + 4) / (e2 + 1),
                (1 + 3 * e2) / (e2 + 1), (2 + 4 * e2) / (e2 + 1)});
  // Causal: query 0 sees key 0 only.
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, kSoftmaxKeys, 1.0,
                                FeatureMap::Identity, true, out));
  expectValues(out, {2, 2}, {1, 2, (1 + 3 * kE) / d, (2 + 4 * kE) / d});
  // An additive -inf mask above the diagonal is the same as causal.
  Tensor mask = T({2, 2}, {0, -kInf, 0, 0});
  ASSERT_OK(dotProductAttention(q, k, v, &mask, kSoftmaxKeys, 1.0,
                                FeatureMap::Identity, false, out));
  expectValues(out, {2, 2}, {1, 2, (1 + 3 * kE) / d, (2 + 4 * kE) / d});
  // A finite mask adds to the scores: row 0 becomes [1, 1] -> uniform.
  Tensor mask2 = T({2, 2}, {0, 1, 0, 0});
  ASSERT_OK(dotProductAttention(q, k, v, &mask2, kSoftmaxKeys, 1.0,
                                FeatureMap::Identity, false, out));
  expectValues(out, {2, 2}, {2, 3, (1 + 3 * kE) / d, (2 + 4 * kE) / d});
  // A fully masked row gives zeros, not NaN.
  Tensor mask3 = T({2, 2}, {-kInf, -kInf, 0, 0});
  ASSERT_OK(dotProductAttention(q, k, v, &mask3, kSoftmaxKeys, 1.0,
                                FeatureMap::Identity, false, out));
  expectValues(out, {2, 2}, {0, 0, (1 + 3 * kE) / d, (2 + 4 * kE) / d});
}

TEST(DotProductTest, CausalWithUnequalLengths) {
  // dk = 1, all scores 0: softmax is uniform over the visible keys.
  Tensor v3 = T({3, 1}, {1, 2, 4});
  Tensor out;
  // n = 2 < m = 3: query 0 sees key 0, query 1 sees keys 0, 1.
  ASSERT_OK(dotProductAttention(Tensor({2, 1}), Tensor({3, 1}), v3, nullptr,
                                kSoftmaxKeys, 1.0, FeatureMap::Identity, true,
                                out));
  expectValues(out, {2, 1}, {1, 1.5});
  // n = 3 > m = 2: query 2 sees keys 0, 1.
  ASSERT_OK(dotProductAttention(Tensor({3, 1}), Tensor({2, 1}),
                                T({2, 1}, {1, 2}), nullptr, kSoftmaxKeys, 1.0,
                                FeatureMap::Identity, true, out));
  expectValues(out, {3, 1}, {1, 1.5, 1.5});
  // Count divides by the full length m even when causal.
  ASSERT_OK(dotProductAttention(T({2, 1}, {1, 1}), T({3, 1}, {1, 1, 1}), v3,
                                nullptr, kCountKeys, 1.0, FeatureMap::Identity,
                                true, out));
  expectValues(out, {2, 1}, {1.0 / 3, 1.0});
}

TEST(DotProductTest, CountAndSumOverKeys) {
  // S = [[1, 1], [2, 2]]; /m -> [[.5, .5], [1, 1]].
  Tensor q = T({2, 1}, {1, 2}), k = T({2, 1}, {1, 1}), v = T({2, 1}, {1, 10});
  Tensor out;
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, kCountKeys, 1.0,
                                FeatureMap::Identity, false, out));
  expectValues(out, {2, 1}, {5.5, 11});
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, kCountKeys, 1.0,
                                FeatureMap::Identity, true, out));
  expectValues(out, {2, 1}, {0.5, 11});
  // Sum with eps: S = [[1, 3]], eps = 1 -> [1/5, 3/5].
  std::vector<NormStep> sumKeys = {{NormKind::Sum, NormAxis::Keys, 1.0}};
  ASSERT_OK(dotProductAttention(T({1, 1}, {1}), T({2, 1}, {1, 3}),
                                T({2, 1}, {1, 2}), nullptr, sumKeys, 1.0,
                                FeatureMap::Identity, false, out));
  expectValues(out, {1, 1}, {1.4});
  // Causal Sum: row 0 = [1] / (1 + 1) = 0.5; row 1 = [2, 6] / 9.
  ASSERT_OK(dotProductAttention(T({2, 1}, {1, 2}), T({2, 1}, {1, 3}),
                                T({2, 1}, {1, 2}), nullptr, sumKeys, 1.0,
                                FeatureMap::Identity, true, out));
  expectValues(out, {2, 1}, {0.5, 14.0 / 9});
}

TEST(DotProductTest, QueriesAxis) {
  // S columns: [0, 1] and [0, log 3].
  Tensor q = T({2, 1}, {0, 1}), k = T({2, 1}, {1, std::log(3.0)});
  Tensor v = T({2, 1}, {1, 100});
  std::vector<NormStep> softmaxQueries = {
      {NormKind::Softmax, NormAxis::Queries}};
  Tensor out;
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, softmaxQueries, 1.0,
                                FeatureMap::Identity, false, out));
  expectValues(out, {2, 1}, {1 / (1 + kE) + 25, kE / (1 + kE) + 75});
  // Causal: column 1 sees query 1 only.
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, softmaxQueries, 1.0,
                                FeatureMap::Identity, true, out));
  expectValues(out, {2, 1}, {1 / (1 + kE), kE / (1 + kE) + 100});
  // Count over queries divides by n = 2; causal leaves S[0, 1] at 0.
  std::vector<NormStep> countQueries = {{NormKind::Count, NormAxis::Queries}};
  ASSERT_OK(dotProductAttention(T({2, 1}, {1, 2}), T({2, 1}, {1, 1}),
                                T({2, 1}, {1, 10}), nullptr, countQueries, 1.0,
                                FeatureMap::Identity, true, out));
  expectValues(out, {2, 1}, {0.5, 11});
  // Softmax over queries then sum over keys with eps (external attention).
  std::vector<NormStep> twoSteps = {{NormKind::Softmax, NormAxis::Queries},
                                    {NormKind::Sum, NormAxis::Keys, 0.5}};
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, twoSteps, 1.0,
                                FeatureMap::Identity, false, out));
  double a00 = 1 / (1 + kE), a01 = 0.25, a10 = kE / (1 + kE), a11 = 0.75;
  expectValues(out, {2, 1},
               {(a00 + 100 * a01) / (0.5 + a00 + a01),
                (a10 + 100 * a11) / (0.5 + a10 + a11)});
  // No steps: P = S (with causal zeros); None leaves S.
  ASSERT_OK(dotProductAttention(T({2, 1}, {1, 2}), T({2, 1}, {1, 3}),
                                T({2, 1}, {1, 2}), nullptr, {}, 1.0,
                                FeatureMap::Identity, true, out));
  expectValues(out, {2, 1}, {1, 14});
  ASSERT_OK(dotProductAttention(T({2, 1}, {1, 2}), T({2, 1}, {1, 3}),
                                T({2, 1}, {1, 2}), nullptr,
                                {{NormKind::None, NormAxis::Keys}}, 1.0,
                                FeatureMap::Identity, false, out));
  expectValues(out, {2, 1}, {7, 14});
}

TEST(DotProductTest, FeatureMaps) {
  // relu: phi(q) = [0, 2], phi(K) = [[3, 0], [1, 1]] -> S = [0, 2].
  Tensor q = T({1, 2}, {-1, 2}), k = T({2, 2}, {3, -4, 1, 1});
  Tensor v = T({2, 1}, {5, 1});
  std::vector<NormStep> none = {{NormKind::None, NormAxis::Keys}};
  Tensor out;
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, none, 1.0, FeatureMap::Relu,
                                false, out));
  expectValues(out, {1, 1}, {2});
  // elu+1: phi(q) = [e^-1, 3], phi(K) = [[4, e^-4], [2, 2]].
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, none, 1.0,
                                FeatureMap::EluPlusOne, false, out));
  double s0 = std::exp(-1.0) * 4 + 3 * std::exp(-4.0);
  double s1 = std::exp(-1.0) * 2 + 6;
  expectValues(out, {1, 1}, {5 * s0 + s1});
  // With Sum over keys: (5 s0 + s1) / (s0 + s1).
  ASSERT_OK(dotProductAttention(q, k, v, nullptr,
                                {{NormKind::Sum, NormAxis::Keys}}, 1.0,
                                FeatureMap::EluPlusOne, false, out));
  expectValues(out, {1, 1}, {(5 * s0 + s1) / (s0 + s1)});
}

TEST(DotProductTest, BroadcastsLeadingDims) {
  // query (2, 1, 3, 4), key (3, 5, 4), value (1, 5, 2), mask
  // (3, 1, 1, 3, 5): the leading dims (2, 1), (3), (1), (3, 1, 1) broadcast
  // to (3, 2, 3); check each batch against an unbatched call.
  Tensor q = random({2, 1, 3, 4}, 1), k = random({3, 5, 4}, 2);
  Tensor v = random({1, 5, 2}, 3), mask = random({3, 1, 1, 3, 5}, 4);
  Tensor out;
  ASSERT_OK(dotProductAttention(q, k, v, &mask, kSoftmaxKeys, 0.5,
                                FeatureMap::Identity, true, out));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{3, 2, 3, 3, 2}));
  auto slice = [](const Tensor &t, int64_t index, std::vector<int64_t> shape) {
    int64_t size = checkedNumElements(shape);
    return T(shape, std::vector<double>(t.data.begin() + index * size,
                                        t.data.begin() + (index + 1) * size));
  };
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 3; ++c) {
        Tensor one;
        Tensor maskOne = slice(mask, a, {3, 5});
        ASSERT_OK(dotProductAttention(
            slice(q, b, {3, 4}), slice(k, c, {5, 4}), slice(v, 0, {5, 2}),
            &maskOne, kSoftmaxKeys, 0.5, FeatureMap::Identity, true, one));
        expectClose(slice(out, (a * 2 + b) * 3 + c, {3, 2}), one, 0.0);
      }
}

TEST(DotProductTest, Errors) {
  Tensor q({2, 4}), k({3, 4}), v({3, 5}), out;
  EXPECT_ERROR(dotProductAttention(Tensor({4}), k, v, nullptr, kSoftmaxKeys, 1,
                                   FeatureMap::Identity, false, out),
               "dotProductAttention", "query", "rank >= 2");
  EXPECT_ERROR(dotProductAttention(q, Tensor({3, 3}), Tensor({3, 5}), nullptr,
                                   kSoftmaxKeys, 1, FeatureMap::Identity, false,
                                   out),
               "dotProductAttention", "feature dims", "2x4", "3x3");
  EXPECT_ERROR(dotProductAttention(q, k, Tensor({2, 5}), nullptr, kSoftmaxKeys,
                                   1, FeatureMap::Identity, false, out),
               "dotProductAttention", "position dims", "3x4", "2x5");
  EXPECT_ERROR(dotProductAttention(Tensor({2, 2, 4}), Tensor({3, 3, 4}),
                                   Tensor({3, 5}), nullptr, kSoftmaxKeys, 1,
                                   FeatureMap::Identity, false, out),
               "dotProductAttention", "leading dims", "2x2x4", "3x3x4");
  Tensor badMask({3, 2});
  EXPECT_ERROR(dotProductAttention(q, k, v, &badMask, kSoftmaxKeys, 1,
                                   FeatureMap::Identity, false, out),
               "dotProductAttention", "mask 3x2", "2x3");
  Tensor badLead({4, 2, 3});
  EXPECT_ERROR(dotProductAttention(Tensor({3, 2, 4}), k, v, &badLead,
                                   kSoftmaxKeys, 1, FeatureMap::Identity, false,
                                   out),
               "dotProductAttention", "leading dims", "mask 4x2x3");
  Tensor rank1Mask({3});
  EXPECT_ERROR(dotProductAttention(q, k, v, &rank1Mask, kSoftmaxKeys, 1,
                                   FeatureMap::Identity, false, out),
               "dotProductAttention", "mask", "rank >= 2");
  EXPECT_ERROR(dotProductAttention(q, k, v, nullptr,
                                   {{NormKind::Sum, NormAxis::Keys, -1.0}}, 1,
                                   FeatureMap::Identity, false, out),
               "dotProductAttention", "step 0", "eps", "-1");
  EXPECT_ERROR(dotProductAttention(q, k, T({3, 5}, {1}), nullptr, kSoftmaxKeys,
                                   1, FeatureMap::Identity, false, out),
               "dotProductAttention", "value", "15 elements", "1 values");
}

//===----------------------------------------------------------------------===//
// Identities with the primitives and between the high-level ops
//===----------------------------------------------------------------------===//

TEST(IdentityTest, CountOverKeysIsReassociatedMatmul) {
  Tensor q = random({2, 5, 3}, 11), k = random({2, 7, 3}, 12);
  Tensor v = random({2, 7, 4}, 13);
  Tensor direct, kv, qkv, expected;
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, kCountKeys, 1.0,
                                FeatureMap::Identity, false, direct));
  ASSERT_OK(matmul(k, v, true, false, kv));
  ASSERT_OK(matmul(q, kv, false, false, qkv));
  ASSERT_OK(scale(qkv, 1.0 / 7, expected));
  expectIdentity(direct, expected);
}

TEST(IdentityTest, LinearAttentionSumOverKeys) {
  Tensor q = random({3, 6, 4}, 21), k = random({3, 8, 4}, 22);
  Tensor v = random({3, 8, 5}, 23);
  Tensor direct;
  ASSERT_OK(dotProductAttention(q, k, v, nullptr,
                                {{NormKind::Sum, NormAxis::Keys, 0.0}}, 1.0,
                                FeatureMap::EluPlusOne, false, direct));
  Tensor phiQ, phiK, kv, num, ksum, den;
  ASSERT_OK(featureMap(q, FeatureMap::EluPlusOne, phiQ));
  ASSERT_OK(featureMap(k, FeatureMap::EluPlusOne, phiK));
  ASSERT_OK(matmul(phiK, v, true, false, kv));
  ASSERT_OK(matmul(phiQ, kv, false, false, num));
  Tensor ones({8, 1});
  for (double &x : ones.data)
    x = 1.0;
  ASSERT_OK(matmul(phiK, ones, true, false, ksum));
  ASSERT_OK(matmul(phiQ, ksum, false, false, den));
  ASSERT_EQ(den.shape, (std::vector<int64_t>{3, 6, 1}));
  Tensor expected = num;
  for (int64_t i = 0; i < 3 * 6; ++i)
    for (int64_t e = 0; e < 5; ++e)
      expected.data[i * 5 + e] /= den.data[i];
  expectIdentity(direct, expected);
}

TEST(IdentityTest, CausalLinearAttentionIsAPrefixSum) {
  // O_i = sum_{j <= i} (q_i . k_j) v_j / m as a scan of k_j v_j^T.
  const int64_t n = 6, dk = 3, dv = 2;
  Tensor q = random({n, dk}, 31), k = random({n, dk}, 32);
  Tensor v = random({n, dv}, 33);
  Tensor direct;
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, kCountKeys, 1.0,
                                FeatureMap::Identity, true, direct));
  Tensor outer({n, dk * dv});
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < dk; ++d)
      for (int64_t e = 0; e < dv; ++e)
        outer.data[j * dk * dv + d * dv + e] =
            k.data[j * dk + d] * v.data[j * dv + e];
  Tensor scan;
  ASSERT_OK(prefixSum(outer, 0, scan));
  Tensor expected({n, dv});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t e = 0; e < dv; ++e) {
      double acc = 0;
      for (int64_t d = 0; d < dk; ++d)
        acc += q.data[i * dk + d] * scan.data[i * dk * dv + d * dv + e];
      expected.data[i * dv + e] = acc / n;
    }
  expectIdentity(direct, expected);
}

TEST(IdentityTest, SoftmaxAttentionIsItsDecomposition) {
  Tensor q = random({2, 4, 3}, 41), k = random({2, 6, 3}, 42);
  Tensor v = random({2, 6, 5}, 43), mask = random({4, 6}, 44);
  Tensor direct;
  ASSERT_OK(dotProductAttention(q, k, v, &mask, kSoftmaxKeys, 0.7,
                                FeatureMap::Identity, true, direct));
  Tensor s, scaled, masked, causal, p, expected;
  ASSERT_OK(matmul(q, k, false, true, s));
  ASSERT_OK(scale(s, 0.7, scaled));
  ASSERT_OK(add(scaled, mask, masked));
  ASSERT_OK(causalMask(masked, -kInf, causal));
  ASSERT_OK(normalize(causal, NormKind::Softmax, 2, 0.0, p));
  ASSERT_OK(matmul(p, v, false, false, expected));
  expectIdentity(direct, expected);
}

TEST(IdentityTest, EfficientScalingIsCountOverKeys) {
  Tensor q = random({2, 5, 3}, 51), k = random({2, 5, 3}, 52);
  Tensor v = random({2, 5, 4}, 53);
  Tensor efficient, dot;
  ASSERT_OK(efficientAttention(q, k, v, EfficientVariant::Scaling, efficient));
  ASSERT_OK(dotProductAttention(q, k, v, nullptr, kCountKeys, 1.0,
                                FeatureMap::Identity, false, dot));
  expectIdentity(efficient, dot);
}

TEST(IdentityTest, EfficientSoftmaxIsRowTimesColumnSoftmax) {
  Tensor q = random({3, 4, 5}, 61), k = random({3, 7, 5}, 62);
  Tensor v = random({7, 2}, 63);
  Tensor efficient, rhoQ, rhoK, context, expected;
  ASSERT_OK(efficientAttention(q, k, v, EfficientVariant::Softmax, efficient));
  ASSERT_OK(normalize(q, NormKind::Softmax, 2, 0, rhoQ));
  ASSERT_OK(normalize(k, NormKind::Softmax, 1, 0, rhoK));
  ASSERT_OK(matmul(rhoK, v, true, false, context));
  ASSERT_OK(matmul(rhoQ, context, false, false, expected));
  expectIdentity(efficient, expected);
  // with_context returns that context per problem (v broadcast to 3), and
  // the key log-sum-exp, from which softmaxFromLse gives rhoK again.
  Tensor saved, keyLse, fromLse;
  ASSERT_OK(efficientAttention(q, k, v, EfficientVariant::Softmax, efficient,
                               &saved, &keyLse));
  expectIdentity(saved, context);
  ASSERT_OK(softmaxFromLse(k, keyLse, 1, fromLse));
  expectIdentity(fromLse, rhoK);
}

TEST(IdentityTest, ExternalIsDotProductWithTwoSteps) {
  Tensor x = random({2, 6, 4}, 71), mk = random({5, 4}, 72);
  Tensor mv = random({5, 3}, 73);
  Tensor external, dot;
  ASSERT_OK(externalAttention(x, mk, mv, 1e-9, external));
  ASSERT_OK(dotProductAttention(x, mk, mv, nullptr,
                                {{NormKind::Softmax, NormAxis::Queries},
                                 {NormKind::Sum, NormAxis::Keys, 1e-9}},
                                1.0, FeatureMap::Identity, false, dot));
  expectIdentity(external, dot);
}

//===----------------------------------------------------------------------===//
// Efficient and external attention, hand computed
//===----------------------------------------------------------------------===//

TEST(EfficientTest, HandComputed) {
  // Softmax: rhoQ rows over dk = 2: [0, log 3] -> [1/4, 3/4];
  // rhoK columns over m = 2: column 0 [0, log 3] -> [1/4, 3/4],
  // column 1 [5, 5] -> [1/2, 1/2].
  Tensor q = T({1, 2}, {0, std::log(3.0)});
  Tensor k = T({2, 2}, {0, 5, std::log(3.0), 5});
  Tensor v = T({2, 1}, {4, 8});
  Tensor out;
  ASSERT_OK(efficientAttention(q, k, v, EfficientVariant::Softmax, out));
  // context = [1 + 6, 2 + 4] = [7, 6]; E = 7/4 + 18/4 = 25/4.
  expectValues(out, {1, 1}, {6.25});
  // with_context: the normalized context, (dk, dv) = (2, 1).
  Tensor context;
  ASSERT_OK(
      efficientAttention(q, k, v, EfficientVariant::Softmax, out, &context));
  expectValues(out, {1, 1}, {6.25});
  expectValues(context, {2, 1}, {7, 6});
  // The key log-sum-exp per feature: log(1 + 3) and 5 + log 2.
  Tensor keyLse;
  ASSERT_OK(efficientAttention(q, k, v, EfficientVariant::Softmax, out,
                               &context, &keyLse));
  expectValues(keyLse, {1, 2}, {std::log(4.0), 5 + std::log(2.0)});
  // An all -inf feature gives +inf (its weights exp(-inf - inf) are 0), a
  // NaN one NaN.
  const double inf = std::numeric_limits<double>::infinity();
  Tensor special = T({2, 2}, {-inf, std::nan(""), -inf, 1});
  ASSERT_OK(efficientAttention(q, special, v, EfficientVariant::Softmax, out,
                               &context, &keyLse));
  EXPECT_EQ(keyLse.data[0], inf);
  EXPECT_TRUE(std::isnan(keyLse.data[1]));
  Tensor weights;
  ASSERT_OK(softmaxFromLse(special, keyLse, 0, weights));
  EXPECT_EQ(weights.data[0], 0.0);
  EXPECT_EQ(weights.data[2], 0.0);
  EXPECT_TRUE(std::isnan(weights.data[1]) && std::isnan(weights.data[3]));
  // A wrong lse shape is an error naming it.
  EXPECT_ERROR(softmaxFromLse(special, T({2, 1}, {0, 0}), 0, weights),
               "softmaxFromLse", "lse 2x1", "2x2", "axis 0");
  // No queries: still the context.
  ASSERT_OK(efficientAttention(Tensor({0, 2}), k, v, EfficientVariant::Softmax,
                               out, &context));
  expectValues(out, {0, 1}, {});
  expectValues(context, {2, 1}, {7, 6});
  // Scaling with n = 1: Q (K^T V) = 0 * (...) + log3 * (5*4 + 5*8).
  ASSERT_OK(efficientAttention(q, k, v, EfficientVariant::Scaling, out));
  expectValues(out, {1, 1}, {std::log(3.0) * 60});
  // Scaling with n = 2 divides by 2.
  ASSERT_OK(efficientAttention(T({2, 1}, {1, 2}), T({2, 1}, {1, 1}),
                               T({2, 1}, {1, 10}), EfficientVariant::Scaling,
                               out));
  expectValues(out, {2, 1}, {5.5, 11});
}

TEST(EfficientTest, Errors) {
  Tensor out;
  EXPECT_ERROR(efficientAttention(Tensor({2, 3}), Tensor({4, 2}),
                                  Tensor({4, 1}), EfficientVariant::Softmax,
                                  out),
               "efficientAttention", "feature dims", "2x3", "4x2");
  EXPECT_ERROR(efficientAttention(Tensor({2, 3}), Tensor({4, 3}),
                                  Tensor({5, 1}), EfficientVariant::Scaling,
                                  out),
               "efficientAttention", "position dims", "4x3", "5x1");
  EXPECT_ERROR(efficientAttention(Tensor({2, 2, 3}), Tensor({3, 4, 3}),
                                  Tensor({4, 1}), EfficientVariant::Scaling,
                                  out),
               "efficientAttention", "leading dims");
}

TEST(ExternalTest, HandComputed) {
  // x = [[0], [log 3]], Mk = [[1], [0]]: A = [[0, 0], [log 3, 0]];
  // softmax over positions: slot 0 [1/4, 3/4], slot 1 [1/2, 1/2];
  // / (eps + row sum): row 0 [1/4, 1/2] / (1 + 3/4), row 1 [3/4, 1/2] /
  // (1 + 5/4) with eps = 1.
  Tensor x = T({2, 1}, {0, std::log(3.0)}), mk = T({2, 1}, {1, 0});
  Tensor mv = T({2, 1}, {1, 10});
  Tensor out;
  ASSERT_OK(externalAttention(x, mk, mv, 1.0, out));
  expectValues(out, {2, 1}, {(0.25 + 5) / 1.75, (0.75 + 5) / 2.25});
  EXPECT_ERROR(externalAttention(x, mk, mv, -0.5, out), "externalAttention",
               "eps", "-0.5");
  EXPECT_ERROR(externalAttention(x, Tensor({2, 2}), mv, 0, out),
               "externalAttention", "feature dims", "2x1", "2x2");
  EXPECT_ERROR(externalAttention(x, mk, Tensor({3, 1}), 0, out),
               "externalAttention", "position dims", "2x1", "3x1");
}

//===----------------------------------------------------------------------===//
// Bilinear gather and deformable attention
//===----------------------------------------------------------------------===//

/// Value (1, 6, 1, 1) of one 2x3 level with v[h][w] = 10 h + w + 1.
Tensor level23() { return T({1, 6, 1, 1}, {1, 2, 3, 11, 12, 13}); }

double gatherOne(const Tensor &value, const std::vector<SpatialLevel> &levels,
                 int64_t level, double x, double y, bool alignCorners) {
  // One query, one point, at `level` (other levels sampled at 0, 0).
  std::vector<double> loc(2 * levels.size(), 0.0);
  loc[2 * level] = x;
  loc[2 * level + 1] = y;
  Tensor locations =
      T({1, 1, 1, static_cast<int64_t>(levels.size()), 1, 2}, loc);
  Tensor out;
  Status status = bilinearGather(value, locations, levels, alignCorners, out);
  EXPECT_TRUE(status.isOk()) << status.message();
  if (!status.isOk())
    return kNaN;
  EXPECT_EQ(out.shape,
            (std::vector<int64_t>{1, 1, 1, static_cast<int64_t>(levels.size()),
                                  1, 1}));
  return out.data[level];
}

TEST(BilinearTest, AlignCornersFalse) {
  Tensor v = level23();
  std::vector<SpatialLevel> lv = {{2, 3}};
  // Pixel centers: (w + 0.5) / W, (h + 0.5) / H.
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 0, 0.5, 0.75, false), 12);
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 0, 0.5 / 3, 0.25, false), 1);
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 0, 2.5 / 3, 0.75, false), 13);
  // Fractional: px = 0.25, py = 0.5 -> 10 py + px + 1 (bilinear is exact
  // on a linear function).
  EXPECT_NEAR(gatherOne(v, lv, 0, 0.25, 0.5, false), 6.25, 1e-14);
  // Corners outside: left (px = -0.5, py = 0) keeps 0.5 * v[0][0].
  EXPECT_NEAR(gatherOne(v, lv, 0, 0.0, 0.25, false), 0.5, 1e-14);
  // Right (px = 2.5): 0.5 * v[0][2].
  EXPECT_NEAR(gatherOne(v, lv, 0, 1.0, 0.25, false), 1.5, 1e-14);
  // Top (py = -0.5, px = 1): 0.5 * v[0][1].
  EXPECT_NEAR(gatherOne(v, lv, 0, 0.5, 0.0, false), 1.0, 1e-14);
  // Bottom (py = 1.5): 0.5 * v[1][1].
  EXPECT_NEAR(gatherOne(v, lv, 0, 0.5, 1.0, false), 6.0, 1e-14);
  // Top-left corner (-0.5, -0.5): 0.25 * v[0][0]; bottom-right 0.25 * v[1][2].
  EXPECT_NEAR(gatherOne(v, lv, 0, 0.0, 0.0, false), 0.25, 1e-14);
  EXPECT_NEAR(gatherOne(v, lv, 0, 1.0, 1.0, false), 3.25, 1e-14);
  // Entirely outside.
  EXPECT_EQ(gatherOne(v, lv, 0, -0.2, 0.5, false), 0.0);
  EXPECT_EQ(gatherOne(v, lv, 0, 0.5, 1.3, false), 0.0);
  EXPECT_EQ(gatherOne(v, lv, 0, 1.2, 0.5, false), 0.0);
  // Non-finite and huge locations contribute 0 (no overflow in the cast).
  EXPECT_EQ(gatherOne(v, lv, 0, kNaN, 0.5, false), 0.0);
  EXPECT_EQ(gatherOne(v, lv, 0, 0.5, kInf, false), 0.0);
  EXPECT_EQ(gatherOne(v, lv, 0, -kInf, 0.5, false), 0.0);
  EXPECT_EQ(gatherOne(v, lv, 0, 1e300, 0.5, false), 0.0);
  EXPECT_EQ(gatherOne(v, lv, 0, 0.5, -1e300, false), 0.0);
  EXPECT_EQ(gatherOne(v, lv, 0, 1e18, 1e18, false), 0.0);
}

TEST(BilinearTest, AlignCornersTrue) {
  Tensor v = level23();
  std::vector<SpatialLevel> lv = {{2, 3}};
  // Pixel = (x (W - 1), y (H - 1)).
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 0, 0.0, 0.0, true), 1);
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 0, 0.5, 1.0, true), 12);
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 0, 1.0, 1.0, true), 13);
  EXPECT_NEAR(gatherOne(v, lv, 0, 0.25, 0.5, true), 6.5, 1e-14);
  // Outside: px = 2.5 -> 0.5 * v[0][2]; px = -0.5 -> 0.5 * v[0][0];
  // py = 1.5 -> 0.5 * v[1][1]; py = -0.5 -> 0.5 * v[0][1].
  EXPECT_NEAR(gatherOne(v, lv, 0, 1.25, 0.0, true), 1.5, 1e-14);
  EXPECT_NEAR(gatherOne(v, lv, 0, -0.25, 0.0, true), 0.5, 1e-14);
  EXPECT_NEAR(gatherOne(v, lv, 0, 0.5, 1.5, true), 6.0, 1e-14);
  EXPECT_NEAR(gatherOne(v, lv, 0, 0.5, -0.5, true), 1.0, 1e-14);
  EXPECT_EQ(gatherOne(v, lv, 0, 1.6, 0.5, true), 0.0);
  EXPECT_EQ(gatherOne(v, lv, 0, kNaN, kNaN, true), 0.0);
}

TEST(BilinearTest, TwoLevelsOfUnequalShapes) {
  // Level 0 is 2x3 (rows 0..5), level 1 is 1x2 (rows 6, 7).
  Tensor v = T({1, 8, 1, 1}, {1, 2, 3, 11, 12, 13, 100, 200});
  std::vector<SpatialLevel> lv = {{2, 3}, {1, 2}};
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 1, 0.25, 0.5, false), 100);
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 1, 0.75, 0.5, false), 200);
  EXPECT_NEAR(gatherOne(v, lv, 1, 0.5, 0.5, false), 150, 1e-13);
  // y = 0 is half outside the single row: 0.5 * 150.
  EXPECT_NEAR(gatherOne(v, lv, 1, 0.5, 0.0, false), 75, 1e-13);
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 1, 1.0, 0.0, true), 200);
  EXPECT_DOUBLE_EQ(gatherOne(v, lv, 0, 0.5, 0.75, false), 12);
}

/// value[n, r, h, d] = 1000 n + 100 h + 10 d + r for a (N, 8, M, D) value of
/// two levels 2x3 and 1x2.
Tensor multiValue(int64_t batch, int64_t heads, int64_t depth) {
  Tensor v({batch, 8, heads, depth});
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < depth; ++d)
          v.data[((n * 8 + r) * heads + h) * depth + d] =
              1000 * n + 100 * h + 10 * d + r;
  return v;
}

TEST(BilinearTest, BatchesHeadsAndChannels) {
  const int64_t N = 2, M = 2, D = 3, Lq = 2, L = 2, P = 2;
  std::vector<SpatialLevel> lv = {{2, 3}, {1, 2}};
  Tensor v = multiValue(N, M, D);
  // Point p of query q, head h, level l samples a pixel center chosen per
  // index; `row` records which value row that is.
  Tensor loc({N, Lq, M, L, P, 2});
  std::vector<int64_t> rows;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t q = 0; q < Lq; ++q)
      for (int64_t h = 0; h < M; ++h)
        for (int64_t l = 0; l < L; ++l)
          for (int64_t p = 0; p < P; ++p) {
            int64_t H = lv[l].height, W = lv[l].width;
            int64_t w = (n + q + h + p) % W, y = (q + p + h) % H;
            int64_t index = ((((n * Lq + q) * M + h) * L + l) * P + p) * 2;
            loc.data[index] = (w + 0.5) / W;
            loc.data[index + 1] = (y + 0.5) / H;
            rows.push_back((l == 0 ? 0 : 6) + y * W + w);
          }
  Tensor out;
  ASSERT_OK(bilinearGather(v, loc, lv, false, out));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{N, Lq, M, L, P, D}));
  size_t sample = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t q = 0; q < Lq; ++q)
      for (int64_t h = 0; h < M; ++h)
        for (int64_t l = 0; l < L; ++l)
          for (int64_t p = 0; p < P; ++p, ++sample)
            for (int64_t d = 0; d < D; ++d)
              EXPECT_DOUBLE_EQ(out.data[sample * D + d],
                               1000 * n + 100 * h + 10 * d + rows[sample]);
}

TEST(DeformableTest, HandComputedTwoLevels) {
  // N = 2, M = 2, D = 2, Lq = 1, L = 2 (2x3 and 1x2), P = 2.
  const int64_t N = 2, M = 2, D = 2, L = 2, P = 2;
  std::vector<SpatialLevel> lv = {{2, 3}, {1, 2}};
  Tensor v = multiValue(N, M, D);
  // Level 0: p0 at pixel (w 2, h 1) -> row 5; p1 at (x 0.25, y 0.5)
  // -> px 0.25, py 0.5 -> row 3.75 as a linear function: rows are
  // r = 3 h + w, bilinear gives 3 * 0.5 + 0.25 = 1.75.
  // Level 1: p0 at pixel w 1 -> row 7; p1 at x = 0.5 -> halfway between
  // rows 6 and 7 -> 6.5.
  std::vector<double> perHead = {2.5 / 3, 0.75, 0.25, 0.5, 0.75, 0.5, 0.5, 0.5};
  std::vector<double> rowOf = {5, 1.75, 7, 6.5};
  Tensor loc({N, 1, M, L, P, 2});
  Tensor w({N, 1, M, L, P});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < M; ++h) {
      for (int64_t i = 0; i < L * P * 2; ++i)
        loc.data[(n * M + h) * L * P * 2 + i] = perHead[i];
      for (int64_t i = 0; i < L * P; ++i)
        w.data[(n * M + h) * L * P + i] = 0.1 * (i + 1) + n + 0.5 * h;
    }
  Tensor out;
  ASSERT_OK(deformableAttention(v, loc, w, lv, false, out));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{N, 1, M * D}));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < M; ++h)
      for (int64_t d = 0; d < D; ++d) {
        double expected = 0;
        for (int64_t i = 0; i < L * P; ++i) {
          double weight = 0.1 * (i + 1) + n + 0.5 * h;
          expected += weight * (1000 * n + 100 * h + 10 * d + rowOf[i]);
        }
        EXPECT_NEAR(out.data[(n * M + h) * D + d], expected, 1e-13 * expected);
      }
}

TEST(DeformableTest, EqualsWeightedGather) {
  const int64_t N = 2, Lq = 3, M = 2, D = 4, L = 2, P = 3;
  std::vector<SpatialLevel> lv = {{3, 5}, {2, 2}};
  Tensor v = random({N, 19, M, D}, 81);
  // Locations in [-0.2, 1.2) so some corners fall outside.
  Tensor loc = random({N, Lq, M, L, P, 2}, 82, -0.2, 1.2);
  Tensor w = random({N, Lq, M, L, P}, 83, 0.0, 1.0);
  for (bool align : {false, true}) {
    Tensor out, samples;
    ASSERT_OK(deformableAttention(v, loc, w, lv, align, out));
    ASSERT_OK(bilinearGather(v, loc, lv, align, samples));
    Tensor expected({N, Lq, M * D});
    for (int64_t nq = 0; nq < N * Lq; ++nq)
      for (int64_t h = 0; h < M; ++h)
        for (int64_t lp = 0; lp < L * P; ++lp)
          for (int64_t d = 0; d < D; ++d)
            expected.data[nq * M * D + h * D + d] +=
                w.data[(nq * M + h) * L * P + lp] *
                samples.data[((nq * M + h) * L * P + lp) * D + d];
    expectIdentity(out, expected);
  }
}

TEST(SamplingTest, Errors) {
  std::vector<SpatialLevel> lv = {{2, 3}, {1, 2}};
  Tensor v({1, 8, 2, 4}), loc({1, 5, 2, 2, 3, 2}), w({1, 5, 2, 2, 3}), out;
  ASSERT_OK(bilinearGather(v, loc, lv, false, out));
  ASSERT_OK(deformableAttention(v, loc, w, lv, false, out));
  EXPECT_ERROR(bilinearGather(Tensor({8, 2, 4}), loc, lv, false, out),
               "bilinearGather", "value", "rank 4", "8x2x4");
  EXPECT_ERROR(bilinearGather(v, Tensor({1, 5, 2, 2, 3}), lv, false, out),
               "bilinearGather", "locations", "rank 6", "1x5x2x2x3");
  EXPECT_ERROR(bilinearGather(v, Tensor({1, 5, 2, 2, 3, 3}), lv, false, out),
               "bilinearGather", "last dim", "1x5x2x2x3x3", "must be 2");
  EXPECT_ERROR(bilinearGather(Tensor({1, 9, 2, 4}), loc, lv, false, out),
               "bilinearGather", "Lv = 9", "2x3, 1x2", "8 positions");
  EXPECT_ERROR(bilinearGather(v, loc, {{2, 3}, {1, 1}, {0, 1}}, false, out),
               "bilinearGather", "L = 2", "level list has 3");
  EXPECT_ERROR(bilinearGather(Tensor({2, 8, 2, 4}), loc, lv, false, out),
               "bilinearGather", "batch", "N = 2", "1x5x2x2x3x2");
  EXPECT_ERROR(bilinearGather(Tensor({1, 8, 3, 4}), loc, lv, false, out),
               "bilinearGather", "head", "M = 3");
  EXPECT_ERROR(bilinearGather(v, loc, {{2, 3}, {-1, 2}}, false, out),
               "bilinearGather", "level 1", "negative", "-1x2");
  int64_t big = int64_t(1) << 40;
  EXPECT_ERROR(bilinearGather(v, loc, {{big, big}, {1, 2}}, false, out),
               "bilinearGather", "overflow");
  EXPECT_ERROR(
      deformableAttention(v, loc, Tensor({1, 5, 2, 2, 4}), lv, false, out),
      "deformableAttention", "weights 1x5x2x2x4", "1x5x2x2x3");
  EXPECT_ERROR(deformableAttention(v, loc, w, {{2, 3}, {2, 2}}, false, out),
               "deformableAttention", "Lv = 8", "10 positions");
  EXPECT_ERROR(
      deformableAttention(v, T({1, 5, 2, 2, 3, 2}, {0.5}), w, lv, false, out),
      "deformableAttention", "locations", "1 values");
}

//===----------------------------------------------------------------------===//
// Primitives of the deformable lowering: floor, slice, gatherPixels
//===----------------------------------------------------------------------===//

TEST(FloorTest, RoundsTowardMinusInfinity) {
  Tensor out;
  ASSERT_OK(floor(T({2, 3}, {-1.5, -0.0, 0.25, 2.0, -3.0, 7.999}), out));
  expectValues(out, {2, 3}, {-2, 0, 0, 2, -3, 7});
  ASSERT_OK(floor(T({3}, {kInf, -kInf, kNaN}), out));
  EXPECT_EQ(out.data[0], kInf);
  EXPECT_EQ(out.data[1], -kInf);
  EXPECT_TRUE(std::isnan(out.data[2]));
}

TEST(SliceTest, OffsetsSizesStrides) {
  // 3x4 with x[i][j] = 10 i + j.
  Tensor x = T({3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  Tensor out;
  ASSERT_OK(slice(x, {0, 1}, {3, 1}, {1, 1}, out));
  expectValues(out, {3, 1}, {1, 11, 21});
  ASSERT_OK(slice(x, {1, 0}, {2, 2}, {1, 3}, out));
  expectValues(out, {2, 2}, {10, 13, 20, 23});
  ASSERT_OK(slice(x, {2, 3}, {0, 1}, {1, 1}, out));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{0, 1}));
  EXPECT_ERROR(slice(x, {0}, {3, 1}, {1, 1}, out), "slice",
               "one entry per dim", "3x4");
  EXPECT_ERROR(slice(x, {0, 3}, {1, 2}, {1, 1}, out), "slice", "dim 1",
               "out of bounds");
  EXPECT_ERROR(slice(x, {1, 0}, {2, 2}, {2, 3}, out), "slice", "dim 0",
               "stride 2", "out of bounds");
  EXPECT_ERROR(slice(x, {0, 0}, {1, 1}, {0, 1}, out), "slice", "stride 0");
  EXPECT_ERROR(slice(x, {-1, 0}, {1, 1}, {1, 1}, out), "slice", "offset -1");
}

TEST(GatherPixelsTest, HandComputed) {
  // Two levels, 2x3 (rows 0..5) and 1x2 (rows 6, 7), of multiValue.
  const int64_t N = 2, M = 2, D = 3;
  std::vector<SpatialLevel> lv = {{2, 3}, {1, 2}};
  Tensor v = multiValue(N, M, D);
  // One query, L = 2, P = 4 pixels per level: inside, fractional (floored),
  // and outside on each side.
  std::vector<double> level0 = {2, 1, 0.75, 1.5, -1, 0, 3, 0};
  std::vector<double> level1 = {1, 0, 0, -0.5, 2, 0, 0, 1};
  std::vector<double> rows0 = {5, 3, -1, -1}, rows1 = {7, -1, -1, -1};
  Tensor pixels({N, 1, M, 2, 4, 2});
  for (int64_t nh = 0; nh < N * M; ++nh)
    for (int64_t i = 0; i < 8; ++i) {
      pixels.data[nh * 16 + i] = level0[i];
      pixels.data[nh * 16 + 8 + i] = level1[i];
    }
  Tensor out;
  ASSERT_OK(gatherPixels(v, pixels, lv, out));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{N, 1, M, 2, 4, D}));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < M; ++h)
      for (int64_t l = 0; l < 2; ++l)
        for (int64_t p = 0; p < 4; ++p)
          for (int64_t d = 0; d < D; ++d) {
            double row = (l == 0 ? rows0 : rows1)[p];
            double expected =
                row < 0 ? 0.0 : 1000 * n + 100 * h + 10 * d + row;
            EXPECT_EQ(out.data[((((n * M + h) * 2 + l) * 4 + p) * D) + d],
                      expected)
                << "n " << n << " h " << h << " l " << l << " p " << p;
          }
}

TEST(GatherPixelsTest, NonFiniteAndHugeGiveZero) {
  Tensor v = level23();
  std::vector<SpatialLevel> lv = {{2, 3}};
  for (auto [x, y] : std::vector<std::pair<double, double>>{
           {kNaN, 0}, {0, kInf}, {-kInf, 0}, {1e300, 0}, {0, -1e300}}) {
    Tensor out;
    ASSERT_OK(gatherPixels(v, T({1, 1, 1, 1, 1, 2}, {x, y}), lv, out));
    EXPECT_EQ(out.data[0], 0.0) << x << ", " << y;
  }
}

TEST(GatherPixelsTest, Errors) {
  std::vector<SpatialLevel> lv = {{2, 3}, {1, 2}};
  Tensor v({1, 8, 2, 4}), pixels({1, 5, 2, 2, 3, 2}), out;
  ASSERT_OK(gatherPixels(v, pixels, lv, out));
  EXPECT_ERROR(gatherPixels(Tensor({8, 2, 4}), pixels, lv, out),
               "gatherPixels", "value", "rank 4");
  EXPECT_ERROR(gatherPixels(v, Tensor({1, 5, 2, 2, 3, 3}), lv, out),
               "gatherPixels", "must be 2");
  EXPECT_ERROR(gatherPixels(Tensor({1, 9, 2, 4}), pixels, lv, out),
               "gatherPixels", "Lv = 9", "8 positions");
}

// The lowering of --attn-lower-deformable in runtime terms: the bilinear
// sample is the sum over the 4 corners of the gathered pixel times
// (dx ? fx : 1 - fx) (dy ? fy : 1 - fy), corners outside giving 0.
TEST(IdentityTest, BilinearGatherIsFourCornerGathers) {
  const int64_t N = 2, Lq = 3, M = 2, D = 4, L = 2, P = 3;
  std::vector<SpatialLevel> lv = {{3, 5}, {2, 2}};
  Tensor v = random({N, 19, M, D}, 91);
  // Locations in [-0.3, 1.3): corners and whole samples fall outside.
  Tensor loc = random({N, Lq, M, L, P, 2}, 92, -0.3, 1.3);
  for (bool align : {false, true}) {
    Tensor expected;
    ASSERT_OK(bilinearGather(v, loc, lv, align, expected));
    Tensor pixels = loc;
    for (size_t i = 0; i < pixels.data.size(); ++i) {
      int64_t l = (i / (2 * P)) % L;
      double size = (i % 2 == 0) ? lv[l].width : lv[l].height;
      pixels.data[i] = align ? loc.data[i] * (size - 1) : loc.data[i] * size - 0.5;
    }
    Tensor base, x0y0, sum(expected.shape);
    ASSERT_OK(floor(pixels, base));
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        Tensor corner, gathered;
        ASSERT_OK(add(base, T({2}, {double(dx), double(dy)}), corner));
        ASSERT_OK(gatherPixels(v, corner, lv, gathered));
        for (size_t s = 0; s < gathered.data.size() / D; ++s) {
          double fx = pixels.data[2 * s] - base.data[2 * s];
          double fy = pixels.data[2 * s + 1] - base.data[2 * s + 1];
          double weight = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy);
          for (int64_t d = 0; d < D; ++d)
            sum.data[s * D + d] += weight * gathered.data[s * D + d];
        }
      }
    expectIdentity(sum, expected);
  }
}

//===----------------------------------------------------------------------===//
// Primitives of gradients: hand values, errors, and each op as the adjoint
// of its forward op (<forward(x), y> = <x, adjoint(y)> on random tensors,
// 1e-12 relative).
//===----------------------------------------------------------------------===//

double dot(const Tensor &a, const Tensor &b) {
  EXPECT_EQ(a.shape, b.shape) << a.shapeString() << " vs " << b.shapeString();
  double sum = 0.0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
    sum += a.data[i] * b.data[i];
  return sum;
}

void expectAdjoint(double forward, double adjoint) {
  EXPECT_NEAR(forward, adjoint, 1e-12 * std::max(1.0, std::fabs(forward)));
  EXPECT_NE(forward, 0.0); // a vacuous identity proves nothing
}

TEST(GradTest, FeatureMapGrad) {
  Tensor x = T({4}, {-1, 0, 2, -kInf}), dy = T({4}, {2, 3, -4, 5}), out;
  ASSERT_OK(featureMapGrad(x, dy, FeatureMap::Identity, out));
  expectValues(out, {4}, {2, 3, -4, 5});
  ASSERT_OK(featureMapGrad(x, dy, FeatureMap::EluPlusOne, out));
  expectValues(out, {4}, {2 * std::exp(-1.0), 3, -4, 0});
  // relu' is 0 at 0 (as in PyTorch).
  ASSERT_OK(featureMapGrad(x, dy, FeatureMap::Relu, out));
  expectValues(out, {4}, {0, 0, -4, 0});
  EXPECT_ERROR(featureMapGrad(x, Tensor({2, 2}), FeatureMap::Relu, out),
               "featureMapGrad", "4", "2x2", "same shape");
  EXPECT_ERROR(featureMapGrad(x, dy, static_cast<FeatureMap>(7), out),
               "featureMapGrad", "unknown feature map");
  // The derivative of featureMap, by central differences.
  Tensor point = random({8}, 101, -2.0, 2.0),
         ones = T({8}, std::vector(8, 1.0));
  for (FeatureMap map :
       {FeatureMap::Identity, FeatureMap::EluPlusOne, FeatureMap::Relu}) {
    Tensor grad, up, down, shifted = point;
    ASSERT_OK(featureMapGrad(point, ones, map, grad));
    const double h = 1e-6;
    for (double &v : shifted.data)
      v += h;
    ASSERT_OK(featureMap(shifted, map, up));
    for (double &v : shifted.data)
      v -= 2 * h;
    ASSERT_OK(featureMap(shifted, map, down));
    for (size_t i = 0; i < grad.data.size(); ++i)
      EXPECT_NEAR(grad.data[i], (up.data[i] - down.data[i]) / (2 * h), 1e-6)
          << "at " << point.data[i];
  }
}

TEST(GradTest, BroadcastAndUnbroadcast) {
  Tensor out;
  // (2, 1) to (2, 2, 3): a leading dim and the size-1 dim stretch.
  ASSERT_OK(broadcastLike(T({2, 1}, {1, 2}), {2, 2, 3}, out));
  expectValues(out, {2, 2, 3}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  ASSERT_OK(broadcastLike(T({}, {5}), {2}, out));
  expectValues(out, {2}, {5, 5});
  EXPECT_ERROR(broadcastLike(Tensor({2, 3}), {2, 4}, out), "broadcastLike",
               "2x3", "does not broadcast to 2x4");
  EXPECT_ERROR(broadcastLike(Tensor({2, 3}), {3}, out), "broadcastLike",
               "does not broadcast");
  EXPECT_ERROR(broadcastLike(Tensor({2}), {2, 1}, out), "broadcastLike",
               "does not broadcast");
  EXPECT_ERROR(broadcastLike(Tensor({2}), {-2}, out), "broadcastLike",
               "does not broadcast");
  // (2, 2, 3) back to (2, 1): sums over dim 0 and dim 2.
  Tensor g = T({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  ASSERT_OK(unbroadcast(g, {2, 1}, out));
  expectValues(out, {2, 1}, {1 + 2 + 3 + 7 + 8 + 9, 4 + 5 + 6 + 10 + 11 + 12});
  ASSERT_OK(unbroadcast(g, {1, 2, 1}, out));
  expectValues(out, {1, 2, 1}, {30, 48});
  ASSERT_OK(unbroadcast(g, {}, out));
  expectValues(out, {}, {78});
  ASSERT_OK(unbroadcast(g, {2, 2, 3}, out));
  expectClose(out, g);
  EXPECT_ERROR(unbroadcast(g, {2, 2}, out), "unbroadcast", "shape 2x2",
               "does not broadcast to input 2x2x3");
  EXPECT_ERROR(unbroadcast(g, {1, 2, 2, 3}, out), "unbroadcast",
               "does not broadcast");
  // Adjoints of each other, also with a size-1 input dim that stays 1.
  for (std::vector<int64_t> small :
       {std::vector<int64_t>{3, 1}, {1, 3, 4}, {1, 1}, {4}}) {
    Tensor x = random(small, 102), y = random({2, 3, 4}, 103), bx, uy;
    ASSERT_OK(broadcastLike(x, {2, 3, 4}, bx));
    ASSERT_OK(unbroadcast(y, small, uy));
    expectAdjoint(dot(bx, y), dot(x, uy));
  }
}

TEST(GradTest, ReversePrefixSumIsTheAdjoint) {
  Tensor out, x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_OK(prefixSum(x, 1, out, false, /*reverse=*/true));
  expectValues(out, {2, 3}, {6, 5, 3, 15, 11, 6});
  ASSERT_OK(prefixSum(x, 1, out, /*exclusive=*/true, /*reverse=*/true));
  expectValues(out, {2, 3}, {5, 3, 0, 11, 6, 0});
  ASSERT_OK(prefixSum(x, 0, out, true, true));
  expectValues(out, {2, 3}, {4, 5, 6, 0, 0, 0});
  EXPECT_ERROR(prefixSum(x, 2, out, false, true), "prefixSum", "axis 2");
  Tensor a = random({3, 5, 2}, 104), b = random({3, 5, 2}, 105);
  for (bool exclusive : {false, true}) {
    Tensor forward, backward;
    ASSERT_OK(prefixSum(a, 1, forward, exclusive));
    ASSERT_OK(prefixSum(b, 1, backward, exclusive, true));
    expectAdjoint(dot(forward, b), dot(a, backward));
  }
}

TEST(GradTest, InsertSlice) {
  Tensor dest = T({3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  Tensor out;
  ASSERT_OK(
      insertSlice(T({2, 2}, {-1, -2, -3, -4}), dest, {1, 0}, {1, 3}, out));
  expectValues(out, {3, 4}, {0, 1, 2, 3, -1, 11, 12, -2, -3, 21, 22, -4});
  ASSERT_OK(insertSlice(Tensor({0, 2}), dest, {3, 0}, {1, 1}, out));
  expectClose(out, dest);
  EXPECT_ERROR(insertSlice(Tensor({2}), dest, {0, 0}, {1, 1}, out),
               "insertSlice", "one entry per dim", "3x4");
  EXPECT_ERROR(insertSlice(Tensor({2, 2}), dest, {2, 0}, {1, 1}, out),
               "insertSlice", "dim 0", "out of bounds");
  EXPECT_ERROR(insertSlice(Tensor({1, 2}), dest, {0, 1}, {1, 3}, out),
               "insertSlice", "dim 1", "stride 3", "out of bounds");
  EXPECT_ERROR(insertSlice(Tensor({1, 1}), dest, {0, 0}, {1, 0}, out),
               "insertSlice", "stride 0");
  // The adjoint of slice: insert into zeros.
  Tensor x = random({5, 7}, 106), y = random({2, 3}, 107), sliced, inserted;
  ASSERT_OK(slice(x, {1, 0}, {2, 3}, {3, 2}, sliced));
  ASSERT_OK(insertSlice(y, Tensor({5, 7}), {1, 0}, {3, 2}, inserted));
  expectAdjoint(dot(sliced, y), dot(x, inserted));
}

TEST(GradTest, ScatterPixels) {
  // Levels 2x3 (rows 0..5) and 1x2 (rows 6, 7); N = M = D = 1, L = 2,
  // P = 3. Level 0: (2, 1) and (2.5, 1.75) both on row 5, (-1, 0) outside;
  // level 1: (1, 0) on row 7, NaN and (2, 0) add nothing.
  std::vector<SpatialLevel> lv = {{2, 3}, {1, 2}};
  Tensor pixels =
      T({1, 1, 1, 2, 3, 2}, {2, 1, 2.5, 1.75, -1, 0, 1, 0, 0, kNaN, 2, 0});
  Tensor dy = T({1, 1, 1, 2, 3, 1}, {1, 2, 4, 8, 16, 32});
  Tensor out;
  ASSERT_OK(scatterPixels(dy, pixels, lv, out));
  expectValues(out, {1, 8, 1, 1}, {0, 0, 0, 0, 0, 3, 0, 8});
  EXPECT_ERROR(scatterPixels(Tensor({1, 1, 1, 2, 3}), pixels, lv, out),
               "scatterPixels", "cotangent", "rank 6");
  EXPECT_ERROR(scatterPixels(dy, Tensor({1, 1, 1, 2, 3, 3}), lv, out),
               "scatterPixels", "must be 2");
  EXPECT_ERROR(scatterPixels(Tensor({1, 1, 1, 2, 2, 1}), pixels, lv, out),
               "scatterPixels", "must agree in (N, Lq, M, L, P)");
  EXPECT_ERROR(scatterPixels(dy, pixels, {{2, 3}}, out), "scatterPixels",
               "L = 2", "level list has 1");
  EXPECT_ERROR(scatterPixels(dy, pixels, {{2, 3}, {-1, 2}}, out),
               "scatterPixels", "negative size");
  // The adjoint of gatherPixels, with pixels inside and outside the levels.
  const int64_t N = 2, Lq = 3, M = 2, L = 2, P = 4, D = 3;
  Tensor v = random({N, 8, M, D}, 108), cot = random({N, Lq, M, L, P, D}, 109);
  Tensor px = random({N, Lq, M, L, P, 2}, 110, -1.5, 4.0), gathered, scattered;
  ASSERT_OK(gatherPixels(v, px, lv, gathered));
  ASSERT_OK(scatterPixels(cot, px, lv, scattered));
  expectAdjoint(dot(gathered, cot), dot(v, scattered));
}

} // namespace

//===----------------------------------------------------------------------===//
// NaN and Inf (docs/reliability.md): the rule the kernels follow
//===----------------------------------------------------------------------===//

namespace {

/// True when `actual` is NaN exactly at the flat indices `nans` (and finite
/// elsewhere).
::testing::AssertionResult nanAt(const Tensor &actual,
                                 std::vector<size_t> nans) {
  for (size_t i = 0; i < actual.data.size(); ++i) {
    bool expected = std::find(nans.begin(), nans.end(), i) != nans.end();
    if (std::isnan(actual.data[i]) != expected ||
        (!expected && !std::isfinite(actual.data[i])))
      return ::testing::AssertionFailure()
             << "flat index " << i << " is " << actual.data[i];
  }
  return ::testing::AssertionSuccess();
}

} // namespace

TEST(NonFiniteTest, SoftmaxSlices) {
  Tensor out;
  // A NaN or +inf makes its slice NaN (exp(inf - inf)); the other slice of
  // the same tensor is untouched.
  ASSERT_OK(normalize(T({2, 3}, {kNaN, 0, 1, 0, 1, 2}), NormKind::Softmax, 1, 0,
                      out));
  EXPECT_TRUE(nanAt(out, {0, 1, 2}));
  ASSERT_OK(normalize(T({2, 3}, {0, 1, 2, kInf, 0, -kInf}), NormKind::Softmax,
                      1, 0, out));
  EXPECT_TRUE(nanAt(out, {3, 4, 5}));
  // -inf weighs 0; an all -inf slice is 0.
  ASSERT_OK(normalize(T({2, 2}, {-kInf, 0, -kInf, -kInf}), NormKind::Softmax, 1,
                      0, out));
  expectValues(out, {2, 2}, {0, 1, 0, 0});
  // Sum is IEEE: a NaN reaches its slice through the sum.
  ASSERT_OK(normalize(T({2, 2}, {kNaN, 1, 1, 1}), NormKind::Sum, 1, 0, out));
  EXPECT_TRUE(nanAt(out, {0, 1}));
}

TEST(NonFiniteTest, DotProductRowsAndHiddenEntries) {
  Tensor q = T({2, 1}, {1, 1}), k = T({2, 1}, {1, 2}), v = T({2, 1}, {3, 5});
  Tensor out;
  // A NaN or +inf in a key's feature: every row that sees the key is NaN.
  for (double bad : {kNaN, kInf}) {
    Tensor kb = T({2, 1}, {1, bad});
    ASSERT_OK(dotProductAttention(q, kb, v, nullptr, kSoftmaxKeys, 1.0,
                                  FeatureMap::Identity, false, out));
    EXPECT_TRUE(nanAt(out, {0, 1})) << bad;
    // Causal: key 1 is hidden from query 0, which sees key 0 alone.
    ASSERT_OK(dotProductAttention(q, kb, v, nullptr, kSoftmaxKeys, 1.0,
                                  FeatureMap::Identity, true, out));
    EXPECT_TRUE(nanAt(out, {1})) << bad;
    EXPECT_EQ(out.data[0], 3.0);
    // Nor does a NaN or inf value of a hidden key reach the row.
    Tensor vb = T({2, 1}, {3, bad});
    ASSERT_OK(dotProductAttention(q, k, vb, nullptr, kSoftmaxKeys, 1.0,
                                  FeatureMap::Identity, true, out));
    EXPECT_EQ(out.data[0], 3.0) << bad;
    EXPECT_FALSE(std::isfinite(out.data[1])) << bad;
  }
  // -inf scores weigh 0; a row of -inf scores is 0 (query -inf, keys > 0).
  ASSERT_OK(dotProductAttention(T({2, 1}, {-kInf, 1}), k, v, nullptr,
                                kSoftmaxKeys, 1.0, FeatureMap::Identity, false,
                                out));
  EXPECT_EQ(out.data[0], 0.0);
  EXPECT_TRUE(std::isfinite(out.data[1]));
  // A -inf mask entry hides the score whatever it is: key 1's NaN does not
  // reach row 0, which it masks; but its value enters as 0 * v.
  Tensor mask = T({2, 2}, {0, -kInf, 0, 0});
  ASSERT_OK(dotProductAttention(q, T({2, 1}, {1, kNaN}), v, &mask, kSoftmaxKeys,
                                1.0, FeatureMap::Identity, false, out));
  EXPECT_EQ(out.data[0], 3.0);
  EXPECT_TRUE(std::isnan(out.data[1]));
  ASSERT_OK(dotProductAttention(q, k, T({2, 1}, {3, kNaN}), &mask, kSoftmaxKeys,
                                1.0, FeatureMap::Identity, false, out));
  EXPECT_TRUE(nanAt(out, {0, 1}));
}

TEST(NonFiniteTest, AttentionGradRows) {
  Tensor k = T({2, 1}, {1, 2}), v = T({2, 1}, {3, 5}), dO = T({2, 1}, {1, 1});
  Tensor dq, dk, dv;
  // Row 0's scores are all -inf: its P is 0 (as in the forward), so it adds
  // nothing to dV and its dQ is 0; dK gets 0 * -inf = NaN from it.
  ASSERT_OK(
      attentionGrad(T({2, 1}, {-kInf, 1}), k, v, dO, 1.0, false, dq, dk, dv));
  EXPECT_TRUE(nanAt(dv, {}));
  EXPECT_EQ(dq.data[0], 0.0);
  EXPECT_TRUE(nanAt(dk, {0, 1}));
  // A NaN score makes its row's P NaN: every dV entry, and its dQ.
  ASSERT_OK(
      attentionGrad(T({2, 1}, {kNaN, 1}), k, v, dO, 1.0, false, dq, dk, dv));
  EXPECT_TRUE(nanAt(dv, {0, 1}));
  EXPECT_TRUE(std::isnan(dq.data[0]));
}

// With the forward's saved output, D = rowsum(dO * O) is taken from it
// instead of from P and dP: the same gradients (up to rounding), also
// causal; the output needs the lse and the result's shape.
TEST(AttentionGradTest, SavedOutputGivesTheSameGradients) {
  Tensor q = T({2, 3, 2}, {0.5, -1, 2, 0.25, -0.5, 1, 1, 1, -2, 0.5, 0, 3});
  Tensor k = T({2, 2}, {1, -0.5, 0.25, 2});
  Tensor v = T({2, 3}, {1, 2, -1, 0.5, -3, 4});
  Tensor dO = T({2, 3, 3}, {1, -1, 2, 0.5, 0.5, -2, 3, 1, 0, -1, 2, 1, 0, 0.25,
                            1, 2, -0.5, 1});
  for (bool causal : {false, true}) {
    Tensor out, lse, dq, dk, dv, dqSaved, dkSaved, dvSaved;
    ASSERT_OK(dotProductAttention(q, k, v, nullptr, kSoftmaxKeys, 0.5,
                                  FeatureMap::Identity, causal, out, &lse));
    ASSERT_OK(attentionGrad(q, k, v, dO, 0.5, causal, dq, dk, dv, &lse));
    ASSERT_OK(attentionGrad(q, k, v, dO, 0.5, causal, dqSaved, dkSaved, dvSaved,
                            &lse, nullptr, &out));
    for (auto [a, b] : {std::pair{&dq, &dqSaved}, std::pair{&dk, &dkSaved},
                        std::pair{&dv, &dvSaved}}) {
      ASSERT_EQ(a->shape, b->shape);
      for (size_t i = 0; i < a->data.size(); ++i)
        EXPECT_NEAR(a->data[i], b->data[i], 1e-12) << causal << " at " << i;
    }
    // A different output changes D, so the gradients: it is read.
    Tensor shifted = out;
    for (double &x : shifted.data)
      x += 1.0;
    ASSERT_OK(attentionGrad(q, k, v, dO, 0.5, causal, dqSaved, dkSaved, dvSaved,
                            &lse, nullptr, &shifted));
    EXPECT_GT(std::abs(dqSaved.data[0] - dq.data[0]), 1e-6);
    EXPECT_ERROR(attentionGrad(q, k, v, dO, 0.5, causal, dqSaved, dkSaved,
                               dvSaved, nullptr, nullptr, &out),
                 "needs lse");
    EXPECT_ERROR(attentionGrad(q, k, v, dO, 0.5, causal, dqSaved, dkSaved,
                               dvSaved, &lse, nullptr, &lse),
                 "output", "the attention's result shape");
  }
}

TEST(NonFiniteTest, FeatureMapsAndTheirGradients) {
  Tensor x = T({3}, {kNaN, -1, 2}), out;
  for (FeatureMap map : {FeatureMap::EluPlusOne, FeatureMap::Relu}) {
    ASSERT_OK(featureMap(x, map, out));
    EXPECT_TRUE(nanAt(out, {0}));
  }
  // relu's gradient stops a non-finite cotangent where x <= 0, passes it
  // where x > 0, and is NaN at a NaN x.
  ASSERT_OK(featureMapGrad(x, T({3}, {1, kNaN, kInf}), FeatureMap::Relu, out));
  EXPECT_TRUE(std::isnan(out.data[0]));
  EXPECT_EQ(out.data[1], 0.0);
  EXPECT_EQ(out.data[2], kInf);
  ASSERT_OK(featureMapGrad(x, T({3}, {1, 1, 1}), FeatureMap::EluPlusOne, out));
  EXPECT_TRUE(nanAt(out, {0}));
}

TEST(NonFiniteTest, SamplingCornersOutsideAddNothing) {
  // One 1x1 level holding 2: the sample at its pixel centre has one corner
  // inside (weight 1) and three outside, which add nothing even with an
  // infinite attention weight (not inf * 0).
  std::vector<SpatialLevel> level = {{1, 1}};
  Tensor value = T({1, 1, 1, 1}, {2});
  Tensor loc = T({1, 1, 1, 1, 1, 2}, {0.5, 0.5}), out;
  ASSERT_OK(deformableAttention(value, loc, T({1, 1, 1, 1, 1}, {kInf}), level,
                                false, out));
  EXPECT_EQ(out.data[0], kInf);
  // A location that is not finite contributes 0, whatever its weight.
  ASSERT_OK(deformableAttention(value, T({1, 1, 1, 1, 1, 2}, {kNaN, 0.5}),
                                T({1, 1, 1, 1, 1}, {kInf}), level, false, out));
  EXPECT_EQ(out.data[0], 0.0);
}
