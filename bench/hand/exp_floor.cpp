//===- exp_floor.cpp - What attn's exp costs on the FMA pipes -------------===//
//
// A microbenchmark of the inner loops behind issue 24's item 2 (the linear
// forms at 80% of the roofline, softmax attention at 85% of the FMA peak):
// how many issue slots of the FMA pipes one vector of attn's f32 exp
// (codegen softmaxExp, Algorithm.cpp) takes on this host, measured, not
// counted from a table.
//
//   exp_floor [--iterations N] [--rounds R]
//
// One thread, pinned to CPU 0. The unit is the time of one 512-bit FMA at
// the host's FMA throughput (a "slot"), measured by a loop of 16
// independent FMAs. Printed, one `name value` line each:
//   - `slots <class>`: the slots each instruction class of the exp costs
//     when four of it run next to eight FMAs (0: it issues on other pipes;
//     1: it takes an FMA slot);
//   - `exp_alone`: slots per vector of the exp in a loop of its own (four
//     independent vectors per iteration): what an exp pass costs;
//   - `exp_beside_fmas`: slots each exp vector adds to a loop of 16 FMAs
//     (two exp vectors per iteration): what the exp would cost hidden in a
//     product's loop, its floor on the FMA pipes;
//   - `elu_plus_one_alone`, `elu_plus_one_beside_fmas`: the same for linear
//     attention's feature map (the exp, a compare and a masked add).
//
// The exp is attn's instruction sequence as the x86-64 AVX-512 backend
// emits it for softmaxExp (the block `bench/loop_profile.py` names in any
// softmax kernel): the subtraction of the max, the clamp, the range
// reduction, the degree-5 polynomial, 2^n built in the exponent bits and
// multiplied in, and the NaN test (a compare into a mask) and its blend.
// Each figure is the median over --rounds rounds.
//
//===----------------------------------------------------------------------===//

#if !defined(__AVX512F__)
#error "exp_floor needs AVX-512 (build with -march=native on an AVX-512 host)"
#endif

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// The exp's constants, in the order the asm reads them (each a broadcast
// vector): the clamp, log2(e), -1/2, -ln 2, the magnitude mask, the
// infinity's bits, the polynomial's coefficients, 127 << 23, the row max
// (0, also elu's zero) and elu's 1.
alignas(64) float constants[14][16];
alignas(64) float inputs[64][16];
alignas(64) float outputs[64][16];

void fillConstants() {
  const float values[14] = {-88.0f,       1.44269504f,  -0.5f,
                            -0.693147181f, 0.0f,        0.0f,
                            0.00829031784f, 0.0418979339f, 0.166676357f,
                            0.499991506f,  0.999999702f, 0.0f,
                            0.0f,          1.0f};
  for (int c = 0; c < 14; ++c)
    for (int lane = 0; lane < 16; ++lane)
      constants[c][lane] = values[c];
  auto bits = [](int c, unsigned value) {
    for (int lane = 0; lane < 16; ++lane)
      std::memcpy(&constants[c][lane], &value, 4);
  };
  bits(4, 0x7fffffffu);  // magnitude mask
  bits(5, 0x7f800000u);  // infinity's bits
  bits(11, 127u << 23);  // the exponent bias, shifted
  bits(12, 0u);          // the row max (0: the inputs are already <= 0)
  for (int v = 0; v < 64; ++v)
    for (int lane = 0; lane < 16; ++lane)
      inputs[v][lane] = -0.37f * static_cast<float>(lane + v % 7);
}

// Loads the constants into zmm19..zmm31 and zmm18 (the exps' registers).
#define LOAD_CONSTANTS                                                         \
  "vmovaps 13*64(%[c]), %%zmm18\n"                                             \
  "vmovaps 0*64(%[c]), %%zmm19\n"                                              \
  "vmovaps 1*64(%[c]), %%zmm20\n"                                              \
  "vmovaps 2*64(%[c]), %%zmm21\n"                                              \
  "vmovaps 3*64(%[c]), %%zmm22\n"                                              \
  "vmovaps 4*64(%[c]), %%zmm23\n"                                              \
  "vmovaps 5*64(%[c]), %%zmm24\n"                                              \
  "vmovaps 6*64(%[c]), %%zmm25\n"                                              \
  "vmovaps 7*64(%[c]), %%zmm26\n"                                              \
  "vmovaps 8*64(%[c]), %%zmm27\n"                                              \
  "vmovaps 9*64(%[c]), %%zmm28\n"                                              \
  "vmovaps 10*64(%[c]), %%zmm29\n"                                             \
  "vmovaps 11*64(%[c]), %%zmm30\n"                                             \
  "vmovaps 12*64(%[c]), %%zmm31\n"

// The exp of the clamped T (x in X, U holding log2(e)), into U: the range
// reduction, the polynomial, 2^n in the exponent bits and multiplied in,
// and x itself where x is NaN (the compare into mask K and the blend).
#define EXP_OF_CLAMPED(X, T, U, V, K)                                          \
  "vfmadd213ps %%zmm21, %%zmm" #T ", %%zmm" #U "\n"                            \
  "vcvttps2dq %%zmm" #U ", %%zmm" #U "\n"                                      \
  "vcvtdq2ps %%zmm" #U ", %%zmm" #V "\n"                                       \
  "vpslld $23, %%zmm" #U ", %%zmm" #U "\n"                                     \
  "vpaddd %%zmm30, %%zmm" #U ", %%zmm" #U "\n"                                 \
  "vfmadd132ps %%zmm22, %%zmm" #T ", %%zmm" #V "\n"                            \
  "vandps %%zmm23, %%zmm" #X ", %%zmm" #T "\n"                                 \
  "vpcmpgtd %%zmm24, %%zmm" #T ", %%k" #K "\n"                                 \
  "vmovaps %%zmm25, %%zmm" #T "\n"                                             \
  "vfmadd213ps %%zmm26, %%zmm" #V ", %%zmm" #T "\n"                            \
  "vfmadd213ps %%zmm27, %%zmm" #V ", %%zmm" #T "\n"                            \
  "vfmadd213ps %%zmm28, %%zmm" #V ", %%zmm" #T "\n"                            \
  "vfmadd213ps %%zmm29, %%zmm" #V ", %%zmm" #T "\n"                            \
  "vmulps %%zmm" #V ", %%zmm" #T ", %%zmm" #T "\n"                             \
  "vfmadd213ps %%zmm" #U ", %%zmm" #T ", %%zmm" #U "\n"                        \
  "vmovaps %%zmm" #X ", %%zmm" #U "%{%%k" #K "%}\n"

// One vector of attn's exp: loads inputs[IN], stores outputs[IN], with the
// temporaries X, T, U, V (register numbers) and the mask register K;
// instruction for instruction the exp loop of an attn softmax kernel.
#define EXP(IN, X, T, U, V, K)                                                 \
  "vmovups " #IN "*64(%[in]), %%zmm" #X "\n"                                   \
  "vsubps %%zmm31, %%zmm" #X ", %%zmm" #X "\n"                                 \
  "vmaxps %%zmm19, %%zmm" #X ", %%zmm" #T "\n"                                 \
  "vmovaps %%zmm20, %%zmm" #U "\n" EXP_OF_CLAMPED(X, T, U, V, K)               \
  "vmovaps %%zmm" #U ", " #IN "*64(%[out])\n"

// One vector of linear attention's feature map, elu(x) + 1 (x > 0 ? x + 1 :
// exp(x)), as attn emits it: the exp above without the max, and the
// compare (x > 0, into mask P) and the masked add of 1.
#define ELU_PLUS_ONE(IN, X, T, U, V, K, P)                                     \
  "vmovups " #IN "*64(%[in]), %%zmm" #X "\n"                                   \
  "vmovaps %%zmm20, %%zmm" #U "\n"                                             \
  "vmaxps %%zmm19, %%zmm" #X ", %%zmm" #T "\n"                                 \
  "vcmpltps %%zmm" #X ", %%zmm31, %%k" #P "\n" EXP_OF_CLAMPED(X, T, U, V, K)   \
  "vaddps %%zmm18, %%zmm" #X ", %%zmm" #U "%{%%k" #P "%}\n"                    \
  "vmovaps %%zmm" #U ", " #IN "*64(%[out])\n"

// Eight accumulators (zmm0..7), each FMA reading zmm16 and zmm17.
#define FMA8                                                                   \
  "vfmadd231ps %%zmm16, %%zmm17, %%zmm0\n"                                     \
  "vfmadd231ps %%zmm16, %%zmm17, %%zmm1\n"                                     \
  "vfmadd231ps %%zmm16, %%zmm17, %%zmm2\n"                                     \
  "vfmadd231ps %%zmm16, %%zmm17, %%zmm3\n"                                     \
  "vfmadd231ps %%zmm16, %%zmm17, %%zmm4\n"                                     \
  "vfmadd231ps %%zmm16, %%zmm17, %%zmm5\n"                                     \
  "vfmadd231ps %%zmm16, %%zmm17, %%zmm6\n"                                     \
  "vfmadd231ps %%zmm16, %%zmm17, %%zmm7\n"

#define CLOBBERS                                                               \
  "memory", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "xmm0", "xmm1", "xmm2",  \
      "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",         \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", \
      "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", \
      "xmm27", "xmm28", "xmm29", "xmm30", "xmm31"

// A loop of `iterations` runs of BODY (constants loaded once, the FMA
// sources zeroed), timed; seconds per iteration.
#define TIMED_LOOP(BODY)                                                       \
  [](long iterations) {                                                        \
    auto start = Clock::now();                                                 \
    __asm__ volatile(LOAD_CONSTANTS "vpxord %%zmm16, %%zmm16, %%zmm16\n"       \
                                    "vpxord %%zmm17, %%zmm17, %%zmm17\n"       \
                                    "1:\n" BODY "dec %[n]\n"                   \
                                    "jnz 1b\n"                                 \
                     : [n] "+r"(iterations)                                    \
                     : [c] "r"(constants), [in] "r"(inputs),                   \
                       [out] "r"(outputs)                                      \
                     : CLOBBERS);                                              \
    return std::chrono::duration<double>(Clock::now() - start).count();        \
  }

// Four of one instruction into zmm8..11 (or the masks k1..4), beside FMA8.
#define FOUR(INSTR, D)                                                         \
  INSTR D "8\n" INSTR D "9\n" INSTR D "10\n" INSTR D "11\n"
#define FOUR_MASKS(INSTR)                                                      \
  INSTR "%%k1\n" INSTR "%%k2\n" INSTR "%%k3\n" INSTR "%%k4\n"

using Loop = double (*)(long);

struct Case {
  const char *name;
  Loop loop;
  double perIteration; ///< in slots (filled in)
};

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void pinToCpu0() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

} // namespace

int main(int argc, char **argv) {
  long iterations = 5000000;
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--iterations" || arg == "--rounds") && i + 1 < argc) {
      long value = std::atol(argv[++i]);
      if (value < 1) {
        std::fprintf(stderr, "exp_floor: %s must be at least 1\n",
                     arg.c_str());
        return 2;
      }
      if (arg == "--iterations")
        iterations = value;
      else
        rounds = static_cast<int>(value);
    } else {
      std::fprintf(stderr,
                   "usage: exp_floor [--iterations N] [--rounds R]\n");
      return 2;
    }
  }
  pinToCpu0();
  fillConstants();
  Loop fma16 = TIMED_LOOP(FMA8 FMA8);
  Loop fma8 = TIMED_LOOP(FMA8);
  // The instruction classes of the exp, four beside eight FMAs.
  std::vector<Case> classes = {
      {"vmulps", TIMED_LOOP(FMA8 FOUR("vmulps %%zmm20, %%zmm21, ", "%%zmm"))},
      {"vsubps", TIMED_LOOP(FMA8 FOUR("vsubps %%zmm20, %%zmm21, ", "%%zmm"))},
      {"vmaxps", TIMED_LOOP(FMA8 FOUR("vmaxps %%zmm20, %%zmm21, ", "%%zmm"))},
      {"vcvttps2dq", TIMED_LOOP(FMA8 FOUR("vcvttps2dq %%zmm20, ", "%%zmm"))},
      {"vcvtdq2ps", TIMED_LOOP(FMA8 FOUR("vcvtdq2ps %%zmm20, ", "%%zmm"))},
      {"vpslld", TIMED_LOOP(FMA8 FOUR("vpslld $23, %%zmm20, ", "%%zmm"))},
      {"vpaddd", TIMED_LOOP(FMA8 FOUR("vpaddd %%zmm20, %%zmm21, ", "%%zmm"))},
      {"vandps", TIMED_LOOP(FMA8 FOUR("vandps %%zmm20, %%zmm21, ", "%%zmm"))},
      {"vpcmpgtd_to_mask",
       TIMED_LOOP(FMA8 FOUR_MASKS("vpcmpgtd %%zmm20, %%zmm21, "))},
      {"vcmpltps_to_mask",
       TIMED_LOOP(FMA8 FOUR_MASKS("vcmpltps %%zmm20, %%zmm21, "))},
      {"vmovaps_masked", // the NaN test's blend
       TIMED_LOOP(FMA8 "vmovaps %%zmm20, %%zmm8%{%%k1%}\n"
                       "vmovaps %%zmm20, %%zmm9%{%%k1%}\n"
                       "vmovaps %%zmm20, %%zmm10%{%%k1%}\n"
                       "vmovaps %%zmm20, %%zmm11%{%%k1%}\n")},
  };
  Loop expAlone = TIMED_LOOP(EXP(0, 0, 1, 2, 3, 1) EXP(1, 4, 5, 6, 7, 2)
                                 EXP(2, 8, 9, 10, 11, 3)
                                     EXP(3, 12, 13, 14, 15, 4));
  Loop expBeside = TIMED_LOOP(FMA8 EXP(0, 8, 9, 10, 11, 1) FMA8
                                  EXP(1, 12, 13, 14, 15, 2));
  Loop eluAlone = TIMED_LOOP(ELU_PLUS_ONE(0, 0, 1, 2, 3, 1, 2)
                                 ELU_PLUS_ONE(1, 4, 5, 6, 7, 3, 4)
                                     ELU_PLUS_ONE(2, 8, 9, 10, 11, 5, 6)
                                         ELU_PLUS_ONE(3, 12, 13, 14, 15, 7, 1));
  Loop eluBeside = TIMED_LOOP(FMA8 ELU_PLUS_ONE(0, 8, 9, 10, 11, 1, 2) FMA8
                                  ELU_PLUS_ONE(1, 12, 13, 14, 15, 3, 4));

  // Rounds alternate the loops, so a slow minute of the host falls on all.
  std::vector<double> base16, base8, alone, beside, eluAloneTimes,
      eluBesideTimes;
  std::vector<std::vector<double>> perClass(classes.size());
  for (int round = 0; round < rounds; ++round) {
    base16.push_back(fma16(iterations) / iterations);
    base8.push_back(fma8(iterations) / iterations);
    for (size_t c = 0; c < classes.size(); ++c)
      perClass[c].push_back(classes[c].loop(iterations) / iterations);
    alone.push_back(expAlone(iterations / 4) / (iterations / 4));
    beside.push_back(expBeside(iterations / 2) / (iterations / 2));
    eluAloneTimes.push_back(eluAlone(iterations / 4) / (iterations / 4));
    eluBesideTimes.push_back(eluBeside(iterations / 2) / (iterations / 2));
  }
  double slot = medianOf(base16) / 16;
  double fma8Time = medianOf(base8);
  std::printf("slot_ns %.4f\n", slot * 1e9);
  std::printf("fma8_slots %.2f\n", fma8Time / slot);
  for (size_t c = 0; c < classes.size(); ++c)
    std::printf("slots %s %.2f\n", classes[c].name,
                (medianOf(perClass[c]) - fma8Time) / slot / 4);
  std::printf("exp_alone %.2f\n", medianOf(alone) / slot / 4);
  std::printf("exp_beside_fmas %.2f\n",
              (medianOf(beside) - medianOf(base16)) / slot / 2);
  std::printf("elu_plus_one_alone %.2f\n", medianOf(eluAloneTimes) / slot / 4);
  std::printf("elu_plus_one_beside_fmas %.2f\n",
              (medianOf(eluBesideTimes) - medianOf(base16)) / slot / 2);
  return 0;
}
