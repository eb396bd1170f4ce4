//===- main.cpp - An app that links attn-generated attention kernels ------===//
//
// Runs two kernels compiled by attn-compile (through attn_add_kernel in
// CMakeLists.txt) on the features of a 128x128 map (n = 16384 positions):
// efficient attention (linear in n) and exact softmax attention (quadratic)
// and prints the time of each. A few output rows of each kernel are checked
// against a direct computation in double, so a broken build cannot pass.
//
//   attn-app [runs]
//
//===----------------------------------------------------------------------===//

#include "efficient_map.h"
#include "softmax_map.h"

#include "HalideBuffer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

constexpr int kSide = 128, kN = kSide * kSide, kDk = 32, kDv = 64;
using Buffer = Halide::Runtime::Buffer<float>;

/// A row-major (rows x cols) matrix: Halide dim 0 is the column.
Buffer matrix(int rows, int cols, std::mt19937 &rng, float scale) {
  Buffer buffer(cols, rows);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  buffer.for_each_value([&](float &x) { x = uniform(rng); });
  return buffer;
}

template <typename Kernel> double medianMs(Kernel &&kernel, int runs) {
  std::vector<double> times;
  for (int run = 0; run < runs; ++run) {
    auto start = std::chrono::steady_clock::now();
    if (int error = kernel()) {
      std::fprintf(stderr, "attn-app: kernel returned error %d\n", error);
      std::exit(1);
    }
    auto stop = std::chrono::steady_clock::now();
    times.push_back(
        std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// Row i of efficient attention (softmax variant), in double.
std::vector<double> efficientRow(const Buffer &q, const Buffer &k,
                                 const Buffer &v, int i) {
  std::vector<double> kMax(kDk, -INFINITY), kSum(kDk, 0.0);
  for (int j = 0; j < kN; ++j)
    for (int d = 0; d < kDk; ++d)
      kMax[d] = std::max(kMax[d], double(k(d, j)));
  std::vector<double> context(kDk * kDv, 0.0);
  for (int j = 0; j < kN; ++j)
    for (int d = 0; d < kDk; ++d) {
      double w = std::exp(k(d, j) - kMax[d]);
      kSum[d] += w;
      for (int e = 0; e < kDv; ++e)
        context[d * kDv + e] += w * v(e, j);
    }
  double qMax = -INFINITY, qSum = 0.0;
  for (int d = 0; d < kDk; ++d)
    qMax = std::max(qMax, double(q(d, i)));
  std::vector<double> rho(kDk);
  for (int d = 0; d < kDk; ++d)
    qSum += rho[d] = std::exp(q(d, i) - qMax);
  std::vector<double> row(kDv, 0.0);
  for (int d = 0; d < kDk; ++d)
    for (int e = 0; e < kDv; ++e)
      row[e] += rho[d] / qSum * context[d * kDv + e] / kSum[d];
  return row;
}

/// Row i of softmax(Q K^T / sqrt(dk)) V, in double.
std::vector<double> softmaxRow(const Buffer &q, const Buffer &k,
                               const Buffer &v, int i) {
  std::vector<double> scores(kN);
  double maxScore = -INFINITY, sum = 0.0;
  for (int j = 0; j < kN; ++j) {
    double s = 0.0;
    for (int d = 0; d < kDk; ++d)
      s += double(q(d, i)) * k(d, j);
    scores[j] = s / std::sqrt(double(kDk));
    maxScore = std::max(maxScore, scores[j]);
  }
  std::vector<double> row(kDv, 0.0);
  for (int j = 0; j < kN; ++j) {
    double w = std::exp(scores[j] - maxScore);
    sum += w;
    for (int e = 0; e < kDv; ++e)
      row[e] += w * v(e, j);
  }
  for (double &x : row)
    x /= sum;
  return row;
}

/// Max |kernel - expected| / max |expected| over a few rows.
template <typename RowFn>
double relError(const Buffer &out, RowFn &&expectedRow) {
  double maxError = 0.0, maxValue = 0.0;
  for (int i : {0, 1, kN / 2, kN - 1}) {
    std::vector<double> expected = expectedRow(i);
    for (int e = 0; e < kDv; ++e) {
      maxError = std::max(maxError, std::fabs(out(e, i) - expected[e]));
      maxValue = std::max(maxValue, std::fabs(expected[e]));
    }
  }
  return maxError / maxValue;
}

} // namespace

int main(int argc, char **argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::mt19937 rng(42);
  // Features of a 128x128 map, projected to queries, keys and values.
  Buffer q = matrix(kN, kDk, rng, 1.0f), k = matrix(kN, kDk, rng, 1.0f);
  Buffer v = matrix(kN, kDv, rng, 1.0f);
  Buffer efficient(kDv, kN), softmax(kDv, kN);

  double efficientMs = medianMs(
      [&] {
        return efficient_map(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(),
                             efficient.raw_buffer());
      },
      runs);
  double softmaxMs = medianMs(
      [&] {
        return softmax_map(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(),
                           softmax.raw_buffer());
      },
      runs);

  double efficientError =
      relError(efficient, [&](int i) { return efficientRow(q, k, v, i); });
  double softmaxError =
      relError(softmax, [&](int i) { return softmaxRow(q, k, v, i); });
  std::printf("feature map %dx%d (n = %d), dk = %d, dv = %d\n", kSide, kSide,
              kN, kDk, kDv);
  std::printf("efficient attention: %.3f ms (rel err %.2e on 4 rows)\n",
              efficientMs, efficientError);
  std::printf("softmax attention:   %.3f ms (rel err %.2e on 4 rows)\n",
              softmaxMs, softmaxError);
  if (!(efficientError <= 1e-4 && softmaxError <= 1e-4)) {
    std::fprintf(stderr, "attn-app: results differ from the direct "
                         "computation\n");
    return 1;
  }
  return 0;
}
