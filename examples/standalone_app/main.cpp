//===- main.cpp - An app built against an installed attn ------------------===//
//
// Runs the kernel attn_add_kernel compiled from causal_attention.mlir on
// random inputs and compares it with attn's reference runtime (attn::runtime,
// double precision). Prints the max relative error and exits 1 when it
// exceeds 1e-4 (or the kernel fails), so a broken install cannot pass.
//
//   standalone_app
//
//===----------------------------------------------------------------------===//

#include "causal_attention.h"

#include "HalideBuffer.h"
#include "runtime/Reference.h"
#include "runtime/Tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rt = attn::runtime;

namespace {

constexpr int kHeads = 4, kN = 256, kD = 64;

/// A (heads, n, d) tensor of uniform [0, 1) values, and the same values as
/// a Halide buffer (Halide lists dims innermost first: d, n, heads).
Halide::Runtime::Buffer<float> randomInput(uint64_t seed, rt::Tensor &tensor) {
  tensor = rt::Tensor({kHeads, kN, kD});
  rt::fillUniform(tensor, seed);
  Halide::Runtime::Buffer<float> buffer(kD, kN, kHeads);
  for (int h = 0; h < kHeads; ++h)
    for (int i = 0; i < kN; ++i)
      for (int d = 0; d < kD; ++d) {
        float value = static_cast<float>(tensor.data[(h * kN + i) * kD + d]);
        tensor.data[(h * kN + i) * kD + d] = value;
        buffer(d, i, h) = value;
      }
  return buffer;
}

} // namespace

int main() {
  rt::Tensor q, k, v;
  Halide::Runtime::Buffer<float> qBuffer = randomInput(1, q),
                                 kBuffer = randomInput(2, k),
                                 vBuffer = randomInput(3, v);
  Halide::Runtime::Buffer<float> out(kD, kN, kHeads);
  if (int error = causal_attention(qBuffer, kBuffer, vBuffer, out)) {
    std::fprintf(stderr, "standalone_app: the kernel returned error %d\n",
                 error);
    return 1;
  }

  rt::Tensor reference;
  rt::Status status = rt::dotProductAttention(
      q, k, v, nullptr, {{rt::NormKind::Softmax, rt::NormAxis::Keys, 0.0}},
      0.125, rt::FeatureMap::Identity, /*causal=*/true, reference);
  if (!status) {
    std::fprintf(stderr, "standalone_app: %s\n", status.message().c_str());
    return 1;
  }
  double maxError = 0.0, maxValue = 0.0;
  for (int h = 0; h < kHeads; ++h)
    for (int i = 0; i < kN; ++i)
      for (int d = 0; d < kD; ++d) {
        double expected = reference.data[(h * kN + i) * kD + d];
        maxError = std::max(maxError, std::fabs(out(d, i, h) - expected));
        maxValue = std::max(maxValue, std::fabs(expected));
      }
  double relError = maxError / maxValue;
  std::printf("standalone_app: causal attention %dx%dx%d, max rel err %.3e "
              "against the reference runtime\n",
              kHeads, kN, kD, relError);
  return relError <= 1e-4 ? 0 : 1;
}
