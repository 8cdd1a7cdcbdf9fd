// ops/exp_f64: the vectorized fp64 exp behind RoPE's frequencies, against long double libm
// over the exponents theta^(-2i/rotary_dim) produces (theta up to 1e12: [-27.7, 0]) and
// across its whole range.
#include <gtest/gtest.h>

#include <cmath>

#include "Halide.h"
#include "ops/exp_f64.h"
#include "runtime/cpu_features.h"

namespace npukit {
namespace {

Halide::Buffer<double> exp_of(const Halide::Buffer<double>& x) {
  using namespace Halide;
  Func f("f");
  Var i("i");
  f(i) = ops::exp_f64(x(i));
  f.vectorize(i, 8);
  return f.realize({x.width()}, Target(halide_cpu_target(cpu_features())));
}

TEST(ExpF64, WithinTwoUlpsOfLongDouble) {
  const int n = 1 << 20;
  Halide::Buffer<double> x(n);
  for (int i = 0; i < n; ++i) {
    const double u = double(i) / n;
    x(i) = (i % 4 == 0) ? 1400.0 * u - 700.0 : -28.0 * u;  // RoPE's range, densely
  }
  Halide::Buffer<double> y = exp_of(x);
  for (int i = 0; i < n; ++i) {
    const long double exact = std::exp(static_cast<long double>(x(i)));
    const double ulp = std::ldexp(1.0, std::ilogb(static_cast<double>(exact)) - 52);
    ASSERT_LE(std::fabs(static_cast<long double>(y(i)) - exact), 2.0L * ulp) << "x = " << x(i);
  }
}

TEST(ExpF64, ExactAtZeroAndClampedOutsideItsRange) {
  Halide::Buffer<double> x(8);  // a whole vector
  x.fill(0.0);  // RoPE's pair 0: inv_freq must be exactly 1
  x(1) = -800.0;
  x(2) = 800.0;
  x(3) = -700.0;
  Halide::Buffer<double> y = exp_of(x);
  EXPECT_EQ(y(0), 1.0);
  EXPECT_EQ(y(1), y(3));
  EXPECT_TRUE(std::isfinite(y(2)));
  EXPECT_GT(y(1), 0.0);
}

}  // namespace
}  // namespace npukit
