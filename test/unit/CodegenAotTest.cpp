//===- CodegenAotTest.cpp - AOT kernels linked into a test executable -----===//
//
// The kernels of Inputs/aot_kernels.mlir are compiled by attn-compile at
// build time (attn_add_kernel) and linked here like in any app. Their values
// are checked against loops written in this file (not the reference
// runtime), and wrong buffer sizes must give a non-zero error code.
//
//===----------------------------------------------------------------------===//

#include "aot_attention.h"
#include "aot_dynamic_add.h"

#include "HalideBuffer.h"
#include "HalideRuntime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using Buffer = Halide::Runtime::Buffer<float>;

/// Fills a row-major (rows x cols) matrix with deterministic values in
/// [-1, 1).
Buffer matrix(int rows, int cols, int seed) {
  Buffer buffer(cols, rows);
  buffer.for_each_element([&](int c, int r) {
    buffer(c, r) =
        static_cast<float>(((r * 31 + c * 17 + seed * 7) % 23) / 11.5 - 1.0);
  });
  return buffer;
}

/// Causal softmax attention with scale 0.5, in double.
std::vector<double> expectedAttention(const Buffer &q, const Buffer &k,
                                      const Buffer &v) {
  const int n = 5, m = 7, dk = 4, dv = 3;
  std::vector<double> out(n * dv, 0.0);
  for (int i = 0; i < n; ++i) {
    std::vector<double> weights(m, 0.0);
    double maxScore = -INFINITY, sum = 0.0;
    for (int j = 0; j <= i && j < m; ++j) {
      double s = 0.0;
      for (int d = 0; d < dk; ++d)
        s += double(q(d, i)) * k(d, j);
      weights[j] = 0.5 * s;
      maxScore = std::max(maxScore, weights[j]);
    }
    for (int j = 0; j <= i && j < m; ++j)
      sum += weights[j] = std::exp(weights[j] - maxScore);
    for (int j = 0; j <= i && j < m; ++j)
      for (int e = 0; e < dv; ++e)
        out[i * dv + e] += weights[j] / sum * v(e, j);
  }
  return out;
}

// Captures the runtime's error messages instead of printing them.
std::string lastError;
void recordError(void *, const char *message) { lastError = message; }

class CodegenAot : public ::testing::Test {
protected:
  void SetUp() override {
    lastError.clear();
    halide_set_error_handler(recordError);
  }
};

TEST_F(CodegenAot, AttentionMatchesDirectComputation) {
  Buffer q = matrix(5, 4, 1), k = matrix(7, 4, 2), v = matrix(7, 3, 3);
  Buffer out(3, 5);
  ASSERT_EQ(aot_attention(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(),
                          out.raw_buffer()),
            0)
      << lastError;
  std::vector<double> expected = expectedAttention(q, k, v);
  double maxError = 0.0, maxValue = 0.0;
  for (int i = 0; i < 5; ++i)
    for (int e = 0; e < 3; ++e) {
      maxError = std::max(maxError, std::fabs(out(e, i) - expected[i * 3 + e]));
      maxValue = std::max(maxValue, std::fabs(expected[i * 3 + e]));
    }
  ASSERT_GT(maxValue, 0.0);
  EXPECT_LE(maxError / maxValue, 1e-4);
}

TEST_F(CodegenAot, WrongInputSizeIsAnError) {
  // k has 6 rows instead of 7.
  Buffer q = matrix(5, 4, 1), k = matrix(6, 4, 2), v = matrix(7, 3, 3);
  Buffer out(3, 5);
  EXPECT_NE(aot_attention(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(),
                          out.raw_buffer()),
            0);
  EXPECT_NE(lastError.find("k"), std::string::npos) << lastError;
}

TEST_F(CodegenAot, WrongOutputSizeIsAnError) {
  Buffer q = matrix(5, 4, 1), k = matrix(7, 4, 2), v = matrix(7, 3, 3);
  Buffer out(3, 4); // 4 rows instead of 5
  EXPECT_NE(aot_attention(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(),
                          out.raw_buffer()),
            0);
}

TEST_F(CodegenAot, DynamicSizesFollowTheInputs) {
  Buffer a = matrix(9, 3, 4), b = matrix(9, 3, 5), out(3, 9);
  ASSERT_EQ(aot_dynamic_add(a.raw_buffer(), b.raw_buffer(), out.raw_buffer()),
            0)
      << lastError;
  for (int r = 0; r < 9; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_FLOAT_EQ(out(c, r), a(c, r) + b(c, r));
}

TEST_F(CodegenAot, DynamicRowsOfOneStretch) {
  // numpy's broadcasting, as in the reference: b's one row is added to
  // every row of a, on either side.
  Buffer a = matrix(4, 3, 4), b = matrix(1, 3, 5), out(3, 4);
  ASSERT_EQ(aot_dynamic_add(a.raw_buffer(), b.raw_buffer(), out.raw_buffer()),
            0)
      << lastError;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_FLOAT_EQ(out(c, r), a(c, r) + b(c, 0));
  Buffer swapped(3, 4);
  ASSERT_EQ(
      aot_dynamic_add(b.raw_buffer(), a.raw_buffer(), swapped.raw_buffer()), 0)
      << lastError;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_FLOAT_EQ(swapped(c, r), out(c, r));
}

TEST_F(CodegenAot, DynamicSizesThatDisagreeAreAnError) {
  // b has more rows than a and neither is 1: no out-of-bounds read, and an
  // error that names the rule and the sizes.
  Buffer a = matrix(4, 3, 4), b = matrix(6, 3, 5), out(3, 4);
  EXPECT_NE(aot_dynamic_add(a.raw_buffer(), b.raw_buffer(), out.raw_buffer()),
            0);
  EXPECT_NE(lastError.find("add_0 leading dim 0 must be 1 or agree at run "
                           "time (dynamic sizes 4 and 6 differ)"),
            std::string::npos)
      << lastError;
  // a has more rows than the output.
  Buffer longer = matrix(8, 3, 4), out4(3, 4);
  EXPECT_NE(aot_dynamic_add(longer.raw_buffer(), longer.raw_buffer(),
                            out4.raw_buffer()),
            0);
}

} // namespace
