//===- efficient_forward.cpp - Efficient attention written by hand --------===//
//
//   efficient_forward N THREADS REPEATS
//
// E = softmax_features(Q) (softmax_positions(K)^T V) for Q, K: N x 32 and
// V: N x 64 (the bench's efficient_n<N> rows), in AVX-512 intrinsics, with
// the algorithm attn generates (docs/codegen.md, the Efficient row):
//  - keys: per chunk of 1024 positions (chunks shared out over the
//    threads), the chunk's column max, then per block of 64 positions its
//    weights exp(K - max) (in L1) and their sums, and the chunk's K^T V
//    partial in register tiles of 4 features x 64 columns;
//  - merge (thread 0): the chunks rescaled to the global max, summed, and
//    divided by the sums: the normalized context C (32 x 64);
//  - queries: per 4 rows, each row's max, exps and sum, then the 4 x 64
//    register tile of weights x C, scaled by 1 / sum, stored.
// Checks sampled rows against a float64 evaluation (exit 1 beyond 1e-5
// relative) and prints the median time of each phase (bench/hand/README.md).
//
//===----------------------------------------------------------------------===//

#include "common.h"

namespace {

constexpr int kFeatures = 32, kColumns = 64, kChunk = 1024, kBlock = 64;

struct ChunkPartial {
  alignas(64) float context[kFeatures * kColumns];
  alignas(64) float max[kFeatures];
  alignas(64) float sum[kFeatures];
};

void keysChunk(const float *k, const float *v, long first,
               ChunkPartial &partial) {
  __m512 max0 = _mm512_set1_ps(-INFINITY), max1 = max0;
  for (long i = first; i < first + kChunk; ++i) {
    max0 = _mm512_max_ps(max0, _mm512_loadu_ps(k + i * kFeatures));
    max1 = _mm512_max_ps(max1, _mm512_loadu_ps(k + i * kFeatures + 16));
  }
  __m512 sum0 = _mm512_setzero_ps(), sum1 = sum0;
  for (int j = 0; j < kFeatures * kColumns; j += 16)
    _mm512_store_ps(partial.context + j, _mm512_setzero_ps());
  alignas(64) float weights[kBlock * kFeatures];
  for (long block = first; block < first + kChunk; block += kBlock) {
    for (int i = 0; i < kBlock; ++i) {
      const float *row = k + (block + i) * kFeatures;
      __m512 w0 = hand::exp16(_mm512_sub_ps(_mm512_loadu_ps(row), max0));
      __m512 w1 = hand::exp16(_mm512_sub_ps(_mm512_loadu_ps(row + 16), max1));
      sum0 = _mm512_add_ps(sum0, w0);
      sum1 = _mm512_add_ps(sum1, w1);
      _mm512_store_ps(weights + i * kFeatures, w0);
      _mm512_store_ps(weights + i * kFeatures + 16, w1);
    }
    for (int d0 = 0; d0 < kFeatures; d0 += 4) {
      __m512 acc[4][4];
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c)
          acc[r][c] = _mm512_load_ps(partial.context + (d0 + r) * kColumns +
                                     16 * c);
      for (int i = 0; i < kBlock; ++i) {
        const float *row = v + (block + i) * kColumns;
        __m512 v0 = _mm512_loadu_ps(row), v1 = _mm512_loadu_ps(row + 16),
               v2 = _mm512_loadu_ps(row + 32), v3 = _mm512_loadu_ps(row + 48);
        for (int r = 0; r < 4; ++r) {
          __m512 w = _mm512_set1_ps(weights[i * kFeatures + d0 + r]);
          acc[r][0] = _mm512_fmadd_ps(w, v0, acc[r][0]);
          acc[r][1] = _mm512_fmadd_ps(w, v1, acc[r][1]);
          acc[r][2] = _mm512_fmadd_ps(w, v2, acc[r][2]);
          acc[r][3] = _mm512_fmadd_ps(w, v3, acc[r][3]);
        }
      }
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c)
          _mm512_store_ps(partial.context + (d0 + r) * kColumns + 16 * c,
                          acc[r][c]);
    }
  }
  _mm512_store_ps(partial.max, max0);
  _mm512_store_ps(partial.max + 16, max1);
  _mm512_store_ps(partial.sum, sum0);
  _mm512_store_ps(partial.sum + 16, sum1);
}

void mergeChunks(const std::vector<ChunkPartial> &partials, float *context) {
  float max[kFeatures], sum[kFeatures] = {};
  for (int d = 0; d < kFeatures; ++d) {
    max[d] = -INFINITY;
    for (const ChunkPartial &p : partials)
      max[d] = std::max(max[d], p.max[d]);
  }
  std::fill(context, context + kFeatures * kColumns, 0.0f);
  for (const ChunkPartial &p : partials)
    for (int d = 0; d < kFeatures; ++d) {
      float rescale = std::exp(p.max[d] - max[d]);
      sum[d] += rescale * p.sum[d];
      for (int e = 0; e < kColumns; ++e)
        context[d * kColumns + e] += rescale * p.context[d * kColumns + e];
    }
  for (int d = 0; d < kFeatures; ++d)
    for (int e = 0; e < kColumns; ++e)
      context[d * kColumns + e] /= sum[d];
}

void queryRows(const float *q, const float *context, float *out, long first,
               long end) {
  for (long i = first; i < end; i += 4) {
    alignas(64) float weights[4 * kFeatures];
    float inverse[4];
    for (int r = 0; r < 4; ++r) {
      const float *row = q + (i + r) * kFeatures;
      __m512 q0 = _mm512_loadu_ps(row), q1 = _mm512_loadu_ps(row + 16);
      __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(_mm512_max_ps(q0, q1)));
      __m512 w0 = hand::exp16(_mm512_sub_ps(q0, max));
      __m512 w1 = hand::exp16(_mm512_sub_ps(q1, max));
      inverse[r] = 1.0f / _mm512_reduce_add_ps(_mm512_add_ps(w0, w1));
      _mm512_store_ps(weights + r * kFeatures, w0);
      _mm512_store_ps(weights + r * kFeatures + 16, w1);
    }
    __m512 acc[4][4];
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        acc[r][c] = _mm512_setzero_ps();
    for (int d = 0; d < kFeatures; ++d) {
      const float *row = context + d * kColumns;
      __m512 c0 = _mm512_load_ps(row), c1 = _mm512_load_ps(row + 16),
             c2 = _mm512_load_ps(row + 32), c3 = _mm512_load_ps(row + 48);
      for (int r = 0; r < 4; ++r) {
        __m512 w = _mm512_set1_ps(weights[r * kFeatures + d]);
        acc[r][0] = _mm512_fmadd_ps(w, c0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(w, c1, acc[r][1]);
        acc[r][2] = _mm512_fmadd_ps(w, c2, acc[r][2]);
        acc[r][3] = _mm512_fmadd_ps(w, c3, acc[r][3]);
      }
    }
    for (int r = 0; r < 4; ++r) {
      __m512 scale = _mm512_set1_ps(inverse[r]);
      for (int c = 0; c < 4; ++c)
        _mm512_storeu_ps(out + (i + r) * kColumns + 16 * c,
                         _mm512_mul_ps(acc[r][c], scale));
    }
  }
}

/// The largest relative error of `out` on every (n / 7)-th row against a
/// float64 evaluation of the formula.
double checkRows(long n, const float *q, const float *k, const float *v,
                 const float *out) {
  std::vector<double> context(kFeatures * kColumns, 0.0), max(kFeatures, -1e300),
      sum(kFeatures, 0.0);
  for (long i = 0; i < n; ++i)
    for (int d = 0; d < kFeatures; ++d)
      max[d] = std::max(max[d], double(k[i * kFeatures + d]));
  for (long i = 0; i < n; ++i)
    for (int d = 0; d < kFeatures; ++d) {
      double w = std::exp(k[i * kFeatures + d] - max[d]);
      sum[d] += w;
      for (int e = 0; e < kColumns; ++e)
        context[d * kColumns + e] += w * v[i * kColumns + e];
    }
  double worst = 0;
  for (long i = 0; i < n; i += std::max(1L, n / 7)) {
    double rowMax = -1e300, rowSum = 0;
    for (int d = 0; d < kFeatures; ++d)
      rowMax = std::max(rowMax, double(q[i * kFeatures + d]));
    for (int d = 0; d < kFeatures; ++d)
      rowSum += std::exp(q[i * kFeatures + d] - rowMax);
    for (int e = 0; e < kColumns; ++e) {
      double expected = 0;
      for (int d = 0; d < kFeatures; ++d)
        expected += std::exp(q[i * kFeatures + d] - rowMax) / rowSum *
                    context[d * kColumns + e] / sum[d];
      worst = std::max(worst, std::fabs(expected - out[i * kColumns + e]) /
                                  std::fabs(expected));
    }
  }
  return worst;
}

} // namespace

int main(int argc, char **argv) {
  long n;
  unsigned threads;
  int repeats;
  hand::parseArguments(argc, argv, kChunk, n, threads, repeats);
  // Uniform in [0, 1), as attn-run --random draws.
  std::srand(1);
  auto uniform = [](long) { return float(std::rand()) / float(RAND_MAX); };
  float *q = hand::allocate(n * kFeatures, uniform);
  float *k = hand::allocate(n * kFeatures, uniform);
  float *v = hand::allocate(n * kColumns, uniform);
  float *out = hand::allocate(n * kColumns, [](long) { return 0.0f; });
  alignas(64) static float context[kFeatures * kColumns];
  long chunks = n / kChunk;
  std::vector<ChunkPartial> partials(chunks);
  std::vector<hand::Phase> phases = {
      {"keys+merge",
       [&](unsigned t, unsigned threads) {
         for (long c = t; c < chunks; c += threads)
           keysChunk(k, v, c * kChunk, partials[c]);
       },
       [&] { mergeChunks(partials, context); }},
      {"queries",
       [&](unsigned t, unsigned threads) {
         queryRows(q, context, out, n / 4 * t / threads * 4,
                   n / 4 * (t + 1) / threads * 4);
       },
       nullptr}};
  hand::runAndReport("efficient_forward", n, threads, repeats, phases);
  double error = checkRows(n, q, k, v, out);
  std::printf("check: max rel err %.2e on sampled rows (bound 1e-5)\n", error);
  return error <= 1e-5 ? 0 : 1;
}
