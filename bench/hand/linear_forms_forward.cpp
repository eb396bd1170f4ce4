//===- linear_forms_forward.cpp - Efficient and linear attention by hand --===//
//
//   linear_forms_forward efficient|linear N THREADS REPEATS
//
// For Q, K: N x 32 and V: N x 64 (the bench's efficient_n<N> and
// linear_n<N> rows), in AVX-512 intrinsics, with the algorithm attn
// generates (docs/codegen.md, the Efficient row and the linear form):
//  - efficient: E = softmax_features(Q) (softmax_positions(K)^T V);
//  - linear: O = phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1), phi = elu + 1.
// In two phases:
//  - keys: per chunk of 1024 positions (chunks shared out over the
//    threads; efficient: after the chunk's column max), per block of 64
//    positions its weights (exp(K - max) or phi(K), in L1) and their column
//    sums, and the chunk's K^T V partial in register tiles of 4 features x
//    64 columns;
//  - merge (thread 0): the chunks summed (efficient: rescaled to the global
//    max first, and the context divided by the sums: C, 32 x 64);
//  - queries: per 4 rows their weights (efficient: each row's max, exps and
//    sum; linear: phi(Q) and its dot product with the key sums), then the
//    4 x 64 register tile of weights x C, divided by the row's sum.
// Checks sampled rows against a float64 evaluation (exit 1 beyond 1e-5
// relative) and prints the median time of each phase (bench/hand/README.md).
//
//===----------------------------------------------------------------------===//

#include "common.h"

namespace {

using hand::ChunkPartial;
using hand::kBlock;
using hand::kChunk;
using hand::kColumns;
using hand::kFeatures;

/// phi(x) = elu(x) + 1: x + 1 above 0, exp(x) at or below.
inline __m512 eluPlusOne(__m512 x) {
  __mmask16 positive = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
  return _mm512_mask_add_ps(hand::exp16(x), positive, x, _mm512_set1_ps(1.0f));
}

template <bool Softmax>
void keysChunk(const float *k, const float *v, long first,
               ChunkPartial &partial) {
  __m512 max0 = _mm512_setzero_ps(), max1 = max0;
  if (Softmax)
    hand::chunkColumnMax(k, first, max0, max1);
  __m512 sum0 = _mm512_setzero_ps(), sum1 = sum0;
  for (int j = 0; j < kFeatures * kColumns; j += 16)
    _mm512_store_ps(partial.product + j, _mm512_setzero_ps());
  alignas(64) float weights[kBlock * kFeatures];
  for (long block = first; block < first + kChunk; block += kBlock) {
    for (int i = 0; i < kBlock; ++i) {
      const float *row = k + (block + i) * kFeatures;
      __m512 k0 = _mm512_loadu_ps(row), k1 = _mm512_loadu_ps(row + 16);
      __m512 w0 = Softmax ? hand::exp16(_mm512_sub_ps(k0, max0)) : eluPlusOne(k0);
      __m512 w1 = Softmax ? hand::exp16(_mm512_sub_ps(k1, max1)) : eluPlusOne(k1);
      sum0 = _mm512_add_ps(sum0, w0);
      sum1 = _mm512_add_ps(sum1, w1);
      _mm512_store_ps(weights + i * kFeatures, w0);
      _mm512_store_ps(weights + i * kFeatures + 16, w1);
    }
    hand::addBlockProduct(partial.product, weights, v + block * kColumns);
  }
  _mm512_store_ps(partial.max, max0);
  _mm512_store_ps(partial.max + 16, max1);
  _mm512_store_ps(partial.sum, sum0);
  _mm512_store_ps(partial.sum + 16, sum1);
}

/// The context (efficient: normalized, C) and, for linear, the key sums.
template <bool Softmax>
void mergeChunks(const std::vector<ChunkPartial> &partials, float *context,
                 float *keySums) {
  float max[kFeatures] = {};
  std::fill(keySums, keySums + kFeatures, 0.0f);
  if (Softmax)
    for (int d = 0; d < kFeatures; ++d) {
      max[d] = -INFINITY;
      for (const ChunkPartial &p : partials)
        max[d] = std::max(max[d], p.max[d]);
    }
  std::fill(context, context + kFeatures * kColumns, 0.0f);
  for (const ChunkPartial &p : partials)
    for (int d = 0; d < kFeatures; ++d) {
      float rescale = Softmax ? std::exp(p.max[d] - max[d]) : 1.0f;
      keySums[d] += rescale * p.sum[d];
      for (int e = 0; e < kColumns; ++e)
        context[d * kColumns + e] += rescale * p.product[d * kColumns + e];
    }
  if (Softmax)
    for (int d = 0; d < kFeatures; ++d)
      for (int e = 0; e < kColumns; ++e)
        context[d * kColumns + e] /= keySums[d];
}

template <bool Softmax>
void queryRows(const float *q, const float *context, const float *keySums,
               float *out, long first, long end) {
  __m512 sums0 = _mm512_loadu_ps(keySums), sums1 = _mm512_loadu_ps(keySums + 16);
  for (long i = first; i < end; i += 4) {
    alignas(64) float weights[4 * kFeatures];
    float inverse[4];
    for (int r = 0; r < 4; ++r) {
      const float *row = q + (i + r) * kFeatures;
      __m512 w0, w1;
      if (Softmax) {
        inverse[r] = 1.0f / hand::rowSoftmaxWeights(row, w0, w1);
      } else {
        w0 = eluPlusOne(_mm512_loadu_ps(row));
        w1 = eluPlusOne(_mm512_loadu_ps(row + 16));
        inverse[r] = 1.0f / _mm512_reduce_add_ps(_mm512_fmadd_ps(
                                w0, sums0, _mm512_mul_ps(w1, sums1)));
      }
      _mm512_store_ps(weights + r * kFeatures, w0);
      _mm512_store_ps(weights + r * kFeatures + 16, w1);
    }
    __m512 acc[4][4];
    hand::rowsTimesContext(weights, context, acc);
    for (int r = 0; r < 4; ++r) {
      __m512 scale = _mm512_set1_ps(inverse[r]);
      for (int c = 0; c < 4; ++c)
        _mm512_storeu_ps(out + (i + r) * kColumns + 16 * c,
                         _mm512_mul_ps(acc[r][c], scale));
    }
  }
}

double eluPlusOne(double x) { return x > 0 ? x + 1 : std::exp(x); }

/// The largest relative error of `out` on every (n / 7)-th row against a
/// float64 evaluation of the formula.
double checkRows(bool softmax, long n, const float *q, const float *k,
                 const float *v, const float *out) {
  std::vector<double> context(kFeatures * kColumns, 0.0),
      max(kFeatures, softmax ? -1e300 : 0.0), sum(kFeatures, 0.0);
  if (softmax)
    for (long i = 0; i < n; ++i)
      for (int d = 0; d < kFeatures; ++d)
        max[d] = std::max(max[d], double(k[i * kFeatures + d]));
  for (long i = 0; i < n; ++i)
    for (int d = 0; d < kFeatures; ++d) {
      double x = k[i * kFeatures + d];
      double w = softmax ? std::exp(x - max[d]) : eluPlusOne(x);
      sum[d] += w;
      for (int e = 0; e < kColumns; ++e)
        context[d * kColumns + e] += w * v[i * kColumns + e];
    }
  double worst = 0;
  for (long i = 0; i < n; i += std::max(1L, n / 7)) {
    double weights[kFeatures], rowMax = -1e300, denominator = 0;
    for (int d = 0; d < kFeatures; ++d)
      rowMax = std::max(rowMax, double(q[i * kFeatures + d]));
    for (int d = 0; d < kFeatures; ++d) {
      double x = q[i * kFeatures + d];
      weights[d] = softmax ? std::exp(x - rowMax) : eluPlusOne(x);
      denominator += softmax ? weights[d] : weights[d] * sum[d];
    }
    for (int e = 0; e < kColumns; ++e) {
      double expected = 0;
      for (int d = 0; d < kFeatures; ++d)
        expected += weights[d] * context[d * kColumns + e] /
                    (softmax ? sum[d] : 1.0);
      expected /= denominator;
      worst = std::max(worst, std::fabs(expected - out[i * kColumns + e]) /
                                  std::fabs(expected));
    }
  }
  return worst;
}

template <bool Softmax>
int run(const char *kernel, long n, unsigned threads, int repeats) {
  // Uniform in [0, 1), as attn-run --random draws.
  std::srand(1);
  auto uniform = [](long) { return float(std::rand()) / float(RAND_MAX); };
  float *q = hand::allocate(n * kFeatures, uniform);
  float *k = hand::allocate(n * kFeatures, uniform);
  float *v = hand::allocate(n * kColumns, uniform);
  float *out = hand::allocate(n * kColumns, [](long) { return 0.0f; });
  alignas(64) static float context[kFeatures * kColumns];
  alignas(64) static float keySums[kFeatures];
  long chunks = n / kChunk;
  std::vector<ChunkPartial> partials(chunks);
  std::vector<hand::Phase> phases = {
      {"keys+merge",
       [&](unsigned t, unsigned threads) {
         for (long c = t; c < chunks; c += threads)
           keysChunk<Softmax>(k, v, c * kChunk, partials[c]);
       },
       [&] { mergeChunks<Softmax>(partials, context, keySums); }},
      {"queries",
       [&](unsigned t, unsigned threads) {
         queryRows<Softmax>(q, context, keySums, out, n / 4 * t / threads * 4,
                            n / 4 * (t + 1) / threads * 4);
       },
       nullptr}};
  hand::runAndReport(kernel, n, threads, repeats, phases);
  double error = checkRows(Softmax, n, q, k, v, out);
  std::printf("check: max rel err %.2e on sampled rows (bound 1e-5)\n", error);
  return error <= 1e-5 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  const char *usage = "efficient|linear N THREADS REPEATS";
  std::string variant = argc > 1 ? argv[1] : "";
  if (variant != "efficient" && variant != "linear") {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    return 2;
  }
  long n;
  unsigned threads;
  int repeats;
  hand::parseArguments(argc, argv, 2, usage, kChunk, n, threads, repeats);
  return variant == "efficient"
             ? run<true>("efficient_forward", n, threads, repeats)
             : run<false>("linear_forward", n, threads, repeats);
}
