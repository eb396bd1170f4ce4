//===- common.h - Shared pieces of the hand-written yardsticks ------------===//
//
// What both hand-written kernels need: AVX-512 exp, a spinning barrier for a
// persistent pinned thread pool, and the timing of each phase of each run.
// The yardsticks are written the way a careful engineer would write the
// kernel by hand, so that attn's time can be compared with hand-written code
// of the same algorithm in the same run (docs/performance.md, "Hand-written
// yardsticks").
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BENCH_HAND_COMMON_H
#define ATTN_BENCH_HAND_COMMON_H

#if !defined(__AVX512F__)
#error "the hand-written yardsticks need AVX-512 (build with -march=native on an AVX-512 host)"
#endif

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace hand {

using Clock = std::chrono::steady_clock;

/// exp(x) for the softmax weights (x <= 0 after the max is subtracted):
/// k = round(x log2 e), f = x - k ln 2 in two parts (Cody and Waite), e^f
/// by its degree-7 Taylor polynomial (|f| <= ln 2 / 2), times 2^k. Within
/// 1 ulp of exp on [-80, 0] (0.94 at most, over 21 M sampled points); below
/// -88 the weight is 0 to f32 precision.
inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-88.f));
  __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 f = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);
  f = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187e-6f), f);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, k);
}

inline void pinToCpu(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/// The bench rows' shapes: dk features, dv columns, positions per chunk
/// task and per block of a chunk.
constexpr int kFeatures = 32, kColumns = 64, kChunk = 1024, kBlock = 64;

/// The column maxima of the chunk's kChunk rows of k (kFeatures wide),
/// as two vectors.
inline void chunkColumnMax(const float *k, long first, __m512 &max0,
                           __m512 &max1) {
  max0 = max1 = _mm512_set1_ps(-INFINITY);
  for (long i = first; i < first + kChunk; ++i) {
    max0 = _mm512_max_ps(max0, _mm512_loadu_ps(k + i * kFeatures));
    max1 = _mm512_max_ps(max1, _mm512_loadu_ps(k + i * kFeatures + 16));
  }
}

/// exp(row - max of the row) of one row of kFeatures, as two vectors;
/// returns their sum.
inline float rowSoftmaxWeights(const float *row, __m512 &w0, __m512 &w1) {
  __m512 x0 = _mm512_loadu_ps(row), x1 = _mm512_loadu_ps(row + 16);
  __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(_mm512_max_ps(x0, x1)));
  w0 = exp16(_mm512_sub_ps(x0, max));
  w1 = exp16(_mm512_sub_ps(x1, max));
  return _mm512_reduce_add_ps(_mm512_add_ps(w0, w1));
}

/// What a chunk task leaves for the merge: its partial product (K^T V, or
/// the gradient's P^T dE) and its column maxima and sums (the maxima: the
/// softmax over positions only).
struct ChunkPartial {
  alignas(64) float product[kFeatures * kColumns];
  alignas(64) float max[kFeatures];
  alignas(64) float sum[kFeatures];
};

/// partial (kFeatures x kColumns) += weights^T rows over one block:
/// weights kBlock x kFeatures (in L1), rows kBlock x kColumns (streamed),
/// in register tiles of 4 features x kColumns, so every tile reads the
/// block's rows from L1 (K^T V, and the gradient's P^T dE).
inline void addBlockProduct(float *partial, const float *weights,
                            const float *rows) {
  for (int d0 = 0; d0 < kFeatures; d0 += 4) {
    __m512 acc[4][4];
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        acc[r][c] = _mm512_load_ps(partial + (d0 + r) * kColumns + 16 * c);
    for (int i = 0; i < kBlock; ++i) {
      const float *row = rows + i * kColumns;
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
        _mm512_store_ps(partial + (d0 + r) * kColumns + 16 * c, acc[r][c]);
  }
}

/// acc = weights (4 rows x kFeatures, in L1) x context (kFeatures x
/// kColumns): one register tile of 4 rows x kColumns (Q C, and the
/// gradient's W dC).
inline void rowsTimesContext(const float *weights, const float *context,
                             __m512 (&acc)[4][4]) {
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
}

/// A barrier that spins: the phases are a few milliseconds, and waking a
/// sleeping thread would cost more than the phase boundaries should.
class Barrier {
public:
  explicit Barrier(int threads) : threads(threads) {}
  void wait() {
    int generation = this->generation.load();
    if (arrived.fetch_add(1) + 1 == threads) {
      arrived = 0;
      this->generation.fetch_add(1);
      return;
    }
    while (this->generation.load() == generation)
      _mm_pause();
  }

private:
  std::atomic<int> arrived{0}, generation{0};
  int threads;
};

/// One step of a kernel: `parallel` runs on every thread (its index and the
/// thread count), `serial` (if any) on thread 0 afterwards, both timed
/// together as the phase `name`.
struct Phase {
  std::string name;
  std::function<void(unsigned, unsigned)> parallel;
  std::function<void()> serial;
};

/// Runs the phases `repeats` times on `threads` pinned threads (created
/// once) and prints the median of each phase's and the whole run's time,
/// the first run left out (warm-up).
inline void runAndReport(const char *kernel, long n, unsigned threads,
                         int repeats, const std::vector<Phase> &phases) {
  std::vector<std::vector<Clock::time_point>> marks(
      repeats, std::vector<Clock::time_point>(phases.size() + 1));
  Barrier barrier(threads);
  auto worker = [&](unsigned thread) {
    pinToCpu(thread);
    for (int run = 0; run < repeats; ++run) {
      barrier.wait();
      if (thread == 0)
        marks[run][0] = Clock::now();
      for (size_t p = 0; p < phases.size(); ++p) {
        phases[p].parallel(thread, threads);
        barrier.wait();
        if (thread == 0) {
          if (phases[p].serial)
            phases[p].serial();
          marks[run][p + 1] = Clock::now();
        }
        barrier.wait();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(worker, t);
  for (std::thread &t : pool)
    t.join();
  auto median = [&](size_t from, size_t to) {
    std::vector<double> ms;
    for (int run = 1; run < repeats; ++run)
      ms.push_back(std::chrono::duration<double, std::milli>(
                       marks[run][to] - marks[run][from])
                       .count());
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
  };
  std::printf("hand %s n=%ld threads=%u: median %.4f ms over %d runs", kernel,
              n, threads, median(0, phases.size()), repeats - 1);
  for (size_t p = 0; p < phases.size(); ++p)
    std::printf("; %s %.4f ms", phases[p].name.c_str(), median(p, p + 1));
  std::printf("\n");
}

/// `count` floats, 64-byte aligned, filled by `fill(index)`.
inline float *allocate(long count, const std::function<float(long)> &fill) {
  size_t bytes = (size_t(count) * sizeof(float) + 63) / 64 * 64;
  auto *data = static_cast<float *>(std::aligned_alloc(64, bytes));
  if (!data) {
    std::fprintf(stderr, "hand: cannot allocate %zu bytes\n", bytes);
    std::exit(1);
  }
  for (long i = 0; i < count; ++i)
    data[i] = fill(i);
  return data;
}

/// Parses argv[first], argv[first + 1], argv[first + 2] (the last
/// arguments): n (positive, a multiple of `multiple`), threads, repeats.
/// `usage` names the arguments for the message on a wrong count.
inline void parseArguments(int argc, char **argv, int first,
                           const char *usage, long multiple, long &n,
                           unsigned &threads, int &repeats) {
  if (argc != first + 3) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    std::exit(2);
  }
  n = std::atol(argv[first]);
  threads = unsigned(std::atoi(argv[first + 1]));
  repeats = std::atoi(argv[first + 2]);
  if (n <= 0 || n % multiple != 0 || threads == 0 || repeats < 2) {
    std::fprintf(stderr,
                 "%s: N must be a positive multiple of %ld, THREADS at "
                 "least 1, REPEATS at least 2\n",
                 argv[0], multiple);
    std::exit(2);
  }
}

} // namespace hand

#endif // ATTN_BENCH_HAND_COMMON_H
