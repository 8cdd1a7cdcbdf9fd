// fp64 constants that every backend keeps exact. Halide 14's OpenCL C backend prints a
// Float(64) constant through fp32 (`(double) float_from_bits(…)`), so π/2 split for
// Cody–Waite reduction loses 29 bits and RoPE angles go wrong on OpenCL. A constant written
// as the reinterpretation of its 64 bits survives (`as_double(…ul)`); LLVM folds it back
// into a plain constant on the CPU and CUDA, so nothing else changes.
#pragma once

#include <cstdint>
#include <cstring>

#include "Halide.h"

namespace npukit::ops {

inline Halide::Expr exact_f64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return Halide::reinterpret(Halide::Float(64), Halide::Internal::make_const(Halide::UInt(64), bits));
}

}  // namespace npukit::ops
