#include "ops/exp_f64.h"

#include "ops/exact_f64.h"

namespace npukit::ops {

using namespace Halide;

Expr exp_f64(Expr x) {
  const auto c = exact_f64;
  x = clamp(x, c(-700.0), c(700.0));  // 2^k below stays a normal fp64 (k >= -1010)
  // x = k·ln 2 + r, |r| <= ln 2 / 2. ln 2 in two parts (Cody–Waite): the high part has 32
  // significant bits, so k·high is exact for |k| < 2^20 and r is exact to ~1e-19.
  // strict_float: reassociated into x − k·(high + low), it loses ~|k| ulps.
  Expr k = floor(x * c(1.4426950408889634074) + c(0.5));
  Expr r = strict_float((x - k * c(0x1.62e42feep-1)) - k * c(0x1.a39ef35793c76p-33));
  // Taylor series to r^13: truncation error below (ln 2 / 2)^14 / 14! ≈ 4e-18.
  Expr p = c(1.0 / 6227020800.0);
  for (double f : {479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0, 2.0,
                   1.0, 1.0}) {
    p = p * r + c(1.0 / f);
  }
  // 2^k from its exponent bits: k in [-1010, 1010], a normal fp64.
  Expr bits = (cast<int64_t>(cast<int32_t>(k)) + 1023) << 52;
  return p * reinterpret(Float(64), bits);
}

}  // namespace npukit::ops
