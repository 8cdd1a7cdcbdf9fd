// ops/sincos: the vectorized fp64 cos/sin that RoPE angles go through, against long
// double libm over the whole range a position up to 2^20 can produce.
#include <gtest/gtest.h>

#include <cmath>

#include "Halide.h"
#include "ops/sincos.h"
#include "runtime/cpu_features.h"

namespace npukit {
namespace {

TEST(SinCos, MatchesLongDoubleAcrossRopeAngles) {
  using namespace Halide;
  const int n = 1 << 20;
  Buffer<double> angles(n);
  for (int i = 0; i < n; ++i) {
    // Dense near 0 (small positions), then spread to 2^20 rad, plus exact multiples of π/2.
    const double u = double(i) / n;
    angles(i) = (i % 7 == 0) ? (i / 7) * (M_PI / 2) : std::pow(2.0, 40.0 * u - 20.0) * ((i % 2) ? 1 : -1);
  }
  Func f("f");
  Var x("x");
  auto [c, s] = ops::cos_sin_f64(angles(x));
  f(x) = Tuple(c, s);
  f.vectorize(x, 8);
  Realization r = f.realize({n}, Target(halide_cpu_target(cpu_features())));
  Buffer<double> cos_out = r[0], sin_out = r[1];
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const long double a = angles(i);
    // The reduction cannot beat the fp64 rounding of the angle itself: allow ulp(angle).
    const double allowed = 4e-16 + std::ldexp(1.0, std::ilogb(std::fabs(angles(i)) + 1) - 52);
    const double ec = std::fabs(cos_out(i) - double(std::cos(a)));
    const double es = std::fabs(sin_out(i) - double(std::sin(a)));
    worst = std::max(worst, std::max(ec, es) / allowed);
    ASSERT_LE(std::max(ec, es), allowed) << "angle " << angles(i);
  }
  EXPECT_LE(worst, 1.0);
  // Exact at 0, as RoPE position 0 must be the identity.
  EXPECT_EQ(cos_out(0), 1.0);
  EXPECT_EQ(sin_out(0), 0.0);
}

}  // namespace
}  // namespace npukit
