#include "ops/sincos.h"

#include "ops/exact_f64.h"

namespace npukit::ops {

using namespace Halide;

std::pair<Expr, Expr> cos_sin_f64(Expr angle) {
  const auto c = exact_f64;
  // angle = q·π/2 + r, |r| ≤ π/4. π/2 in three parts (Cody–Waite) keeps r exact to
  // ~1e-16 for |q| up to 2^31: each product q·part_k is exact in fp64.
  Expr q = floor(angle * c(0.63661977236758134308) + c(0.5));
  Expr r = ((angle - q * c(1.5707963267341256141)) - q * c(6.0770943833339780e-11)) - q * c(2.0222662487959506e-21);
  Expr r2 = r * r;
  // Taylor series to r^17 / r^18: truncation error below (π/4)^19/19! ≈ 1.3e-18.
  Expr s = c(1.0 / 355687428096000.0) * r2 - c(1.0 / 1307674368000.0);
  s = s * r2 + c(1.0 / 6227020800.0);
  s = s * r2 - c(1.0 / 39916800.0);
  s = s * r2 + c(1.0 / 362880.0);
  s = s * r2 - c(1.0 / 5040.0);
  s = s * r2 + c(1.0 / 120.0);
  s = s * r2 - c(1.0 / 6.0);
  s = r + r * r2 * s;
  Expr k = c(1.0 / 6402373705728000.0) * r2 + c(-1.0 / 20922789888000.0);
  k = k * r2 + c(1.0 / 87178291200.0);
  k = k * r2 - c(1.0 / 479001600.0);
  k = k * r2 + c(1.0 / 3628800.0);
  k = k * r2 - c(1.0 / 40320.0);
  k = k * r2 + c(1.0 / 720.0);
  k = k * r2 - c(1.0 / 24.0);
  k = k * r2 + c(0.5);
  k = c(1.0) - r2 * k;
  // Quadrant: (cos, sin) of q·π/2 + r.
  Expr quadrant = cast<int32_t>(q - floor(q * c(0.25)) * c(4.0));  // q mod 4, in [0, 4)
  Expr cos_v = select(quadrant == 0, k, quadrant == 1, -s, quadrant == 2, -k, s);
  Expr sin_v = select(quadrant == 0, s, quadrant == 1, k, quadrant == 2, -s, -k);
  return {cos_v, sin_v};
}

}  // namespace npukit::ops
