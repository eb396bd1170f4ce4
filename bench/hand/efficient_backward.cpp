//===- efficient_backward.cpp - Efficient attention's gradient by hand ----===//
//
//   efficient_backward N THREADS REPEATS
//
// The gradient of E = softmax_features(Q) C, C = softmax_positions(K)^T V
// (Q, K: N x 32, V and dE: N x 64), taking the forward's normalized context
// C as attn's --grad-save-statistics gradient does (docs/training.md), in two
// passes over the rows, in AVX-512 intrinsics:
//  - pass A, per chunk of 1024 rows (chunks shared out over the threads),
//    per block of 64 rows: P = softmax_features(Q) (in L1); the chunk's
//    partial of dC = P^T dE (register tiles of 4 features x 64 columns);
//    dP = dE C^T and dQ = P o (dP - rowsum(dP o P)) (tiles of 8 rows);
//    then the chunk's column max and sum of exp(K - max) (K in L2);
//  - merge (thread 0): dC, K's column max and sum, D = rowsum(dC o C);
//  - pass B, per 4 rows: W = softmax_positions(K) from the statistics,
//    dV = W dC, dK = W o (V dC^T - D).
// That is 88 MB of compulsory traffic at N = 65536 where attn's gradient,
// eight passes of primitive ops, moves about 160 MB (docs/performance.md).
// Checks sampled rows against a float64 evaluation (exit 1 beyond 1e-4 of
// the largest gradient) and prints the median time of each phase.
//
//===----------------------------------------------------------------------===//

#include "common.h"

namespace {

using hand::ChunkPartial;
using hand::kBlock;
using hand::kChunk;
using hand::kColumns;
using hand::kFeatures;

/// What the merge gives pass B: dC and its transpose, K's column max and
/// 1 / sum, and D = rowsum(dC o C).
struct Merged {
  alignas(64) float contextGrad[kFeatures * kColumns];
  alignas(64) float contextGradT[kColumns * kFeatures];
  alignas(64) float keyMax[kFeatures];
  alignas(64) float keyInverseSum[kFeatures];
  alignas(64) float rowDot[kFeatures];
};

void passA(const float *q, const float *k, const float *dE,
           const float *contextT, float *dQ, long first,
           ChunkPartial &partial) {
  for (int j = 0; j < kFeatures * kColumns; j += 16)
    _mm512_store_ps(partial.product + j, _mm512_setzero_ps());
  alignas(64) float probs[kBlock * kFeatures];
  for (long block = first; block < first + kChunk; block += kBlock) {
    for (int i = 0; i < kBlock; ++i) {
      __m512 e0, e1;
      __m512 inverse = _mm512_set1_ps(
          1.0f / hand::rowSoftmaxWeights(q + (block + i) * kFeatures, e0, e1));
      _mm512_store_ps(probs + i * kFeatures, _mm512_mul_ps(e0, inverse));
      _mm512_store_ps(probs + i * kFeatures + 16, _mm512_mul_ps(e1, inverse));
    }
    hand::addBlockProduct(partial.product, probs, dE + block * kColumns);
    for (int i0 = 0; i0 < kBlock; i0 += 8) {
      __m512 acc[8][2];
      for (int r = 0; r < 8; ++r)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
      for (int e = 0; e < kColumns; ++e) {
        __m512 c0 = _mm512_load_ps(contextT + e * kFeatures),
               c1 = _mm512_load_ps(contextT + e * kFeatures + 16);
        for (int r = 0; r < 8; ++r) {
          __m512 g = _mm512_set1_ps(dE[(block + i0 + r) * kColumns + e]);
          acc[r][0] = _mm512_fmadd_ps(g, c0, acc[r][0]);
          acc[r][1] = _mm512_fmadd_ps(g, c1, acc[r][1]);
        }
      }
      for (int r = 0; r < 8; ++r) {
        __m512 p0 = _mm512_load_ps(probs + (i0 + r) * kFeatures),
               p1 = _mm512_load_ps(probs + (i0 + r) * kFeatures + 16);
        __m512 dot = _mm512_set1_ps(_mm512_reduce_add_ps(
            _mm512_fmadd_ps(acc[r][0], p0, _mm512_mul_ps(acc[r][1], p1))));
        float *out = dQ + (block + i0 + r) * kFeatures;
        _mm512_storeu_ps(out, _mm512_mul_ps(p0, _mm512_sub_ps(acc[r][0], dot)));
        _mm512_storeu_ps(out + 16,
                         _mm512_mul_ps(p1, _mm512_sub_ps(acc[r][1], dot)));
      }
    }
  }
  __m512 max0, max1;
  hand::chunkColumnMax(k, first, max0, max1);
  __m512 sum0 = _mm512_setzero_ps(), sum1 = sum0;
  for (long i = first; i < first + kChunk; ++i) {
    const float *row = k + i * kFeatures;
    sum0 = _mm512_add_ps(
        sum0, hand::exp16(_mm512_sub_ps(_mm512_loadu_ps(row), max0)));
    sum1 = _mm512_add_ps(
        sum1, hand::exp16(_mm512_sub_ps(_mm512_loadu_ps(row + 16), max1)));
  }
  _mm512_store_ps(partial.max, max0);
  _mm512_store_ps(partial.max + 16, max1);
  _mm512_store_ps(partial.sum, sum0);
  _mm512_store_ps(partial.sum + 16, sum1);
}

void merge(const std::vector<ChunkPartial> &partials, const float *context,
           Merged &merged) {
  float sum[kFeatures] = {};
  for (int d = 0; d < kFeatures; ++d) {
    merged.keyMax[d] = -INFINITY;
    for (const ChunkPartial &p : partials)
      merged.keyMax[d] = std::max(merged.keyMax[d], p.max[d]);
  }
  std::fill(merged.contextGrad, merged.contextGrad + kFeatures * kColumns,
            0.0f);
  for (const ChunkPartial &p : partials) {
    for (int d = 0; d < kFeatures; ++d)
      sum[d] += std::exp(p.max[d] - merged.keyMax[d]) * p.sum[d];
    for (int j = 0; j < kFeatures * kColumns; ++j)
      merged.contextGrad[j] += p.product[j];
  }
  for (int d = 0; d < kFeatures; ++d) {
    merged.keyInverseSum[d] = 1.0f / sum[d];
    merged.rowDot[d] = 0;
    for (int e = 0; e < kColumns; ++e) {
      float g = merged.contextGrad[d * kColumns + e];
      merged.rowDot[d] += g * context[d * kColumns + e];
      merged.contextGradT[e * kFeatures + d] = g;
    }
  }
}

void passB(const float *k, const float *v, const Merged &m, float *dK,
           float *dV, long first, long end) {
  __m512 max0 = _mm512_load_ps(m.keyMax), max1 = _mm512_load_ps(m.keyMax + 16);
  __m512 inv0 = _mm512_load_ps(m.keyInverseSum),
         inv1 = _mm512_load_ps(m.keyInverseSum + 16);
  __m512 dot0 = _mm512_load_ps(m.rowDot), dot1 = _mm512_load_ps(m.rowDot + 16);
  for (long i = first; i < end; i += 4) {
    alignas(64) float weights[4 * kFeatures];
    for (int r = 0; r < 4; ++r) {
      const float *row = k + (i + r) * kFeatures;
      _mm512_store_ps(
          weights + r * kFeatures,
          _mm512_mul_ps(
              hand::exp16(_mm512_sub_ps(_mm512_loadu_ps(row), max0)), inv0));
      _mm512_store_ps(
          weights + r * kFeatures + 16,
          _mm512_mul_ps(
              hand::exp16(_mm512_sub_ps(_mm512_loadu_ps(row + 16), max1)),
              inv1));
    }
    __m512 acc[4][4];
    hand::rowsTimesContext(weights, m.contextGrad, acc);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        _mm512_storeu_ps(dV + (i + r) * kColumns + 16 * c, acc[r][c]);
    __m512 grad[4][2];
    for (int r = 0; r < 4; ++r)
      grad[r][0] = grad[r][1] = _mm512_setzero_ps();
    for (int e = 0; e < kColumns; ++e) {
      __m512 c0 = _mm512_load_ps(m.contextGradT + e * kFeatures),
             c1 = _mm512_load_ps(m.contextGradT + e * kFeatures + 16);
      for (int r = 0; r < 4; ++r) {
        __m512 x = _mm512_set1_ps(v[(i + r) * kColumns + e]);
        grad[r][0] = _mm512_fmadd_ps(x, c0, grad[r][0]);
        grad[r][1] = _mm512_fmadd_ps(x, c1, grad[r][1]);
      }
    }
    for (int r = 0; r < 4; ++r) {
      float *out = dK + (i + r) * kFeatures;
      _mm512_storeu_ps(out, _mm512_mul_ps(_mm512_load_ps(weights + r * kFeatures),
                                          _mm512_sub_ps(grad[r][0], dot0)));
      _mm512_storeu_ps(out + 16, _mm512_mul_ps(_mm512_load_ps(weights + r * kFeatures + 16),
                                               _mm512_sub_ps(grad[r][1], dot1)));
    }
  }
}

/// The largest error of dQ, dK and dV on every (n / 9)-th row against a
/// float64 evaluation, over the largest of those gradients.
double checkRows(long n, const float *q, const float *k, const float *v,
                 const float *dE, const std::vector<double> &context,
                 const std::vector<double> &keyMax,
                 const std::vector<double> &keySum, const float *dQ,
                 const float *dK, const float *dV) {
  std::vector<double> probs(n * kFeatures), contextGrad(kFeatures * kColumns),
      rowDot(kFeatures);
  for (long i = 0; i < n; ++i) {
    double max = -1e300, sum = 0;
    for (int d = 0; d < kFeatures; ++d)
      max = std::max(max, double(q[i * kFeatures + d]));
    for (int d = 0; d < kFeatures; ++d)
      sum += std::exp(q[i * kFeatures + d] - max);
    for (int d = 0; d < kFeatures; ++d) {
      probs[i * kFeatures + d] = std::exp(q[i * kFeatures + d] - max) / sum;
      for (int e = 0; e < kColumns; ++e)
        contextGrad[d * kColumns + e] +=
            probs[i * kFeatures + d] * dE[i * kColumns + e];
    }
  }
  for (int d = 0; d < kFeatures; ++d)
    for (int e = 0; e < kColumns; ++e)
      rowDot[d] += contextGrad[d * kColumns + e] * context[d * kColumns + e];
  double worst = 0, largest = 0;
  auto compare = [&](double expected, float actual) {
    worst = std::max(worst, std::fabs(expected - actual));
    largest = std::max(largest, std::fabs(expected));
  };
  for (long i = 0; i < n; i += std::max(1L, n / 9)) {
    double dP[kFeatures], dot = 0;
    for (int d = 0; d < kFeatures; ++d) {
      dP[d] = 0;
      for (int e = 0; e < kColumns; ++e)
        dP[d] += dE[i * kColumns + e] * context[d * kColumns + e];
      dot += dP[d] * probs[i * kFeatures + d];
    }
    for (int d = 0; d < kFeatures; ++d) {
      compare(probs[i * kFeatures + d] * (dP[d] - dot), dQ[i * kFeatures + d]);
      double weight = std::exp(k[i * kFeatures + d] - keyMax[d]) / keySum[d];
      double dW = 0;
      for (int e = 0; e < kColumns; ++e)
        dW += v[i * kColumns + e] * contextGrad[d * kColumns + e];
      compare(weight * (dW - rowDot[d]), dK[i * kFeatures + d]);
    }
    for (int e = 0; e < kColumns; ++e) {
      double g = 0;
      for (int d = 0; d < kFeatures; ++d)
        g += std::exp(k[i * kFeatures + d] - keyMax[d]) / keySum[d] *
             contextGrad[d * kColumns + e];
      compare(g, dV[i * kColumns + e]);
    }
  }
  return worst / largest;
}

} // namespace

int main(int argc, char **argv) {
  long n;
  unsigned threads;
  int repeats;
  hand::parseArguments(argc, argv, 1, "N THREADS REPEATS", kChunk, n, threads,
                       repeats);
  std::srand(1);
  auto uniform = [](long) { return float(std::rand()) / float(RAND_MAX); };
  auto zero = [](long) { return 0.0f; };
  float *q = hand::allocate(n * kFeatures, uniform);
  float *k = hand::allocate(n * kFeatures, uniform);
  float *v = hand::allocate(n * kColumns, uniform);
  float *dE = hand::allocate(n * kColumns, uniform);
  float *dQ = hand::allocate(n * kFeatures, zero);
  float *dK = hand::allocate(n * kFeatures, zero);
  float *dV = hand::allocate(n * kColumns, zero);
  // The forward's normalized context (what --grad-save-statistics saves),
  // in float64 for the check and rounded for the kernel.
  std::vector<double> context(kFeatures * kColumns), keyMax(kFeatures, -1e300),
      keySum(kFeatures);
  for (long i = 0; i < n; ++i)
    for (int d = 0; d < kFeatures; ++d)
      keyMax[d] = std::max(keyMax[d], double(k[i * kFeatures + d]));
  for (long i = 0; i < n; ++i)
    for (int d = 0; d < kFeatures; ++d) {
      double w = std::exp(k[i * kFeatures + d] - keyMax[d]);
      keySum[d] += w;
      for (int e = 0; e < kColumns; ++e)
        context[d * kColumns + e] += w * v[i * kColumns + e];
    }
  alignas(64) static float contextF[kFeatures * kColumns],
      contextT[kColumns * kFeatures];
  for (int d = 0; d < kFeatures; ++d)
    for (int e = 0; e < kColumns; ++e) {
      context[d * kColumns + e] /= keySum[d];
      contextF[d * kColumns + e] = float(context[d * kColumns + e]);
      contextT[e * kFeatures + d] = contextF[d * kColumns + e];
    }
  long chunks = n / kChunk;
  std::vector<ChunkPartial> partials(chunks);
  static Merged merged;
  std::vector<hand::Phase> phases = {
      {"passA+merge",
       [&](unsigned t, unsigned threads) {
         for (long c = t; c < chunks; c += threads)
           passA(q, k, dE, contextT, dQ, c * kChunk, partials[c]);
       },
       [&] { merge(partials, contextF, merged); }},
      {"passB",
       [&](unsigned t, unsigned threads) {
         passB(k, v, merged, dK, dV, n / 4 * t / threads * 4,
               n / 4 * (t + 1) / threads * 4);
       },
       nullptr}};
  hand::runAndReport("efficient_backward", n, threads, repeats, phases);
  double error =
      checkRows(n, q, k, v, dE, context, keyMax, keySum, dQ, dK, dV);
  std::printf("check: max err / max gradient %.2e on sampled rows (bound "
              "1e-4)\n",
              error);
  return error <= 1e-4 ? 0 : 1;
}
