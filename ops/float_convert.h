// Conversions between storage types and fp32 arithmetic that keep IEEE semantics.
// Halide 14 converts float16 in software on x86 (no F16C instructions) and turns a NaN
// into an infinity on the way to float16; these helpers keep NaN a NaN both ways.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// `v` (any float type) as fp32.
Halide::Expr widen_to_f32(Halide::Expr v);

// fp32 `v` stored as `t` (float32 or float16), NaN preserved.
Halide::Expr narrow_from_f32(Halide::Expr v, Halide::Type t);

}  // namespace npukit::ops
