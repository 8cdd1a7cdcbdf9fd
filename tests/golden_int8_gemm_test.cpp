// golden/requantize, golden/int8_gemm and golden/int8_gemm_cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "golden/half.h"
#include "golden/int8_gemm.h"
#include "golden/requantize.h"
#include "golden/seed.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");
constexpr int32_t k2p30 = int32_t{1} << 30;

int32_t srdhm(int32_t a, int32_t b) { return saturating_rounding_doubling_high_mul(a, b); }
int32_t rdbpot(int32_t x, int e) { return rounding_divide_by_pot(x, e); }

QuantizedMultiplier qm(double m) {
  const std::optional<QuantizedMultiplier> q = quantize_multiplier(m);
  EXPECT_TRUE(q.has_value()) << m;
  return q.value_or(QuantizedMultiplier{k2p30, 0});
}

// --- SaturatingRoundingDoublingHighMul ---

TEST(GoldenRequantize, HighMulSaturatesOnlyAtMinTimesMin) {
  EXPECT_EQ(srdhm(kMin, kMin), kMax);
  EXPECT_EQ(srdhm(kMin, kMax), -kMax);       // −2³¹ + 1 − 0.49…: truncates toward zero
  EXPECT_EQ(srdhm(kMax, kMin), -kMax);
  EXPECT_EQ(srdhm(kMax, kMax), kMax - 1);    // (2³¹ − 1)² / 2³¹ = 2³¹ − 2 + 2^−31
  EXPECT_EQ(srdhm(kMin, -kMax), kMax);
  EXPECT_EQ(srdhm(kMin, 1), -1);             // −1 exactly
  EXPECT_EQ(srdhm(kMin, -1), 1);
  EXPECT_EQ(srdhm(0, kMin), 0);
  EXPECT_EQ(srdhm(k2p30, k2p30), 1 << 29);   // 0.5 · 0.5 · 2 in Q31
}

// ab / 2³¹ rounds half toward +∞: +0.5 → 1, −0.5 → 0, −1.5 → −1, and a hair past a tie
// goes the other way.
TEST(GoldenRequantize, HighMulRoundsHalfUpWithTheNudge) {
  EXPECT_EQ(srdhm(1, k2p30), 1);
  EXPECT_EQ(srdhm(-1, k2p30), 0);
  EXPECT_EQ(srdhm(1, -k2p30), 0);
  EXPECT_EQ(srdhm(3, k2p30), 2);
  EXPECT_EQ(srdhm(-3, k2p30), -1);
  EXPECT_EQ(srdhm(5, k2p30), 3);
  EXPECT_EQ(srdhm(-5, k2p30), -2);
  EXPECT_EQ(srdhm(k2p30 - 1, 1), 0);         // 0.5 − 2^−31
  EXPECT_EQ(srdhm(-(k2p30 + 1), 1), -1);     // −0.5 − 2^−31
  EXPECT_EQ(srdhm(-k2p30, 1), 0);            // −0.5
  // Sign handling: the sign of ab, not of a or b, picks the nudge.
  EXPECT_EQ(srdhm(-3, -k2p30), 2);
  EXPECT_EQ(srdhm(3, -k2p30), -1);
}

// Against ⌊(ab + 2³⁰) / 2³¹⌋ taken by an arithmetic shift: a different formula for the
// same rounding.
TEST(GoldenRequantize, HighMulMatchesFloorFormulaOnRandomPairs) {
  Rng rng(case_seed("test/int8_gemm/srdhm", 0, 0));
  for (int i = 0; i < 200000; ++i) {
    const int bits = static_cast<int>(rng.integer(1, 32));
    const auto lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
    const auto a = static_cast<int32_t>(rng.integer(lo, hi));
    const auto b = static_cast<int32_t>(rng.integer(kMin, kMax));
    if (a == kMin && b == kMin) continue;
    const int64_t expect = (int64_t{a} * b + (int64_t{1} << 30)) >> 31;
    ASSERT_EQ(srdhm(a, b), expect) << a << " " << b;
    ASSERT_EQ(srdhm(b, a), expect) << a << " " << b;
  }
}

// --- RoundingDivideByPOT ---

TEST(GoldenRequantize, DivideByPotRoundsHalfAwayFromZero) {
  for (int32_t x : {kMin, kMin + 1, -12345, -1, 0, 1, 12345, kMax}) EXPECT_EQ(rdbpot(x, 0), x);
  EXPECT_EQ(rdbpot(1, 1), 1);
  EXPECT_EQ(rdbpot(-1, 1), -1);
  EXPECT_EQ(rdbpot(3, 1), 2);
  EXPECT_EQ(rdbpot(-3, 1), -2);
  EXPECT_EQ(rdbpot(2, 2), 1);
  EXPECT_EQ(rdbpot(-2, 2), -1);
  EXPECT_EQ(rdbpot(6, 2), 2);
  EXPECT_EQ(rdbpot(-6, 2), -2);
  EXPECT_EQ(rdbpot(5, 2), 1);    // 1.25
  EXPECT_EQ(rdbpot(-5, 2), -1);
  EXPECT_EQ(rdbpot(7, 2), 2);    // 1.75
  EXPECT_EQ(rdbpot(-7, 2), -2);
  // exponent 31: the whole int32 range maps to −1, 0, 1.
  EXPECT_EQ(rdbpot(kMax, 31), 1);
  EXPECT_EQ(rdbpot(kMin, 31), -1);
  EXPECT_EQ(rdbpot(k2p30, 31), 1);
  EXPECT_EQ(rdbpot(-k2p30, 31), -1);
  EXPECT_EQ(rdbpot(k2p30 - 1, 31), 0);
  EXPECT_EQ(rdbpot(-(k2p30 - 1), 31), 0);
  EXPECT_EQ(rdbpot(0, 31), 0);
  EXPECT_THROW(rdbpot(1, -1), std::invalid_argument);
  EXPECT_THROW(rdbpot(1, 32), std::invalid_argument);
}

TEST(GoldenRequantize, DivideByPotMatchesSignMagnitudeRounding) {
  Rng rng(case_seed("test/int8_gemm/rdbpot", 0, 0));
  for (int i = 0; i < 200000; ++i) {
    const auto x = static_cast<int32_t>(rng.integer(kMin, kMax) >> rng.integer(0, 31));
    const int e = static_cast<int>(rng.integer(0, 31));
    const int64_t mag = x < 0 ? -int64_t{x} : int64_t{x};
    const int64_t r = e == 0 ? mag : (mag + (int64_t{1} << (e - 1))) >> e;
    ASSERT_EQ(rdbpot(x, e), x < 0 ? -r : r) << x << " " << e;
  }
}

// --- quantize_multiplier ---

void expect_q(double m, int32_t multiplier, int shift) {
  const std::optional<QuantizedMultiplier> q = quantize_multiplier(m);
  ASSERT_TRUE(q.has_value()) << m;
  EXPECT_EQ(q->multiplier, multiplier) << m;
  EXPECT_EQ(q->shift, shift) << m;
}

TEST(GoldenRequantize, QuantizeMultiplierSplitsPowersOfTwo) {
  expect_q(1, k2p30, 1);
  expect_q(0.5, k2p30, 0);
  expect_q(0.75, 3 << 29, 0);
  expect_q(0x1p-32, k2p30, -31);
  expect_q(0x1p29, k2p30, 30);
  expect_q(0.75 * 0x1p30, 3 << 29, 30);
  for (int e = -32; e <= 29; ++e) expect_q(std::ldexp(1.0, e), k2p30, e + 1);
}

TEST(GoldenRequantize, QuantizeMultiplierRoundsAndCarries) {
  expect_q(1 - 0x1p-31, kMax, 0);                 // q·2³¹ = 2³¹ − 1
  expect_q(1 - 3 * 0x1p-33, kMax, 0);             // 2³¹ − 0.75 → 2³¹ − 1
  expect_q(1 - 0x1p-32, k2p30, 1);                // 2³¹ − 0.5: ties away, to 2³¹: carry
  expect_q(std::nextafter(1.0, 0.0), k2p30, 1);   // just below 1
  expect_q(1 - 0x1p-40, k2p30, 1);
  expect_q(0.5 + 0x1p-33, k2p30, 0);              // 2³⁰ + 0.25
  expect_q(0.5 + 0x1p-32, k2p30 + 1, 0);          // 2³⁰ + 0.5: away from zero
  // The accepted range is [(1 − 2^−32)·2^−32, (1 − 2^−32)·2^30): the carry lifts a shift of
  // −32 into range and pushes 30 out of it.
  expect_q((1 - 0x1p-32) * 0x1p-32, k2p30, -31);
  EXPECT_FALSE(quantize_multiplier(std::nextafter((1 - 0x1p-32) * 0x1p-32, 0.0)));
  EXPECT_FALSE(quantize_multiplier((1 - 0x1p-32) * 0x1p30));
  expect_q(std::nextafter((1 - 0x1p-32) * 0x1p30, 0.0), kMax, 30);
}

TEST(GoldenRequantize, QuantizeMultiplierRejectsWhatHasNoShift) {
  for (double m : {0x1p-33, 0x1p30, std::nextafter(0x1p30, 0.0), 0x1p31, 1e300, 1e-300, 0.0,
                   -0.0, -1.0, -0x1p-3, kInf, -kInf, kNaN,
                   std::numeric_limits<double>::denorm_min()}) {
    EXPECT_FALSE(quantize_multiplier(m).has_value()) << m;
  }
}

// --- the fixed-point pipeline against exact arithmetic ---

struct Exact {
  int64_t floor;    // ⌊v⌋
  bool above_half;  // frac(v) > ½
  double tie_dist;  // |frac(v) − ½|, 0 on a tie
};

// v = acc · multiplier / 2^(31 − shift), exactly (the numerator fits int64).
Exact exact_product(int32_t acc, QuantizedMultiplier q) {
  const __int128 num = static_cast<__int128>(acc) * q.multiplier;
  const __int128 den = static_cast<__int128>(1) << (31 - q.shift);  // 2^1 … 2^62
  __int128 fl = num / den;
  if (num % den != 0 && num < 0) --fl;
  const __int128 rem = num - fl * den;  // [0, den)
  const double dist = std::fabs(static_cast<double>(2 * rem - den)) / static_cast<double>(den) / 2;
  return {static_cast<int64_t>(fl), 2 * rem > den, dist};
}

int8_t clamp8(int64_t v) { return static_cast<int8_t>(std::clamp<int64_t>(v, -128, 127)); }

// The multiplier and shift found without frexp: halving and doubling in long double.
QuantizedMultiplier slow_quantize(double m) {
  long double q = m;
  int shift = 0;
  while (q >= 1) q /= 2, ++shift;
  while (q < 0.5L) q *= 2, --shift;
  long long mult = std::llround(std::ldexp(q, 31));
  if (mult == (1LL << 31)) mult /= 2, ++shift;
  return {static_cast<int32_t>(mult), shift};
}

// ⌊num / 2^e⌋ for e >= 0, exactly.
__int128 floor_div_pot(__int128 num, int e) {
  const __int128 den = static_cast<__int128>(1) << e;
  __int128 q = num / den;
  if (num % den != 0 && num < 0) --q;
  return q;
}

// The doc's pipeline in exact rational arithmetic, tie rules spelled out: x = acc · 2^left
// saturated to int32; x1 = x · multiplier / 2³¹ rounded half toward +∞ (INT32_MIN² aside,
// which multipliers < 2³¹ never meet); y = x1 / 2^right rounded half away from zero.
int64_t exact_pipeline(int32_t acc, QuantizedMultiplier q) {
  const int left = std::max(q.shift, 0), right = std::max(-q.shift, 0);
  const auto x =
      std::clamp<__int128>(static_cast<__int128>(acc) * (int64_t{1} << left), kMin, kMax);
  const __int128 x1 = floor_div_pot(2 * x * q.multiplier + (static_cast<__int128>(1) << 31), 32);
  const __int128 mag = x1 < 0 ? -x1 : x1;
  const __int128 r =
      right == 0 ? mag : floor_div_pot(2 * mag + (static_cast<__int128>(1) << right), right + 1);
  return static_cast<int64_t>(x1 < 0 ? -r : r);
}

// Random (acc, M) pairs, M log-uniform over the whole accepted range: the pipeline against
// (1) its exact two-rounding model, everywhere, ties included; (2) the single rounding of
// v = acc · multiplier · 2^(shift − 31), exact, wherever v is farther than 2^(shift − 1)
// (shift < 0) or 1e-9 (shift >= 0) from a tie, the window the double rounding can move it
// across; (3) acc · M with the real M in long double, farther than that plus 1e-6 from a tie.
TEST(GoldenRequantize, FixedPointPipelineMatchesExactArithmetic) {
  Rng rng(case_seed("test/int8_gemm/pipeline", 0, 0));
  int modeled = 0, exact_checked = 0, real_checked = 0, unsaturated = 0, moved = 0;
  for (int i = 0; i < 20000; ++i) {
    const double m = std::exp2(rng.uniform(-32, 30));
    const std::optional<QuantizedMultiplier> q = quantize_multiplier(m);
    if (!q) continue;  // only within 2^−32 of 2^30
    const QuantizedMultiplier slow = slow_quantize(m);
    ASSERT_EQ(q->multiplier, slow.multiplier) << m;
    ASSERT_EQ(q->shift, slow.shift) << m;
    int32_t acc;
    if (i % 2 == 0) {  // aim at outputs in [−300, 300]
      const double a = std::round(rng.uniform(-300, 300) / m);
      if (std::fabs(a) > 2147483647.0) continue;
      acc = static_cast<int32_t>(a);
    } else {
      acc = static_cast<int32_t>(rng.integer(kMin, kMax) >> rng.integer(0, 31));
    }
    const auto zp = static_cast<int32_t>(rng.integer(-128, 127));
    const int8_t got = requantize_fixed_point(acc, *q, zp);
    ASSERT_EQ(multiply_by_quantized_multiplier(acc, *q), exact_pipeline(acc, *q))
        << acc << " " << m;
    ++modeled;
    const double window = q->shift < 0 ? std::ldexp(1.0, q->shift - 1) : 1e-9;
    const Exact e = exact_product(acc, *q);
    const int64_t single = e.floor + (e.above_half ? 1 : 0);
    if (e.tie_dist > window) {
      ASSERT_EQ(int{got}, int{clamp8(single + zp)}) << acc << " " << m;
      ++exact_checked;
      if (single + zp > -128 && single + zp < 127) ++unsaturated;
    } else if (std::abs(single) < 1000) {
      moved += multiply_by_quantized_multiplier(acc, *q) != single;
    }
    // The multiplier's own rounding (relative 2^−32) moves an output below 1000 by < 3e-7.
    const long double v = static_cast<long double>(acc) * m;
    const long double frac = v - std::floor(v);
    if (std::fabs(v) < 1000 && std::fabs(frac - 0.5L) > window + 1e-6) {
      ASSERT_EQ(int{got}, int{clamp8(static_cast<int64_t>(std::llround(v)) + zp)})
          << acc << " " << m;
      ++real_checked;
    }
  }
  EXPECT_GT(modeled, 18000);
  EXPECT_GT(exact_checked, 15000);
  EXPECT_GT(real_checked, 10000);
  EXPECT_GT(unsaturated, 8000);
  EXPECT_GT(moved, 50) << "the double rounding never showed: the window check has no teeth";
}

TEST(GoldenRequantize, FixedPointTiesFollowThePipeline) {
  // M = 0.5, shift 0: only the high mul rounds, ties toward +∞.
  const QuantizedMultiplier half = qm(0.5), quarter = qm(0.25);
  EXPECT_EQ(requantize_fixed_point(1, half, 0), 1);
  EXPECT_EQ(requantize_fixed_point(3, half, 0), 2);
  EXPECT_EQ(requantize_fixed_point(5, half, 0), 3);
  EXPECT_EQ(requantize_fixed_point(-1, half, 0), 0);
  EXPECT_EQ(requantize_fixed_point(-3, half, 0), -1);
  EXPECT_EQ(requantize_fixed_point(-5, half, 0), -2);
  // M = 0.25, shift −1: the division rounds the tie, away from zero.
  EXPECT_EQ(requantize_fixed_point(2, quarter, 0), 1);
  EXPECT_EQ(requantize_fixed_point(-2, quarter, 0), -1);
  EXPECT_EQ(requantize_fixed_point(6, quarter, 0), 2);
  EXPECT_EQ(requantize_fixed_point(-6, quarter, 0), -2);
  // acc = INT32_MIN at M = 2^−32 is −0.5: −1.
  EXPECT_EQ(requantize_fixed_point(kMin, qm(0x1p-32), 0), -1);
  // Double rounding: (2³¹ − 1)·2^−32 = 0.4999… is 2³⁰ after the high mul, then 0.5 → 1;
  // acc = 1 at M = 0.3: 0.6 → 1, then 0.5 → 1.
  EXPECT_EQ(requantize_fixed_point(kMax, qm(0x1p-32), 0), 1);
  EXPECT_EQ(requantize_fixed_point(1, qm(0.3), 0), 1);
  EXPECT_EQ(requantize_fixed_point(1, qm(0.6), 0), 1);  // shift 0: a single rounding
  EXPECT_EQ(requantize_fixed_point(1, qm(0.2), 0), 0);  // 0.4 → 0
  // Left shift: acc · 2^30 saturates to int32 first.
  EXPECT_EQ(multiply_by_quantized_multiplier(2, qm(0x1p29)), k2p30);  // 2^31 − 1 → · ½
  EXPECT_EQ(multiply_by_quantized_multiplier(1, qm(0x1p29)), 1 << 29);
  EXPECT_EQ(multiply_by_quantized_multiplier(-4, qm(0x1p29)), -k2p30);
}

TEST(GoldenRequantize, FixedPointSaturatesAtBothEnds) {
  EXPECT_EQ(requantize_fixed_point(kMax, qm(0x1p29), 0), 127);
  EXPECT_EQ(requantize_fixed_point(kMin, qm(0x1p29), 0), -128);
  EXPECT_EQ(requantize_fixed_point(128, qm(1), 0), 127);
  EXPECT_EQ(requantize_fixed_point(127, qm(1), 0), 127);
  EXPECT_EQ(requantize_fixed_point(-129, qm(1), 0), -128);
  EXPECT_EQ(requantize_fixed_point(-128, qm(1), 0), -128);
  EXPECT_EQ(requantize_fixed_point(120, qm(1), 10), 127);
  EXPECT_EQ(requantize_fixed_point(-120, qm(1), -10), -128);
  EXPECT_EQ(requantize_fixed_point(kMax, qm(1), 127), 127);   // x + zp would wrap int32
  EXPECT_EQ(requantize_fixed_point(kMin, qm(1), -128), -128);
  EXPECT_EQ(requantize_fixed_point(0, qm(1), -128), -128);
}

// --- rounding=float ---

TEST(GoldenRequantize, FloatModeRoundsTiesToEven) {
  const int expect[][2] = {{1, 0}, {3, 2}, {5, 2}, {7, 4}, {-1, 0}, {-3, -2}, {-5, -2}, {-7, -4}};
  for (const auto& [acc, y] : expect) {
    EXPECT_EQ(requantize_float(acc, 1, 0.5f, 1, 0), y) << acc;
    EXPECT_EQ(requantize_float(acc, 1, 0.5f, 1, 3), y + 3) << acc;
  }
  EXPECT_EQ(requantize_float(kMin, 1, 0x1p-32f, 1, 0), 0);  // −0.5 → −0
  // (float)acc rounds: 2^24 + 1 becomes 2^24, so v is the tie 0.5 (→ 0), while the exact
  // 0.5 + 2^−25 would give 1, as fixed_point does.
  EXPECT_EQ(requantize_float(16777217, 1, 0x1p-25f, 1, 0), 0);
  EXPECT_EQ(requantize_fixed_point(16777217, qm(0x1p-25), 0), 1);
  // The doc's fp32 expression, step by step, on scales that are not powers of two.
  const float a = 0.1f, w = 0.3f, o = 0.7f;
  const float m = (a * w) / o;
  for (int32_t acc : {1, 1000, 12345, -777777, 16777217}) {
    const float r = std::nearbyint(static_cast<float>(acc) * m);
    EXPECT_EQ(requantize_float(acc, a, w, o, 0), clamp8(static_cast<int64_t>(r)));
  }
}

TEST(GoldenRequantize, FloatModeSaturatesAndRejectsNonFiniteM) {
  EXPECT_EQ(requantize_float(1000, 1, 1, 1, 0), 127);
  EXPECT_EQ(requantize_float(-1000, 1, 1, 1, 0), -128);
  EXPECT_EQ(requantize_float(120, 1, 1, 1, 10), 127);
  EXPECT_EQ(requantize_float(-120, 1, 1, 1, -10), -128);
  EXPECT_EQ(requantize_float(kMax, 1, 1e30f, 1, 0), 127);   // v = +Inf in float
  EXPECT_EQ(requantize_float(kMin, 1, 1e30f, 1, 0), -128);
  EXPECT_EQ(requantize_float(0, 1, 1e30f, 1, 5), 5);
  EXPECT_EQ(requantize_float(100, 1, 0, 1, 5), 5);          // m = 0 is allowed
  EXPECT_EQ(requantize_float(100, 1, -0.5f, 1, 0), -50);    // and negative m
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_THROW(requantize_float(1, 1, nan, 1, 0), std::invalid_argument);
  EXPECT_THROW(requantize_float(1, 1, inf, 1, 0), std::invalid_argument);
  EXPECT_THROW(requantize_float(1, 1e30f, 1e30f, 1, 0), std::invalid_argument);  // fp32 overflow
  EXPECT_THROW(requantize_float(1, 1, 1, 0, 0), std::invalid_argument);         // /0
}

// --- K_limit ---

TEST(GoldenRequantize, KLimitValues) {
  EXPECT_EQ(k_limit(0), 131071);
  EXPECT_EQ(k_limit(-1), 131072);
  EXPECT_EQ(k_limit(3), 128070);
  EXPECT_EQ(k_limit(-128), 65793);
  EXPECT_EQ(k_limit(127), 65793);
  EXPECT_THROW(k_limit(128), std::invalid_argument);
  EXPECT_THROW(k_limit(-129), std::invalid_argument);
}

// For every zero point, by enumerating all (a, w): K_limit worst cases fit int32 and
// K_limit + 1 worst cases do not; the golden accumulator reproduces the fitting ones.
TEST(GoldenRequantize, KLimitIsExactForEveryZeroPoint) {
  for (int32_t zp = -128; zp <= 127; ++zp) {
    int64_t pmax = 0, nmin = 0;
    int32_t pa = 0, pw = 0, na = 0, nw = 0;
    for (int32_t a = -128; a <= 127; ++a) {
      for (int32_t w = -128; w <= 127; ++w) {
        const int64_t t = int64_t{a - zp} * w;
        if (t > pmax) pmax = t, pa = a, pw = w;
        if (t < nmin) nmin = t, na = a, nw = w;
      }
    }
    const int64_t K = k_limit(zp);
    ASSERT_LE(K * pmax, kMax) << zp;
    ASSERT_GE(K * nmin, kMin) << zp;
    ASSERT_TRUE((K + 1) * pmax > kMax || (K + 1) * nmin < kMin) << zp;
    if (zp == 0 || zp == -1 || zp == 3 || zp == -128 || zp == 127) {
      for (auto [a, w, expect] : {std::tuple<int32_t, int32_t, int64_t>{pa, pw, K * pmax},
                                  {na, nw, K * nmin}}) {
        const std::vector<int8_t> av(static_cast<size_t>(K), static_cast<int8_t>(a));
        const std::vector<int8_t> wv(static_cast<size_t>(K), static_cast<int8_t>(w));
        EXPECT_EQ(int8_gemm_acc(av.data(), wv.data(), 1, 1, K, zp).at(0), expect) << zp;
      }
    }
  }
}

// --- int8_gemm_acc and int8_gemm_reference ---

// a = [[1, 2, 3], [−4, 5, −6]], zp = 1, so d = [[0, 1, 2], [−5, 4, −7]];
// w = [[1, 0, −1], [2, 2, 2]]: acc = [[−2, 6], [2, −16]].
const std::vector<int8_t> kA = {1, 2, 3, -4, 5, -6};
const std::vector<int8_t> kW = {1, 0, -1, 2, 2, 2};

TEST(GoldenInt8Gemm, AccumulatesAHandExample) {
  EXPECT_EQ(int8_gemm_acc(kA.data(), kW.data(), 2, 2, 3, 1), (std::vector<int64_t>{-2, 6, 2, -16}));
  EXPECT_EQ(int8_gemm_acc(kA.data(), kW.data(), 2, 2, 3, 0),
            (std::vector<int64_t>{-2, 12, 2, -10}));
  EXPECT_EQ(int8_gemm_acc(kA.data(), kW.data(), 2, 2, 0, 1), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_THROW(int8_gemm_acc(kA.data(), kW.data(), 2, 2, 3, 128), std::invalid_argument);
  // Past 65536 terms the int32 partial sums hand over to int64: beyond int32 it stays exact.
  const std::vector<int8_t> big(200000, -128);
  EXPECT_EQ(int8_gemm_acc(big.data(), big.data(), 1, 1, 200000, 0).at(0), int64_t{200000} * 16384);
  EXPECT_EQ(int8_gemm_acc(big.data(), big.data(), 1, 1, 200000, 127).at(0),
            int64_t{200000} * 255 * 128);
}

std::vector<double> ref(Int8GemmParams p, const std::vector<float>& ws,
                        const float* bias = nullptr) {
  return int8_gemm_reference(kA.data(), kW.data(), ws.empty() ? nullptr : ws.data(), bias, 2, 2,
                             3, p);
}

TEST(GoldenInt8Gemm, ReferenceOfEachOutput) {
  Int8GemmParams p;
  p.a_zero_point = 1;
  p.a_scale = 0.5;
  EXPECT_EQ(ref(p, {}), (std::vector<double>{-2, 6, 2, -16}));
  const std::vector<float> ws = {0.25f, 2}, bias = {1, -1};
  p.out = Int8GemmOut::float32;
  EXPECT_EQ(ref(p, ws), (std::vector<double>{-0.25, 6, 0.25, -16}));
  EXPECT_EQ(ref(p, ws, bias.data()), (std::vector<double>{0.75, 5, 1.25, -17}));
  p.out = Int8GemmOut::float16;
  EXPECT_EQ(ref(p, ws, bias.data()), (std::vector<double>{0.75, 5, 1.25, -17}));
  // M = 0.5·{0.25, 2}/0.25 = {0.5, 4}.
  p.out = Int8GemmOut::int8;
  p.out_scale = 0.25;
  for (Int8Rounding r : {Int8Rounding::fixed_point, Int8Rounding::float32}) {
    p.rounding = r;
    p.out_zero_point = 0;
    EXPECT_EQ(ref(p, ws), (std::vector<double>{-1, 24, 1, -64}));
    p.out_zero_point = 100;
    EXPECT_EQ(ref(p, ws), (std::vector<double>{99, 124, 101, 36}));
  }
  // w_scale[0] = 0.125 makes M = 0.25, so acc = −2 and 2 land on the ties −0.5 and 0.5,
  // where the modes part.
  p.out_zero_point = 0;
  p.rounding = Int8Rounding::fixed_point;
  EXPECT_EQ(ref(p, {0.125f, 2}), (std::vector<double>{-1, 24, 1, -64}));  // away from zero
  p.rounding = Int8Rounding::float32;
  EXPECT_EQ(ref(p, {0.125f, 2}), (std::vector<double>{0, 24, 0, -64}));   // to even
}

TEST(GoldenInt8Gemm, ReferencePropagatesNanAndInf) {
  // Row 1 of a2 equals zp: acc = 0 there.
  const std::vector<int8_t> a2 = {1, 2, 3, 1, 1, 1};
  Int8GemmParams p;
  p.a_zero_point = 1;
  p.out = Int8GemmOut::float32;
  const std::vector<float> ws = {std::nanf(""), std::numeric_limits<float>::infinity()};
  std::vector<double> y = int8_gemm_reference(a2.data(), kW.data(), ws.data(), nullptr, 2, 2, 3, p);
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[2]));  // NaN scale: the whole column
  EXPECT_EQ(y[1], kInf);                              // acc = 6
  EXPECT_TRUE(std::isnan(y[3]));                      // 0 · Inf
  const std::vector<float> bias = {1, -std::numeric_limits<float>::infinity()};
  y = int8_gemm_reference(a2.data(), kW.data(), ws.data(), bias.data(), 2, 2, 3, p);
  EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[3]));  // Inf − Inf, NaN − Inf
}

TEST(GoldenInt8Gemm, ReferenceRejectsWhatTheOpRejects) {
  Int8GemmParams p;
  const std::vector<float> ws = {1, 1};
  EXPECT_THROW(int8_gemm_reference(kA.data(), kW.data(), nullptr, nullptr, 2, 2, 131072, p),
               std::invalid_argument);  // K > k_limit(0); checked before any access
  p.a_scale = 0;
  EXPECT_THROW(ref(p, {}), std::invalid_argument);
  p.a_scale = 1;
  p.out = Int8GemmOut::float32;
  EXPECT_THROW(ref(p, {}), std::invalid_argument);  // no w_scale
  p.out = Int8GemmOut::int8;
  EXPECT_THROW(ref(p, ws, ws.data()), std::invalid_argument);  // bias for int8
  p.out_scale = kInf;
  EXPECT_THROW(ref(p, ws), std::invalid_argument);
  p.out_scale = 1;
  EXPECT_THROW(ref(p, {0x1p30f, 1}), std::invalid_argument);   // shift 31
  EXPECT_THROW(ref(p, {0x1p-33f, 1}), std::invalid_argument);  // shift −32
  EXPECT_THROW(ref(p, {0, 1}), std::invalid_argument);         // M = 0
  EXPECT_THROW(ref(p, {std::nanf(""), 1}), std::invalid_argument);
  p.rounding = Int8Rounding::float32;
  EXPECT_EQ(ref(p, {0x1p30f, 0}), (std::vector<double>{-128, 0, 127, 0}));  // float takes them
  EXPECT_THROW(ref(p, {std::nanf(""), 1}), std::invalid_argument);
}

// --- cases ---

const std::vector<DType> kOutDtypes = {DType::int32, DType::float32, DType::float16, DType::int8};
const std::vector<std::string> kParams = {"a_zero_point", "a_scale", "out", "out_scale",
                                          "out_zero_point", "rounding"};

std::vector<int8_t> int8s(const Array& x) { return {x.values.begin(), x.values.end()}; }

std::vector<int64_t> acc_of(const Case& c) {
  return int8_gemm_acc(int8s(c.inputs.at("a")).data(), int8s(c.inputs.at("w")).data(),
                       c.dims.at("M"), c.dims.at("N"), c.dims.at("K"),
                       int8_gemm_params(c).a_zero_point);
}

bool overflows(const Case& c) { return c.name.find("overflows") != std::string::npos; }

TEST(GoldenInt8GemmCases, DeterministicAndWellFormed) {
  for (DType t : kOutDtypes) {
    for (InputClass cls : all_input_classes()) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " / " + std::string(input_class_name(cls)));
      const std::vector<Case> a = int8_gemm_cases(cls, t), b = int8_gemm_cases(cls, t);
      expect_same_cases(a, b);
      double macs = 0, elements = 0;
      for (const Case& c : a) {
        SCOPED_TRACE(c.name);
        ASSERT_EQ(c.dims.size(), 3u);
        const int64_t M = c.dims.at("M"), N = c.dims.at("N"), K = c.dims.at("K");
        ASSERT_TRUE(M > 0 && N > 0 && K > 0);
        ASSERT_EQ(c.params.size(), kParams.size());
        for (const std::string& p : kParams) ASSERT_TRUE(c.params.count(p)) << p;
        const Int8GemmParams p = int8_gemm_params(c);
        EXPECT_EQ(c.params.at("out"), dtype_name(t));
        EXPECT_EQ(std::to_string(p.a_zero_point), c.params.at("a_zero_point"));
        EXPECT_EQ(std::to_string(p.out_zero_point), c.params.at("out_zero_point"));
        EXPECT_EQ(number_text(p.a_scale), c.params.at("a_scale"));
        EXPECT_EQ(number_text(p.out_scale), c.params.at("out_scale"));
        EXPECT_EQ(p.out_scale, round_to_dtype(p.out_scale, DType::float32));
        if (c.name.find("1-2^-40") == std::string::npos) {
          EXPECT_EQ(p.a_scale, round_to_dtype(p.a_scale, DType::float32));
        }
        if (t != DType::int8) {
          EXPECT_EQ(p.rounding, Int8Rounding::fixed_point);
          EXPECT_EQ(p.out_scale, 1);
          EXPECT_EQ(p.out_zero_point, 0);
        }
        EXPECT_LE(K, k_limit(p.a_zero_point)) << "K = k_limit + 1 belongs in the op's tests";
        const Array& av = c.inputs.at("a");
        const Array& wv = c.inputs.at("w");
        EXPECT_EQ(av.shape, (std::vector<int64_t>{M, K}));
        EXPECT_EQ(wv.shape, (std::vector<int64_t>{N, K}));
        EXPECT_EQ(av.dtype, DType::int8);
        EXPECT_EQ(wv.dtype, DType::int8);
        for (const Array* x : {&av, &wv}) {
          for (double v : x->values) ASSERT_TRUE(v == round_to_dtype(v, DType::int8)) << v;
        }
        EXPECT_EQ(c.inputs.count("w_scale"), t == DType::int32 ? 0u : 1u);
        if (c.inputs.count("bias")) {
          EXPECT_TRUE(t == DType::float32 || t == DType::float16);
        }
        if (c.inputs.count("a_scales")) {
          EXPECT_TRUE(t == DType::float32 || t == DType::float16);
          EXPECT_EQ(c.inputs.at("a_scales").dtype, DType::float32);
          EXPECT_EQ(c.inputs.at("a_scales").shape, (std::vector<int64_t>{M}));
        }
        EXPECT_EQ(c.inputs.size(),
                  2 + c.inputs.count("w_scale") + c.inputs.count("bias") + c.inputs.count("a_scales"));
        for (const char* name : {"w_scale", "bias"}) {
          if (!c.inputs.count(name)) continue;
          const Array& x = c.inputs.at(name);
          EXPECT_EQ(x.dtype, DType::float32);
          EXPECT_EQ(x.shape, (std::vector<int64_t>{N}));
          for (double v : x.values) {
            ASSERT_TRUE(std::isnan(v) || v == round_to_dtype(v, DType::float32));
            if (cls != InputClass::nan_inf) {
              ASSERT_TRUE(std::isfinite(v));
            }
          }
        }
        macs += static_cast<double>(M * N * K);
        elements += static_cast<double>(M * K + N * K);
      }
      EXPECT_LE(macs, 5e8);
      EXPECT_LE(elements, 12e6);
    }
  }
  EXPECT_TRUE(int8_gemm_cases(InputClass::normal, DType::float64).empty());
  EXPECT_TRUE(int8_gemm_cases(InputClass::normal, DType::uint8).empty());
}

// The golden of every case: computable (int8 multipliers in range), finite in its dtype
// outside nan_inf and the "overflows" cases, not mostly zeros, and for int8 not mostly
// saturated where the out_scale was fitted.
TEST(GoldenInt8GemmCases, GoldenIsMeaningfulOnEveryCase) {
  for (DType t : kOutDtypes) {
    for (InputClass cls : all_input_classes()) {
      for (const Case& c : int8_gemm_cases(cls, t)) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " / " + std::string(input_class_name(cls)) + " / " + c.name);
        std::vector<double> y;
        ASSERT_NO_THROW(y = int8_gemm_reference(c));
        size_t nonfinite = 0, zeros = 0, saturated = 0;
        for (double v : y) {
          if (!std::isfinite(dtype_is_float(t) ? round_to_dtype(v, t) : v)) ++nonfinite;
          if (v == 0) ++zeros;
          if (t == DType::int8) {
            ASSERT_TRUE(v >= -128 && v <= 127 && v == std::floor(v)) << v;
            if (v == -128 || v == 127) ++saturated;
          }
          if (t == DType::int32) {
            ASSERT_TRUE(v >= kMin && v <= kMax) << v;
          }
        }
        if (cls == InputClass::nan_inf && (t == DType::float32 || t == DType::float16)) {
          EXPECT_GT(nonfinite, 0u);
        } else if (overflows(c)) {
          EXPECT_GT(nonfinite, 0u);
          EXPECT_LT(nonfinite, y.size());
        } else {
          EXPECT_EQ(nonfinite, 0u);
        }
        EXPECT_LE(static_cast<double>(zeros), 0.9 * static_cast<double>(y.size()));
        if (t == DType::int8 && (cls == InputClass::normal || cls == InputClass::shape) && y.size() >= 100) {
          const double ratio = static_cast<double>(saturated) / static_cast<double>(y.size());
          EXPECT_GT(ratio, 0.002);
          EXPECT_LT(ratio, 0.1);
        }
      }
    }
  }
}

TEST(GoldenInt8GemmCases, ClassesCoverTheirShapes) {
  for (DType t : kOutDtypes) {
    SCOPED_TRACE(dtype_name(t));
    const std::vector<Case> normal = int8_gemm_cases(InputClass::normal, t);
    EXPECT_TRUE(contains_all(dim_values(normal, "M"), {1, 4, 16, 64, 128}));
    EXPECT_TRUE(contains_all(dim_values(normal, "K"), {256, 1024, 4096}));
    EXPECT_TRUE(contains_all(dim_values(normal, "N"), {16, 64, 256, 1024}));
    std::set<int64_t> zps;
    for (const Case& c : normal) zps.insert(int8_gemm_params(c).a_zero_point);
    EXPECT_TRUE(contains_all(zps, {0, 3, -7}));

    const std::vector<Case> boundary = int8_gemm_cases(InputClass::boundary, t);
    EXPECT_TRUE(contains_all(dim_values(boundary, "M"), {1, 2, 3}));
    EXPECT_TRUE(contains_all(dim_values(boundary, "N"), {1, 15, 16, 17}));
    EXPECT_TRUE(contains_all(dim_values(boundary, "K"), {1, 3, 4, 5, 63, 64, 65}));
    zps.clear();
    bool extremes_only = false;
    for (const Case& c : boundary) {
      zps.insert(int8_gemm_params(c).a_zero_point);
      extremes_only |= std::all_of(c.inputs.at("a").values.begin(), c.inputs.at("a").values.end(),
                                   [](double v) { return v == -128 || v == 127; });
    }
    EXPECT_TRUE(contains_all(zps, {-128, 127}));
    EXPECT_TRUE(extremes_only);

    const std::vector<Case> shape = int8_gemm_cases(InputClass::shape, t);
    const std::set<int64_t> ms = dim_values(shape, "M"), ns = dim_values(shape, "N"),
                            ks = dim_values(shape, "K");
    EXPECT_EQ(*ms.begin(), 1);
    EXPECT_EQ(*ms.rbegin(), 300);
    EXPECT_TRUE(ns.count(4097));
    for (const std::set<int64_t>* s : {&ns, &ks}) {
      EXPECT_TRUE(std::any_of(s->begin(), s->end(), [](int64_t v) { return v % 2; }));
      EXPECT_TRUE(std::any_of(s->begin(), s->end(), [](int64_t v) { return v % 2 == 0; }));
    }
  }
}

// K = k_limit(zp) with the worst-case inputs for each zero point, reaching the binding end
// of int32 (INT32_MIN itself for zp = −1).
TEST(GoldenInt8GemmCases, OverflowReachesTheEndsOfInt32) {
  for (DType t : kOutDtypes) {
    SCOPED_TRACE(dtype_name(t));
    std::set<int32_t> at_limit;
    bool int32_min = false;
    for (const Case& c : int8_gemm_cases(InputClass::overflow, t)) {
      const int32_t zp = int8_gemm_params(c).a_zero_point;
      if (c.dims.at("K") != k_limit(zp) || c.dims.at("N") != 2) continue;
      const std::vector<int64_t> acc = acc_of(c);
      const int64_t hi = *std::max_element(acc.begin(), acc.end());
      const int64_t lo = *std::min_element(acc.begin(), acc.end());
      EXPECT_TRUE(hi > 0 && lo < 0);
      // Within one worst-case term (< 2^15) of the end that bounds K.
      EXPECT_TRUE(kMax - hi < 32768 || lo - kMin < 32768) << c.name;
      int32_min |= lo == kMin;
      at_limit.insert(zp);
    }
    EXPECT_EQ(at_limit, (std::set<int32_t>{0, 3, -1, -128, 127}));
    EXPECT_TRUE(int32_min);
  }
}

TEST(GoldenInt8GemmCases, Int8OverflowHasTiesSaturationAndEveryShift) {
  const std::vector<Case> cases = int8_gemm_cases(InputClass::overflow, DType::int8);
  std::set<int> shifts;
  bool carry = false, differ = false, sat_lo = false, sat_hi = false, fixed_only = false;
  int ties = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.name);
    const Int8GemmParams p = int8_gemm_params(c);
    const std::vector<double> y = int8_gemm_reference(c);
    for (double v : y) sat_lo |= v == -128, sat_hi |= v == 127;
    if (p.rounding != Int8Rounding::fixed_point) continue;
    // The float copy follows at once on the same data, except for fixed_point-only cases.
    const bool has_float = i + 1 < cases.size() &&
                           int8_gemm_params(cases[i + 1]).rounding == Int8Rounding::float32;
    if (has_float) {
      ASSERT_TRUE(same_bits(c.inputs.at("a"), cases[i + 1].inputs.at("a")));
      differ |= y != int8_gemm_reference(cases[i + 1]);
    } else {
      fixed_only = true;
    }
    const std::vector<int64_t> acc = acc_of(c);
    const int64_t M = c.dims.at("M"), N = c.dims.at("N");
    const std::vector<double>& ws = c.inputs.at("w_scale").values;
    for (int64_t n = 0; n < N; ++n) {
      const double real = p.a_scale * ws[static_cast<size_t>(n)] / p.out_scale;
      const QuantizedMultiplier q = qm(real);
      shifts.insert(q.shift);
      int e = 0;
      std::frexp(real, &e);
      carry |= e != q.shift;
      bool nonzero = false;
      for (int64_t m = 0; m < M; ++m) {
        const int32_t a = static_cast<int32_t>(acc[static_cast<size_t>(m * N + n)]);
        nonzero |= y[static_cast<size_t>(m * N + n)] != p.out_zero_point;
        const Exact x = exact_product(a, q);
        if (x.tie_dist == 0 && std::abs(x.floor) < 200) ++ties;
      }
      if (q.shift == -31 && c.name.find("shifts") != std::string::npos && real > 0x1p-32) {
        EXPECT_TRUE(nonzero) << "channel " << n << " with the smallest shift is all zero point";
      }
    }
  }
  for (int s = -31; s <= 30; ++s) EXPECT_TRUE(shifts.count(s)) << s;
  EXPECT_TRUE(carry && differ && sat_lo && sat_hi && fixed_only);
  EXPECT_GT(ties, 100);
}

TEST(GoldenInt8GemmCases, NanInfClassHoldsNanInfOrZeros) {
  for (DType t : kOutDtypes) {
    SCOPED_TRACE(dtype_name(t));
    bool nan = false, pos_inf = false, neg_inf = false, zero_times_inf = false, zeros = false;
    for (const Case& c : int8_gemm_cases(InputClass::nan_inf, t)) {
      const std::vector<double> y = int8_gemm_reference(c);
      const std::vector<int64_t> acc = acc_of(c);
      size_t acc_zeros = 0;
      for (int64_t v : acc) acc_zeros += v == 0;
      if (t == DType::int32 || t == DType::int8) {
        EXPECT_NE(c.name.find("zeros"), std::string::npos);
        zeros |= acc_zeros > 0 && acc_zeros < acc.size() / 2;
        continue;
      }
      const int64_t M = c.dims.at("M"), N = c.dims.at("N");
      const std::vector<double>& ws = c.inputs.at("w_scale").values;
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t m = 0; m < M; ++m) {
          const auto i = static_cast<size_t>(m * N + n);
          nan |= std::isnan(y[i]);
          pos_inf |= y[i] == kInf;
          neg_inf |= y[i] == -kInf;
          if (std::isnan(ws[static_cast<size_t>(n)])) {
            EXPECT_TRUE(std::isnan(y[i]));
          }
          if (std::isinf(ws[static_cast<size_t>(n)]) && acc[i] == 0) {
            EXPECT_TRUE(std::isnan(y[i]));
            zero_times_inf = true;
          }
        }
      }
    }
    if (t == DType::float32 || t == DType::float16) {
      EXPECT_TRUE(nan && pos_inf && neg_inf && zero_times_inf);
    } else {
      EXPECT_TRUE(zeros);
    }
  }
}

}  // namespace
}  // namespace npukit::golden
