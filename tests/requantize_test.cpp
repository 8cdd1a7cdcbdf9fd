// The kernels' requantization helpers (ops/int8_gemm.h, Halide) against golden's
// (plain C++) on the edge cases the contract names: INT32_MIN · INT32_MIN, every shift
// from −31 to 30, exact .5 ties of both signs, saturation at both ends.
#include <gtest/gtest.h>

#include <climits>
#include <random>

#include "Halide.h"
#include "golden/requantize.h"
#include "ops/int8_gemm.h"
#include "runtime/cpu_features.h"

namespace npukit {
namespace {

using namespace Halide;

Target jit_target() { return Target(halide_cpu_target(cpu_features())); }

std::vector<int32_t> edge_values() {
  std::vector<int32_t> v = {INT32_MIN, INT32_MIN + 1, -(1 << 30), -3, -2, -1, 0, 1, 2, 3, 1 << 30, INT32_MAX - 1, INT32_MAX};
  std::mt19937 rng(3);
  for (int i = 0; i < 200; ++i) v.push_back(static_cast<int32_t>(rng()));
  return v;
}

TEST(Requantize, DoublingHighMulMatchesGolden) {
  const auto vals = edge_values();
  const int n = static_cast<int>(vals.size());
  Buffer<int32_t> a(n), b(n);
  for (int i = 0; i < n; ++i) a(i) = b(i) = vals[i];
  Func f;
  Var x, y;
  f(x, y) = ops::saturating_rounding_doubling_high_mul(a(x), b(y));
  f.vectorize(x, 8, TailStrategy::GuardWithIf);
  Buffer<int32_t> out = f.realize({n, n}, jit_target());
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      ASSERT_EQ(out(i, j), golden::saturating_rounding_doubling_high_mul(vals[i], vals[j])) << vals[i] << " * " << vals[j];
    }
  }
  EXPECT_EQ(out(0, 0), INT32_MAX);  // INT32_MIN · INT32_MIN saturates
}

TEST(Requantize, RoundingDivideByPotMatchesGoldenForEveryExponent) {
  auto vals = edge_values();
  for (int e = 1; e <= 31; ++e) {  // exact .5 ties of both signs at every exponent
    vals.push_back(static_cast<int32_t>((int64_t(3) << (e - 1)) & 0x7fffffff));
    vals.push_back(-static_cast<int32_t>((int64_t(1) << (e - 1))));
  }
  const int n = static_cast<int>(vals.size());
  Buffer<int32_t> x_in(n);
  for (int i = 0; i < n; ++i) x_in(i) = vals[i];
  Func f;
  Var x, e;
  f(x, e) = ops::rounding_divide_by_pot(x_in(x), e);
  Buffer<int32_t> out = f.realize({n, 32}, jit_target());
  for (int i = 0; i < n; ++i) {
    for (int ex = 0; ex < 32; ++ex) ASSERT_EQ(out(i, ex), golden::rounding_divide_by_pot(vals[i], ex)) << vals[i] << " >> " << ex;
  }
}

TEST(Requantize, FixedPointPipelineMatchesGoldenAcrossShiftsAndSaturation) {
  const auto accs = edge_values();
  std::vector<golden::QuantizedMultiplier> qs;
  for (int s = -31; s <= 30; ++s) {
    for (double frac : {0.5, 0.5000001, 0.75, 0.9999999}) {
      if (auto q = golden::quantize_multiplier(std::ldexp(frac, s))) qs.push_back(*q);
    }
  }
  const int n = static_cast<int>(accs.size()), nq = static_cast<int>(qs.size());
  Buffer<int32_t> acc(n), mult(nq), shift(nq);
  for (int i = 0; i < n; ++i) acc(i) = accs[i];
  for (int j = 0; j < nq; ++j) {
    mult(j) = qs[j].multiplier;
    shift(j) = qs[j].shift;
  }
  for (int32_t zp : {-128, -5, 0, 127}) {
    Func f;
    Var x, c;
    f(x, c) = ops::requantize_fixed_point(acc(x), mult(c), shift(c), zp);
    f.vectorize(x, 16, TailStrategy::GuardWithIf);
    Buffer<int8_t> out = f.realize({n, nq}, jit_target());
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < nq; ++j) {
        ASSERT_EQ(out(i, j), golden::requantize_fixed_point(accs[i], qs[j], zp))
            << "acc " << accs[i] << " multiplier " << qs[j].multiplier << " shift " << qs[j].shift << " zp " << zp;
      }
    }
  }
}

TEST(Requantize, FloatModeTiesToEvenAndSaturates) {
  // m = 0.5 makes acc · m an exact .5 for odd acc: ties go to even.
  const std::vector<int32_t> accs = {-5, -3, -1, 1, 3, 5, 255, 257, 1000000, -1000000, INT32_MAX, INT32_MIN};
  const int n = static_cast<int>(accs.size());
  Buffer<int32_t> acc(n);
  for (int i = 0; i < n; ++i) acc(i) = accs[i];
  // Both forms of the rounding, vectorized as the kernels run them (x86: roundps).
  for (ops::Rounding form : {ops::Rounding::portable, ops::Rounding::x86_roundps}) {
    SCOPED_TRACE(form == ops::Rounding::portable ? "portable" : "x86_roundps");
    Func f;
    Var x;
    f(x) = ops::requantize_float(acc(x), 0.5f, 3, form);
    f.vectorize(x, 4, TailStrategy::GuardWithIf);
    Buffer<int8_t> out = f.realize({n}, jit_target());
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(out(i), golden::requantize_float(accs[i], 1.0f, 0.5f, 1.0f, 3)) << accs[i];
    }
    EXPECT_EQ(out(0), static_cast<int8_t>(-2 + 3));  // -2.5 → -2
    EXPECT_EQ(out(1), static_cast<int8_t>(-2 + 3));  // -1.5 → -2
  }
}

}  // namespace
}  // namespace npukit
