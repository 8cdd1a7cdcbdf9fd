// Vectorizable sin and cos of fp64 angles, accurate to about 1e-15 absolute for any
// angle a RoPE position can produce (|angle| < 2^31). Halide's sin/cos on double call
// libm one lane at a time; this is a quadrant reduction plus Taylor polynomials.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// {cos(angle), sin(angle)} for a Float(64) `angle`.
std::pair<Halide::Expr, Halide::Expr> cos_sin_f64(Halide::Expr angle);

}  // namespace npukit::ops
