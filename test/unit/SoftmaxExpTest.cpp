//===- SoftmaxExpTest.cpp - The f32 exp of the fused softmax steps --------===//
//
// softmaxExp (codegen/Algorithm.h) is a polynomial, not libm: its relative
// error over the x <= 0 a softmax step passes it, the exact 0 below -88
// and NaN kept, checked against std::exp in double on a JIT-compiled,
// vectorized Func.
//
//===----------------------------------------------------------------------===//

#include "codegen/Algorithm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

/// softmaxExp of every value, JIT-compiled for the host and vectorized as
/// the kernels are.
std::vector<float> softmaxExpOf(const std::vector<float> &values) {
  int count = static_cast<int>(values.size());
  Halide::Buffer<float> input(count), output(count);
  for (int i = 0; i < count; ++i)
    input(i) = values[i];
  Halide::Var i("i");
  Halide::Func f("softmax_exp");
  f(i) = mlir::attn::codegen::softmaxExp(input(i));
  f.vectorize(i, 16, Halide::TailStrategy::GuardWithIf);
  f.realize(output, Halide::get_jit_target_from_environment());
  return std::vector<float>(output.begin(), output.end());
}

TEST(SoftmaxExpTest, RelativeErrorBelow5e7OverTheSoftmaxRange) {
  std::vector<float> xs;
  for (int i = 0; i <= 400000; ++i) // [-87, 0], every ~2e-4
    xs.push_back(-87.0f * static_cast<float>(i) / 400000.0f);
  for (int i = 0; i <= 160; ++i) // -1e-8 ... -1: r = x, n = 0
    xs.push_back(-std::pow(10.0f, -8.0f + 0.05f * static_cast<float>(i)));
  std::vector<float> got = softmaxExpOf(xs);
  double worst = 0.0;
  float worstAt = 0.0f;
  for (size_t i = 0; i < xs.size(); ++i) {
    double want = std::exp(static_cast<double>(xs[i]));
    double rel = std::abs(static_cast<double>(got[i]) - want) / want;
    if (rel > worst) {
      worst = rel;
      worstAt = xs[i];
    }
  }
  EXPECT_LT(worst, 5e-7) << "at x = " << worstAt;
  EXPECT_EQ(got[0], 1.0f); // exp(0), the row maximum's weight
}

TEST(SoftmaxExpTest, ExactlyZeroFromMinus88Down) {
  float lowest = std::numeric_limits<float>::lowest();
  float infinity = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {-88.0f, -88.5f, -100.0f, -1e10f, lowest, -infinity};
  for (float got : softmaxExpOf(xs))
    EXPECT_EQ(got, 0.0f);
}

// The NaN rule (docs/reliability.md): a NaN score makes its slice NaN, so
// its weight must stay NaN through the clamp at -88.
TEST(SoftmaxExpTest, NaNStaysNaN) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  for (float got : softmaxExpOf({nan, -nan}))
    EXPECT_TRUE(std::isnan(got));
}

} // namespace
