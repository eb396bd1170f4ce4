//===- Npy.h - NumPy .npy files in and out ------------------------*- C++
//-*-===//
//
// Reads and writes the NumPy .npy format (versions 1.0, 2.0 and 3.0) for
// float16, float32 and float64 arrays in C order, little-endian. NumPy has
// no bfloat16: a bf16 argument reads a float32 (or float16, float64) file
// and is rounded on binding, and a bf16 result is written as float32, which
// holds it exactly (docs/precision.md). Anything else (another
// dtype, Fortran order, a truncated or malformed file) is rejected with a
// one-line error that names the file.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_NPY_H
#define ATTN_RUNTIME_NPY_H

#include "runtime/Tensor.h"

#include <string>

namespace attn::runtime {

enum class NpyDType { Float16, Float32, Float64 };

/// Reads `path` into `out` (converted to double).
Status readNpy(const std::string &path, Tensor &out);

/// Parses an in-memory .npy image; `name` only labels error messages.
Status parseNpy(const std::string &bytes, const std::string &name, Tensor &out);

/// Writes `tensor` to `path` as a version 1.0 .npy of `dtype` (values
/// rounded to it, to nearest even).
Status writeNpy(const std::string &path, const Tensor &tensor,
                NpyDType dtype = NpyDType::Float32);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_NPY_H
