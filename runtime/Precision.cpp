//===- Precision.cpp - Rounding to bf16, f16 and f32 ----------------------===//

#include "runtime/Precision.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace attn::runtime {

namespace {
/// A binary floating-point format by its significand bits (with the
/// implicit one) and its smallest normal exponent.
struct Format {
  int precision;
  int minExponent;
  double maxFinite;
};

Format formatOf(ElementType type) {
  switch (type) {
  case ElementType::Float32:
    return {24, -126, std::numeric_limits<float>::max()};
  case ElementType::BFloat16:
    return {8, -126, 0x1.fep127};
  case ElementType::Float16:
    return {11, -14, 65504.0};
  case ElementType::Float64:
    break;
  }
  return {53, -1022, std::numeric_limits<double>::max()};
}
} // namespace

const char *elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::Float64:
    return "f64";
  case ElementType::Float32:
    return "f32";
  case ElementType::BFloat16:
    return "bf16";
  case ElementType::Float16:
    return "f16";
  }
  return "?";
}

double unitRoundoff(ElementType type) {
  return std::ldexp(1.0, -formatOf(type).precision);
}

double roundTo(ElementType type, double value) {
  if (type == ElementType::Float64 || value == 0.0 || !std::isfinite(value))
    return value;
  Format format = formatOf(type);
  int exponent; // value = m 2^exponent, 0.5 <= |m| < 1
  std::frexp(value, &exponent);
  // The leading bit has weight 2^(exponent - 1); below the normal range the
  // spacing stays that of the smallest normals (gradual underflow).
  int leading = std::max(exponent - 1, format.minExponent);
  double quantum = std::ldexp(1.0, leading - format.precision + 1);
  // Scaling by a power of two is exact; nearbyint rounds ties to even in
  // the default rounding mode.
  double rounded = std::nearbyint(value / quantum) * quantum;
  if (std::fabs(rounded) > format.maxFinite)
    return std::copysign(std::numeric_limits<double>::infinity(), value);
  return rounded;
}

void roundTensor(Tensor &tensor, ElementType type) {
  if (type == ElementType::Float64)
    return;
  for (double &value : tensor.data)
    value = roundTo(type, value);
}

uint16_t float16Bits(double value) {
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  double magnitude = std::fabs(value);
  if (std::isnan(value))
    return sign | 0x7e00;
  if (std::isinf(value) || magnitude > 65504.0)
    return sign | 0x7c00;
  if (magnitude < std::ldexp(1.0, -14)) // subnormal: multiples of 2^-24
    return sign | static_cast<uint16_t>(std::ldexp(magnitude, 24));
  int exponent;
  double mantissa = std::frexp(magnitude, &exponent); // [0.5, 1)
  auto fraction = static_cast<uint16_t>(std::ldexp(mantissa, 11) - 1024);
  return sign | static_cast<uint16_t>((exponent - 1 + 15) << 10) | fraction;
}

double fromFloat16Bits(uint16_t bits) {
  double sign = bits & 0x8000 ? -1.0 : 1.0;
  int exponent = (bits >> 10) & 0x1f;
  int fraction = bits & 0x3ff;
  if (exponent == 0x1f)
    return fraction ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0)
    return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(1024 + fraction, exponent - 25);
}

} // namespace attn::runtime
