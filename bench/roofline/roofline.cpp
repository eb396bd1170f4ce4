//===- roofline.cpp - Measured FMA and bf16 dot peaks, memory bandwidths --===//
//
//   roofline [--threads N] [--repeats R] [--array-mib M]
//            [--gather-table-bytes B [--gather-row-floats D]
//             [--gather-pixel-floats S] [--gather-levels HxW,...]]
//
// Measures the ceilings of this machine's roofline with N threads (one
// per core, pinned) and prints them as one JSON object on stdout:
//
//  - fp32 FMA peak: every thread runs independent chains acc = acc * a + b
//    in vector registers (AVX-512 and AVX2, whichever the compiler targets).
//    A chain is latency-bound (4 cycles on recent x86) and a core issues two
//    FMAs per cycle, so at least 8 chains are needed; we use more than that.
//    One FMA counts as 2 FLOPs per lane.
//  - bf16 dot-product peak (AVX512-BF16 only): the same with vdpbf16ps,
//    acc += a[2i] * b[2i] + a[2i+1] * b[2i+1] in each of 16 f32 lanes, the
//    instruction attn uses for the scores Q K^T of softmax attention on bf16
//    Q and K. One vdpbf16ps is 32 multiply-adds, 64 FLOPs. null in the JSON
//    when the compiler does not target AVX512-BF16 (-march=native on a CPU
//    without it): such a CPU has no faster bf16 product than the FMA.
//  - stream bandwidth: STREAM's copy (c = a) and triad (a = b + s * c) over
//    arrays at least 4x the last-level cache, counting the bytes read and
//    written as STREAM does (copy: 2 x 8 bytes per element, triad: 3 x 8).
//  - read bandwidth: every thread sums its slice of one such array (8 bytes
//    per element read, nothing written), as kReadStreams concurrent
//    streams, into several independent vector
//    accumulators: the ceiling of a kernel that only reads, such as LLM
//    decode attention (bench/kernels.py says which rows it binds).
//  - gather bandwidth (with --gather-table-bytes B and --gather-levels):
//    every thread reads the bilinear samples of deformable attention from a
//    table of B bytes laid out as its value tensor: pixels of S floats
//    (--gather-pixel-floats, heads x D) level after level (HxW,...), a
//    sample being the D floats (--gather-row-floats, 32) of a random head
//    at the 4 corners around a uniformly random pixel of a level.
//    bench/run.sh passes the encoder's value tensor, which stays in the
//    last-level cache. GB/s of corner bytes read (4 x D floats a sample).
//
// Every figure is the median of R repeats. Built by bench/run.sh with
// g++ -O3 -march=native -pthread (no -ffast-math: the FMA chains must stay).
//
//===----------------------------------------------------------------------===//

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  size_t mid = samples.size() / 2;
  return samples.size() % 2 ? samples[mid]
                            : 0.5 * (samples[mid - 1] + samples[mid]);
}

/// Pins the calling thread to one CPU so two threads never share a core.
void pinToCpu(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % CPU_SETSIZE, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/// Runs body(thread index) on `threads` pinned threads and returns the wall
/// time from the first start to the last finish.
double runOnThreads(unsigned threads,
                    const std::function<void(unsigned)> &body) {
  std::vector<std::thread> pool;
  Clock::time_point start = Clock::now();
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&body, t] {
      pinToCpu(t);
      body(t);
    });
  for (std::thread &thread : pool)
    thread.join();
  return secondsSince(start);
}

// Sink for results so the compiler cannot drop the FMA chains.
volatile float fmaSink;

/// `Chains` independent chains acc = Step(acc, a, b) on `Vec` registers for
/// `iterations` steps (an FMA, or a bf16 dot product accumulated in f32).
template <typename Vec, typename Operand, int Chains, Vec (*Set1)(float),
          Vec (*Step)(Vec, Operand, Operand), Vec (*Add)(Vec, Vec)>
float accumulatorChains(long iterations, Operand a, Operand b) {
  Vec acc[Chains];
  for (int c = 0; c < Chains; ++c)
    acc[c] = Set1(1.0f + 0.01f * c);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 32
    for (int c = 0; c < Chains; ++c)
      acc[c] = Step(acc[c], a, b);
  }
  Vec sum = acc[0];
  for (int c = 1; c < Chains; ++c)
    sum = Add(sum, acc[c]);
  float lanes[sizeof(Vec) / sizeof(float)];
  std::memcpy(lanes, &sum, sizeof(lanes));
  return lanes[0];
}

// FMA chains acc = acc a + b: a < 1 and b > 0 keep every chain finite and
// far from denormals.
constexpr float kFmaFactor = 0.999999f, kFmaTerm = 1e-3f;

#if defined(__AVX512F__)
__m512 set1x16(float x) { return _mm512_set1_ps(x); }
__m512 fmax16(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
__m512 addx16(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
// 24 of the 32 zmm registers: 3x the latency-bandwidth product of 8.
constexpr int kAvx512Chains = 24;
float avx512Chains(long iterations) {
  return accumulatorChains<__m512, __m512, kAvx512Chains, set1x16, fmax16,
                           addx16>(iterations, set1x16(kFmaFactor),
                                   set1x16(kFmaTerm));
}
#endif

#if defined(__AVX2__) && defined(__FMA__)
__m256 set1x8(float x) { return _mm256_set1_ps(x); }
__m256 fmax8(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
__m256 addx8(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
// 12 of the 16 ymm registers AVX2 code can name (Halide's AVX2 target).
constexpr int kAvx2Chains = 12;
float avx2Chains(long iterations) {
  return accumulatorChains<__m256, __m256, kAvx2Chains, set1x8, fmax8, addx8>(
      iterations, set1x8(kFmaFactor), set1x8(kFmaTerm));
}
#endif

#if defined(__AVX512BF16__)
// As many chains as the AVX-512 FMA peak uses: vdpbf16ps has a longer
// latency than the FMA (6 cycles on Zen 4), and 24 chains still cover two
// issues per cycle.
constexpr int kBf16DotChains = 24;
// One vdpbf16ps: 16 f32 lanes, each 2 bf16 products summed into it.
constexpr int kBf16DotFlops = 16 * 2 * 2;
__m512 dotx16(__m512 acc, __m512bh a, __m512bh b) {
  return _mm512_dpbf16_ps(acc, a, b);
}
/// `kBf16DotChains` independent vdpbf16ps chains for `iterations` steps.
/// Every bf16 of both operands is 1e-3 (bf16 0.0010004), so each step adds
/// 2e-6 to every lane: the chains stay finite and far from denormals.
float bf16DotChains(long iterations) {
  const __m512bh operand =
      _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  return accumulatorChains<__m512, __m512bh, kBf16DotChains, set1x16, dotx16,
                           addx16>(iterations, operand, operand);
}
#endif

struct PeakResult {
  const char *isa;
  double medianGflops, minGflops, maxGflops;
};

/// GFLOP/s of `chains` instructions of `flopsPerInstruction` FLOPs each per
/// iteration on every thread.
PeakResult measurePeak(const char *isa, float (*kernel)(long), int chains,
                       int flopsPerInstruction, unsigned threads,
                       int repeats) {
  // Calibrate on one thread to ~0.2 s per repeat.
  long iterations = 1 << 20;
  for (;;) {
    Clock::time_point start = Clock::now();
    fmaSink = kernel(iterations);
    if (secondsSince(start) > 0.05)
      break;
    iterations *= 2;
  }
  iterations *= 4;
  double flopsPerRun =
      double(chains) * flopsPerInstruction * double(iterations) * threads;
  std::vector<double> gflops;
  for (int r = 0; r < repeats; ++r) {
    std::vector<float> results(threads);
    double seconds = runOnThreads(
        threads, [&](unsigned t) { results[t] = kernel(iterations); });
    fmaSink = results[0];
    gflops.push_back(flopsPerRun / seconds * 1e-9);
  }
  return {isa, median(gflops), *std::min_element(gflops.begin(), gflops.end()),
          *std::max_element(gflops.begin(), gflops.end())};
}

/// Size of the last-level cache in bytes from sysfs (0 if unknown).
size_t lastLevelCacheBytes() {
  size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" +
                       std::to_string(index) + "/size");
    std::string text;
    if (!(file >> text) || text.empty())
      continue;
    size_t value = std::strtoull(text.c_str(), nullptr, 10);
    char unit = text.back();
    if (unit == 'K')
      value <<= 10;
    else if (unit == 'M')
      value <<= 20;
    largest = std::max(largest, value);
  }
  return largest;
}

// Four doubles, one AVX2 register (two with SSE only: the compiler splits).
typedef double Double4 __attribute__((vector_size(32)));

/// Sum of p[0, count) with kReadAccumulators independent vector accumulators,
/// so the loop is bound by loads, not by the latency of one add chain.
/// Loads go through memcpy (no alignment assumed); -O3 makes them vector loads.
constexpr int kReadAccumulators = 8;
/// Concurrent streams per thread: a kernel that reads K and V, or the parts
/// of several tasks, keeps several streams in flight, and one sequential
/// stream per thread left the read ceiling below what such kernels reach
/// (26 against 37 GB/s on the AMD EPYC host).
constexpr int kReadStreams = 4;
double sumSlice(const double *p, size_t count) {
  constexpr size_t step = kReadAccumulators / kReadStreams * 4;
  size_t length = count / kReadStreams / step * step;
  Double4 acc[kReadAccumulators] = {};
  for (size_t i = 0; i < length; i += step) {
#pragma GCC unroll 8
    for (int j = 0; j < kReadAccumulators; ++j) {
      int stream = j % kReadStreams, part = j / kReadStreams;
      Double4 x;
      std::memcpy(&x, p + stream * length + i + 4 * part, sizeof(x));
      acc[j] += x;
    }
  }
  Double4 total = acc[0];
  for (int j = 1; j < kReadAccumulators; ++j)
    total += acc[j];
  double sum = total[0] + total[1] + total[2] + total[3];
  for (size_t i = kReadStreams * length; i < count; ++i)
    sum += p[i];
  return sum;
}

struct StreamResult {
  double copyGBs, triadGBs, copyMinGBs, copyMaxGBs, triadMinGBs, triadMaxGBs;
  double readGBs, readMinGBs, readMaxGBs;
};

StreamResult measureStream(size_t elements, unsigned threads, int repeats) {
  // new[] leaves pages untouched: each thread first-touches its own slice.
  double *a = new (std::nothrow) double[elements],
         *b = new (std::nothrow) double[elements],
         *c = new (std::nothrow) double[elements];
  if (!a || !b || !c) {
    std::fprintf(stderr, "roofline: cannot allocate 3 arrays of %zu MiB\n",
                 elements * sizeof(double) >> 20);
    std::exit(1);
  }
  auto slice = [&](unsigned t, size_t &begin, size_t &end) {
    begin = elements * t / threads;
    end = elements * (t + 1) / threads;
  };
  runOnThreads(threads, [&](unsigned t) {
    size_t begin, end;
    slice(t, begin, end);
    for (size_t i = begin; i < end; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.0;
    }
  });
  const double scalar = 3.0;
  std::vector<double> copy, triad, read;
  std::vector<double> sums(threads);
  // One untimed round of each first, so every page is mapped and warm.
  for (int r = -1; r < repeats; ++r) {
    double copySeconds = runOnThreads(threads, [&](unsigned t) {
      size_t begin, end;
      slice(t, begin, end);
      for (size_t i = begin; i < end; ++i)
        c[i] = a[i];
    });
    double triadSeconds = runOnThreads(threads, [&](unsigned t) {
      size_t begin, end;
      slice(t, begin, end);
      for (size_t i = begin; i < end; ++i)
        a[i] = b[i] + scalar * c[i];
    });
    // b is 2.0 everywhere and never written after the first touch.
    double readSeconds = runOnThreads(threads, [&](unsigned t) {
      size_t begin, end;
      slice(t, begin, end);
      sums[t] = sumSlice(b + begin, end - begin);
    });
    // The sums are used (checked), so the reads cannot be optimized away.
    double sum = 0;
    for (double s : sums)
      sum += s;
    if (sum != 2.0 * double(elements)) {
      std::fprintf(stderr, "roofline: read check failed: sum %g, expected %g\n",
                   sum, 2.0 * double(elements));
      std::exit(1);
    }
    if (r < 0)
      continue;
    copy.push_back(2.0 * sizeof(double) * elements / copySeconds * 1e-9);
    triad.push_back(3.0 * sizeof(double) * elements / triadSeconds * 1e-9);
    read.push_back(1.0 * sizeof(double) * elements / readSeconds * 1e-9);
  }
  // STREAM's check: after the rounds a = b + 3 * a, with a = 1, b = 2 first.
  double expected = 1.0;
  for (int r = -1; r < repeats; ++r)
    expected = 2.0 + scalar * expected;
  for (size_t i : {size_t(0), elements / 2, elements - 1})
    if (a[i] != expected) {
      std::fprintf(stderr, "roofline: stream check failed at %zu\n", i);
      std::exit(1);
    }
  delete[] a;
  delete[] b;
  delete[] c;
  auto minOf = [](const std::vector<double> &v) {
    return *std::min_element(v.begin(), v.end());
  };
  auto maxOf = [](const std::vector<double> &v) {
    return *std::max_element(v.begin(), v.end());
  };
  return {median(copy), median(triad), minOf(copy),  maxOf(copy),
          minOf(triad), maxOf(triad),  median(read), minOf(read),
          maxOf(read)};
}

/// The gather bandwidth (measureGather) with its spread over the repeats.
struct GatherResult {
  double medianGBs, minGBs, maxGBs;
};

/// One feature level of the gathered table: height x width pixels from
/// pixel `start` on (the levels are stored one after the other).
struct GatherLevel {
  long height, width, start;
};

/// Eight floats, one AVX2 register (half an AVX-512 one): the loads of a
/// corner row.
typedef float Float8 __attribute__((vector_size(32)));

/// Sums the 4 corners of every sample: `vectors` (the template's, or the
/// argument's when it is 0) vectors of 8 floats from each corner. The
/// level of sample i is i modulo the level count. A constant count unrolls
/// the loads (a loop over them measured 16-18 GB/s where the unrolled
/// loads took 25-42 on the AMD EPYC Zen 3 host).
template <int Vectors>
double sumCorners(const float *table, const uint32_t *top, size_t samples,
                  const std::vector<uint32_t> &right,
                  const std::vector<uint32_t> &below, int vectors) {
  // Independent sums per corner: no read waits on another's adds.
  Float8 acc[4] = {};
  size_t levels = right.size();
  for (size_t i = 0, level = 0; i < samples; ++i) {
    const float *corner[4] = {table + top[i], table + top[i] + right[level],
                              table + top[i] + below[level],
                              table + top[i] + below[level] + right[level]};
    for (int b = 0; b < (Vectors ? Vectors : vectors); ++b)
      for (int k = 0; k < 4; ++k) {
        Float8 x;
        std::memcpy(&x, corner[k] + 8 * b, sizeof(x));
        acc[k] += x;
      }
    if (++level == levels)
      level = 0;
  }
  Float8 total = acc[0] + acc[1] + acc[2] + acc[3];
  double sum = 0;
  for (int j = 0; j < 8; ++j)
    sum += total[j];
  return sum;
}

/// Reads the bilinear footprint of deformable attention's samples from a
/// table laid out as its value tensor: pixels of `pixelFloats` floats (heads
/// x D), level after level. A sample picks the levels in turn (as every
/// (query, head) samples every level), a head and a pixel (x, y) uniformly
/// in [0, W - 1) x [0, H - 1), and reads the D floats of its head at the 4
/// corners (x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1): two pairs of
/// neighbouring pixels, a level row apart. GB/s of corner bytes read
/// (4 x D floats per sample).
GatherResult measureGather(size_t tableBytes, int rowFloats, int pixelFloats,
                           const std::vector<GatherLevel> &levels,
                           unsigned threads, int repeats) {
  size_t pixels = tableBytes / (sizeof(float) * pixelFloats);
  // On 2 MiB pages where the kernel gives them: the ceiling is the cache's,
  // not the TLB's (4 KiB pages would add a page walk to most random rows).
  constexpr size_t kHugePage = size_t(2) << 20;
  size_t floats = pixels * pixelFloats;
  size_t allocated =
      (floats * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage;
  auto *table = static_cast<float *>(std::aligned_alloc(kHugePage, allocated));
  if (table)
    madvise(table, allocated, MADV_HUGEPAGE);
  if (!table || pixels == 0) {
    std::fprintf(stderr, "roofline: cannot allocate a %zu-byte gather table\n",
                 tableBytes);
    std::exit(1);
  }
  runOnThreads(threads, [&](unsigned t) {
    for (size_t i = floats * t / threads, end = floats * (t + 1) / threads;
         i < end; ++i)
      table[i] = 1.0f;
  });
  int heads = pixelFloats / rowFloats, vectors = rowFloats / 8;
  // Per level, the offsets of the right-hand and the lower corners from
  // the top-left one (0 on a level one pixel wide or high).
  std::vector<uint32_t> right, below;
  for (const GatherLevel &level : levels) {
    right.push_back(level.width > 1 ? uint32_t(pixelFloats) : 0);
    below.push_back(level.height > 1 ? uint32_t(level.width * pixelFloats) : 0);
  }
  // Each thread's samples are drawn before the timing: the top-left
  // corner's float offset, the level being the sample's index modulo the
  // level count. Drawing them between the reads (a random-number chain
  // among the loads) measured 3.8 GB/s where the same reads from drawn
  // offsets took 13-16 GB/s (AMD EPYC Zen 3). 4 bytes a sample, read in
  // order: a small stream next to the 128-byte corners.
  const size_t samples = size_t(1) << 19;
  std::vector<std::vector<uint32_t>> tops(threads);
  runOnThreads(threads, [&](unsigned t) {
    uint64_t state = 0x9E3779B97F4A7C15ull * (t + 1);
    auto draw = [&state](long bound) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return long((state >> 32) * uint64_t(bound) >> 32);
    };
    tops[t].resize(samples);
    for (size_t i = 0; i < samples; ++i) {
      const GatherLevel &level = levels[i % levels.size()];
      long x = level.width > 1 ? draw(level.width - 1) : 0;
      long y = level.height > 1 ? draw(level.height - 1) : 0;
      long pixel = level.start + y * level.width + x;
      tops[t][i] = uint32_t(pixel * pixelFloats + draw(heads) * rowFloats);
    }
  });
  // A constant count where there is one: the corner loads unrolled.
  auto sum = vectors == 1   ? sumCorners<1>
             : vectors == 2 ? sumCorners<2>
             : vectors == 4 ? sumCorners<4>
             : vectors == 8 ? sumCorners<8>
                            : sumCorners<0>;
  std::vector<double> sums(threads), gbs;
  for (int r = -1; r < repeats; ++r) {
    double seconds = runOnThreads(threads, [&](unsigned t) {
      const uint32_t *top = tops[t].data();
      sums[t] = sum(table, top, samples, right, below, vectors);
    });
    for (double sum : sums)
      if (sum != double(samples) * 4 * rowFloats) {
        std::fprintf(stderr, "roofline: gather check failed: sum %g\n", sum);
        std::exit(1);
      }
    if (r >= 0)
      gbs.push_back(double(threads) * samples * 4 * rowFloats * sizeof(float) /
                    seconds * 1e-9);
  }
  std::free(table);
  return {median(gbs), *std::min_element(gbs.begin(), gbs.end()),
          *std::max_element(gbs.begin(), gbs.end())};
}

/// Parses --gather-levels "HxW,HxW,...": the levels one after the other.
std::vector<GatherLevel> parseLevels(const char *text) {
  std::vector<GatherLevel> levels;
  long start = 0;
  const char *p = text;
  while (*p) {
    char *end = nullptr;
    long height = std::strtol(p, &end, 10);
    if (end == p || *end != 'x')
      return {};
    p = end + 1;
    long width = std::strtol(p, &end, 10);
    // At most 2^20 a side, as attn's levels; the offsets are 32-bit.
    if (end == p || (*end && *end != ',') || height <= 0 || width <= 0 ||
        height > (1 << 20) || width > (1 << 20))
      return {};
    levels.push_back({height, width, start});
    start += height * width;
    p = *end ? end + 1 : end;
  }
  return levels;
}

[[noreturn]] void usage(const char *message) {
  std::fprintf(stderr,
               "roofline: %s\nusage: roofline [--threads N] [--repeats R] "
               "[--array-mib M] [--gather-table-bytes B "
               "[--gather-row-floats D] [--gather-pixel-floats S] "
               "[--gather-levels HxW,...]]\n",
               message);
  std::exit(2);
}

long parsePositive(const char *flag, const char *text) {
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (!*text || *end || value <= 0)
    usage((std::string(flag) + " needs a positive integer").c_str());
  return value;
}

} // namespace

int main(int argc, char **argv) {
  unsigned threads = 2;
  int repeats = 9;
  long arrayMib = 0;
  long gatherTableBytes = 0, gatherRowFloats = 32, gatherPixelFloats = 0;
  std::vector<GatherLevel> gatherLevels;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc)
      usage(("missing value after " + flag).c_str());
    if (flag == "--threads")
      threads = parsePositive("--threads", argv[++i]);
    else if (flag == "--repeats")
      repeats = parsePositive("--repeats", argv[++i]);
    else if (flag == "--array-mib")
      arrayMib = parsePositive("--array-mib", argv[++i]);
    else if (flag == "--gather-table-bytes")
      gatherTableBytes = parsePositive("--gather-table-bytes", argv[++i]);
    else if (flag == "--gather-row-floats")
      gatherRowFloats = parsePositive("--gather-row-floats", argv[++i]);
    else if (flag == "--gather-pixel-floats")
      gatherPixelFloats = parsePositive("--gather-pixel-floats", argv[++i]);
    else if (flag == "--gather-levels") {
      gatherLevels = parseLevels(argv[++i]);
      if (gatherLevels.empty())
        usage("--gather-levels needs HxW[,HxW...] with sizes in [1, 2^20]");
    } else
      usage(("unknown flag " + flag).c_str());
  }

  if (gatherRowFloats % 8)
    usage("--gather-row-floats must be a multiple of 8");
  if (gatherPixelFloats == 0)
    gatherPixelFloats = gatherRowFloats;
  if (gatherPixelFloats % gatherRowFloats)
    usage("--gather-pixel-floats must be a multiple of --gather-row-floats");
  if (gatherTableBytes > 0) {
    if (gatherLevels.empty())
      usage("--gather-table-bytes needs --gather-levels");
    if (gatherTableBytes >= (long(1) << 34))
      usage("--gather-table-bytes must be below 16 GiB (32-bit offsets)");
    // Checked before anything is measured: the levels must fit the table.
    const GatherLevel &last = gatherLevels.back();
    long tablePixels =
        gatherTableBytes / long(sizeof(float)) / gatherPixelFloats;
    if (last.start + last.height * last.width > tablePixels)
      usage(("the gather levels hold " +
             std::to_string(last.start + last.height * last.width) +
             " pixels, the table " + std::to_string(tablePixels))
                .c_str());
  }

  // One FMA is 2 FLOPs per lane: 16 lanes on AVX-512, 8 on AVX2.
  std::vector<PeakResult> fma;
#if defined(__AVX512F__)
  fma.push_back(measurePeak("avx512", avx512Chains, kAvx512Chains, 2 * 16,
                            threads, repeats));
#endif
#if defined(__AVX2__) && defined(__FMA__)
  fma.push_back(
      measurePeak("avx2", avx2Chains, kAvx2Chains, 2 * 8, threads, repeats));
#endif
  if (fma.empty())
    usage("built without AVX2+FMA or AVX-512 (build with -march=native)");
  std::vector<PeakResult> bf16Dot; // empty: no AVX512-BF16
#if defined(__AVX512BF16__)
  bf16Dot.push_back(measurePeak("avx512bf16", bf16DotChains, kBf16DotChains,
                                kBf16DotFlops, threads, repeats));
#endif

  size_t llc = lastLevelCacheBytes();
  // STREAM's rule: each array at least 4x the last-level cache.
  size_t arrayBytes = arrayMib > 0 ? size_t(arrayMib) << 20
                                   : std::max<size_t>(4 * llc, size_t(256) << 20);
  // Overcommit would let new[] succeed and the first touch be OOM-killed.
  double physical = double(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (3.0 * arrayBytes > 0.5 * physical)
    usage("3 stream arrays would take more than half of the memory; "
          "lower --array-mib");
  StreamResult stream =
      measureStream(arrayBytes / sizeof(double), threads, repeats);

  GatherResult gather{};
  if (gatherTableBytes > 0)
    gather =
        measureGather(size_t(gatherTableBytes), int(gatherRowFloats),
                      int(gatherPixelFloats), gatherLevels, threads, repeats);

  double peak = 0;
  for (const PeakResult &r : fma)
    peak = std::max(peak, r.medianGflops);
  std::printf("{\n  \"threads\": %u,\n  \"repeats\": %d,\n", threads, repeats);
  std::printf("  \"fma_peak_gflops\": %.2f,\n  \"fma\": {", peak);
  for (size_t i = 0; i < fma.size(); ++i)
    std::printf("%s\n    \"%s\": {\"median_gflops\": %.2f, \"min_gflops\": "
                "%.2f, \"max_gflops\": %.2f}",
                i ? "," : "", fma[i].isa, fma[i].medianGflops,
                fma[i].minGflops, fma[i].maxGflops);
  std::printf("\n  },\n");
  if (bf16Dot.empty()) {
    std::printf("  \"bf16_dot_peak_gflops\": null,\n");
  } else {
    const PeakResult &r = bf16Dot.front();
    std::printf("  \"bf16_dot_peak_gflops\": %.2f,\n  \"bf16_dot\": "
                "{\"isa\": \"%s\", \"median_gflops\": %.2f, "
                "\"min_gflops\": %.2f, \"max_gflops\": %.2f},\n",
                r.medianGflops, r.isa, r.medianGflops, r.minGflops,
                r.maxGflops);
  }
  std::printf("  \"stream_bandwidth_gbs\": %.2f,\n",
              std::max(stream.copyGBs, stream.triadGBs));
  std::printf("  \"read_bandwidth_gbs\": %.2f,\n", stream.readGBs);
  if (gatherTableBytes > 0)
    std::printf("  \"gather_bandwidth_gbs\": %.2f,\n  \"gather\": "
                "{\"table_bytes\": %ld, \"row_floats\": %ld, "
                "\"pixel_floats\": %ld, \"levels\": %zu, \"footprint\": "
                "\"bilinear\", \"median_gbs\": %.2f, \"min_gbs\": %.2f, "
                "\"max_gbs\": %.2f},\n",
                gather.medianGBs, gatherTableBytes, gatherRowFloats,
                gatherPixelFloats, gatherLevels.size(), gather.medianGBs,
                gather.minGBs, gather.maxGBs);
  else
    std::printf("  \"gather_bandwidth_gbs\": null,\n");
  std::printf("  \"stream\": {\n    \"array_bytes\": %zu,\n    \"llc_bytes\": "
              "%zu,\n",
              arrayBytes, llc);
  std::printf("    \"copy\": {\"median_gbs\": %.2f, \"min_gbs\": %.2f, "
              "\"max_gbs\": %.2f},\n",
              stream.copyGBs, stream.copyMinGBs, stream.copyMaxGBs);
  std::printf("    \"triad\": {\"median_gbs\": %.2f, \"min_gbs\": %.2f, "
              "\"max_gbs\": %.2f},\n",
              stream.triadGBs, stream.triadMinGBs, stream.triadMaxGBs);
  std::printf("    \"read\": {\"median_gbs\": %.2f, \"min_gbs\": %.2f, "
              "\"max_gbs\": %.2f}\n  }\n}\n",
              stream.readGBs, stream.readMinGBs, stream.readMaxGBs);
  return 0;
}
