// A vectorizable exp of fp64 values, within about 2 ulp of the exact value. Halide's exp
// on double calls libm one lane at a time: RoPE's 64 frequencies per call took 13% of a
// decode-shape RoPE call on Zen 3 that way.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// exp(x) for a finite Float(64) `x` in [-700, 700]; outside it, that of the nearest end.
Halide::Expr exp_f64(Halide::Expr x);

}  // namespace npukit::ops
