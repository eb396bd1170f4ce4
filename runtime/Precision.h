//===- Precision.h - Element types the runtime stores exactly -----*- C++
//-*-===//
//
// The reference runtime computes in double, but a tensor declared bf16, f16
// or f32 holds only the values of that type: inputs are rounded when they
// are bound and results when they are produced (docs/precision.md). Rounding
// is to nearest, ties to even, straight from double (no double rounding
// through f32), with gradual underflow and overflow to infinity, as IEEE 754
// specifies. No MLIR and no Halide here: this is the oracle's own code.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_PRECISION_H
#define ATTN_RUNTIME_PRECISION_H

#include "runtime/Tensor.h"

#include <cstdint>

namespace attn::runtime {

enum class ElementType { Float64, Float32, BFloat16, Float16 };

/// "f64", "f32", "bf16", "f16", as in MLIR types.
const char *elementTypeName(ElementType type);

/// The unit roundoff 2^-p of `type` (p = significand bits): half the
/// distance from 1 to the next value. bf16: 2^-8, f16: 2^-11, f32: 2^-24.
double unitRoundoff(ElementType type);

/// `value` rounded to the nearest value of `type` (ties to even). NaN and
/// infinities pass through; Float64 is the identity.
double roundTo(ElementType type, double value);

/// Rounds every element of `tensor` to `type`.
void roundTensor(Tensor &tensor, ElementType type);

/// IEEE binary16 bits of `value`, which must be an f16 value (roundTo first);
/// and back.
uint16_t float16Bits(double value);
double fromFloat16Bits(uint16_t bits);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_PRECISION_H
