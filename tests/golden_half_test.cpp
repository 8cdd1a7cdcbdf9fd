// golden/half, golden/seed, golden/array: the bit-level foundations of every golden input.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "golden/array.h"
#include "golden/half.h"
#include "golden/seed.h"

namespace npukit::golden {
namespace {

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(GoldenHalf, EveryBitPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = half_bits_to_float(bits);
    ASSERT_EQ(float_to_half_bits(f), bits) << std::hex << h;
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (nan) {
      ASSERT_TRUE(std::isnan(half_bits_to_float(double_to_half_bits(f)))) << std::hex << h;
    } else {
      ASSERT_EQ(double_to_half_bits(f), bits) << std::hex << h;
      ASSERT_EQ(round_to_dtype(f, DType::float16), static_cast<double>(f)) << std::hex << h;
    }
  }
}

TEST(GoldenHalf, KnownValues) {
  EXPECT_EQ(half_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_bits_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_bits_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::signbit(half_bits_to_float(0x8000)));
  EXPECT_EQ(half_bits_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_bits_to_float(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half_bits(FLT_MAX), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-FLT_MAX), 0xfc00);
  EXPECT_EQ(float_to_half_bits(FLT_TRUE_MIN), 0x0000);
}

TEST(GoldenHalf, RoundsTiesToEven) {
  const auto h = [](double v) { return double_to_half_bits(v); };
  EXPECT_EQ(h(1 + 0x1p-11), 0x3c00);                 // tie, 1.0 is even
  EXPECT_EQ(h(1 + 3 * 0x1p-11), 0x3c02);             // tie, up to even
  EXPECT_EQ(h(1 + 0x1p-11 + 0x1p-30), 0x3c01);       // just above the tie
  EXPECT_EQ(h(-(1 + 0x1p-11)), 0xbc00);
  EXPECT_EQ(h(1 - 0x1p-12), 0x3c00);                 // tie carries into the next exponent
  EXPECT_EQ(h(65519.99), 0x7bff);
  EXPECT_EQ(h(65520), 0x7c00);                       // tie above the max rounds to Inf
  EXPECT_EQ(h(0x1p-25), 0x0000);                     // subnormal tie to even (0)
  EXPECT_EQ(h(0x1p-25 * (1 + 0x1p-40)), 0x0001);
  EXPECT_EQ(h(3 * 0x1p-25), 0x0002);                 // 1.5 -> 2
  EXPECT_EQ(h(5 * 0x1p-25), 0x0002);                 // 2.5 -> 2
  EXPECT_EQ(h(7 * 0x1p-25), 0x0004);                 // 3.5 -> 4
  EXPECT_EQ(h(1023.5 * 0x1p-24), 0x0400);            // largest subnormal rounds to normal
  EXPECT_EQ(h(1e-30), 0x0000);
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * 0x1p-11f), 0x3c02);
}

// Going through float would round twice: 1 + 2^-11 + 2^-40 becomes the tie 1 + 2^-11 in
// float, which then rounds down to 1.0 instead of up.
TEST(GoldenHalf, DoubleConvertsWithoutDoubleRounding) {
  const double v = 1 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(float_to_half_bits(static_cast<float>(v)), 0x3c00);
  EXPECT_EQ(double_to_half_bits(v), 0x3c01);
  EXPECT_EQ(round_to_dtype(v, DType::float16), 1 + 0x1p-10);
}

// Every 997th float: the result is the nearest half, and the even one on a tie.
TEST(GoldenHalf, FloatsRoundToNearestHalf) {
  for (uint64_t b = 0; b <= 0xffffffffu; b += 997) {
    const float f = bits_to_float(static_cast<uint32_t>(b));
    if (!std::isfinite(f) || std::fabs(f) >= 65520.0f) continue;
    const uint16_t h = float_to_half_bits(f);
    const uint16_t mag = h & 0x7fff;
    ASSERT_LT(mag, 0x7c00) << f;
    const double err = std::fabs(static_cast<double>(f) - half_bits_to_float(h));
    for (int step : {-1, 1}) {
      if ((mag == 0 && step < 0) || (mag == 0x7bff && step > 0)) continue;
      const auto other = static_cast<uint16_t>((h & 0x8000) | (mag + step));
      const double other_err = std::fabs(static_cast<double>(f) - half_bits_to_float(other));
      ASSERT_LE(err, other_err) << f;
      if (err == other_err) {
        ASSERT_EQ(h & 1, 0) << f;
      }
    }
  }
}

TEST(GoldenHalf, NanStaysNan) {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(float_to_half_bits(qnan) & 0x7c00, 0x7c00);
  EXPECT_NE(float_to_half_bits(qnan) & 0x3ff, 0);
  EXPECT_NE(float_to_half_bits(bits_to_float(0x7f800001)) & 0x3ff, 0);  // payload only low
  EXPECT_TRUE(std::isnan(round_to_dtype(std::nan(""), DType::float16)));
  EXPECT_TRUE(std::isnan(round_to_dtype(std::nan(""), DType::float32)));
}

TEST(GoldenRound, FloatTypes) {
  EXPECT_EQ(round_to_dtype(0.1, DType::float32), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_dtype(1e39, DType::float32), std::numeric_limits<double>::infinity());
  EXPECT_EQ(round_to_dtype(0.1, DType::float64), 0.1);
  EXPECT_EQ(round_to_dtype(70000, DType::float16), std::numeric_limits<double>::infinity());
  EXPECT_EQ(round_to_dtype(0.1, DType::float16), static_cast<double>(half_bits_to_float(0x2e66)));
}

TEST(GoldenRound, IntegersRoundHalfToEvenAndSaturate) {
  EXPECT_EQ(round_to_dtype(2.5, DType::int8), 2);
  EXPECT_EQ(round_to_dtype(3.5, DType::int8), 4);
  EXPECT_EQ(round_to_dtype(-2.5, DType::int8), -2);
  EXPECT_EQ(round_to_dtype(-3.5, DType::int8), -4);
  EXPECT_EQ(round_to_dtype(2.4999, DType::int8), 2);
  EXPECT_EQ(round_to_dtype(-0.5, DType::int8), 0);
  EXPECT_EQ(round_to_dtype(200, DType::int8), 127);
  EXPECT_EQ(round_to_dtype(-200, DType::int8), -128);
  EXPECT_EQ(round_to_dtype(std::numeric_limits<double>::infinity(), DType::int8), 127);
  EXPECT_EQ(round_to_dtype(-1, DType::uint8), 0);
  EXPECT_EQ(round_to_dtype(254.5, DType::uint8), 254);
  EXPECT_EQ(round_to_dtype(255.5, DType::uint8), 255);
  EXPECT_EQ(round_to_dtype(3e9, DType::int32), 2147483647.0);
  EXPECT_EQ(round_to_dtype(-3e9, DType::int32), -2147483648.0);
  EXPECT_EQ(round_to_dtype(1e19, DType::int64), 0x1p63 - 1024);
  EXPECT_EQ(round_to_dtype(-1e19, DType::int64), -0x1p63);
  EXPECT_EQ(round_to_dtype(4503599627370497.0, DType::int64), 4503599627370497.0);
}

TEST(GoldenSeed, CaseSeedIsStableAndSeparatesItsInputs) {
  // Pinned (and checked against an independent Python model): a change here silently
  // changes every generated input of every gate run.
  EXPECT_EQ(case_seed("rms_norm", 0, 0), 0x0b4b38f8a867be8dULL);
  EXPECT_EQ(case_seed("rms_norm", 7, 3), 0x1d5bb458d559bdc5ULL);
  EXPECT_NE(case_seed("rms_norm", 0, 0), case_seed("rms_norm", 1, 0));
  EXPECT_NE(case_seed("rms_norm", 0, 0), case_seed("rms_norm", 0, 1));
  EXPECT_NE(case_seed("rms_norm", 1, 0), case_seed("rms_norm", 0, 1));
  EXPECT_NE(case_seed("rms_norm", 0, 0), case_seed("rope", 0, 0));
}

TEST(GoldenSeed, RngIsDeterministicAndInRange) {
  Rng a(42), b(42), c(43);
  EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(a.next(), c.next());

  Rng r(1);
  bool saw_lo = false, saw_hi = false;
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = r.integer(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    saw_lo |= v == -3;
    saw_hi |= v == 3;
    const double u = r.uniform(0.5, 1.5);
    ASSERT_GE(u, 0.5);
    ASSERT_LT(u, 1.5);
  }
  EXPECT_TRUE(saw_lo && saw_hi);
  EXPECT_EQ(r.integer(5, 5), 5);
  r.integer(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());

  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double v = r.normal(2.0, 3.0);
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / n;
  EXPECT_NEAR(mean, 2.0, 0.05);
  EXPECT_NEAR(std::sqrt(sum2 / n - mean * mean), 3.0, 0.05);
}

TEST(GoldenArray, ValuesAreRepresentableInTheirDtype) {
  for (DType t : {DType::float32, DType::float16, DType::int8, DType::uint8}) {
    const Array a = make_normal("test", 0, t, {3, 100}, 0, 100);
    EXPECT_EQ(a.size(), 300);
    ASSERT_EQ(a.values.size(), 300u);
    for (double v : a.values) ASSERT_EQ(round_to_dtype(v, t), v) << dtype_name(t);
  }
  const Array u = make_uniform("test", 0, DType::float16, {1000}, -2, 2);
  for (double v : u.values) {
    ASSERT_GE(v, -2);
    ASSERT_LE(v, 2);
    ASSERT_EQ(round_to_dtype(v, DType::float16), v);
  }
  const Array i = make_integers("test", 0, DType::int8, {1000}, -5, 5);
  for (double v : i.values) {
    ASSERT_GE(v, -5);
    ASSERT_LE(v, 5);
  }
  const Array c = make_constant(DType::float16, {2, 2}, 0.1);
  ASSERT_EQ(c.values.size(), 4u);
  EXPECT_EQ(c.values[3], round_to_dtype(0.1, DType::float16));
  EXPECT_EQ(make_constant(DType::float32, {}, 1).size(), 1);
}

// Chunk c is drawn from its own Rng, so any thread can fill it without the others.
TEST(GoldenArray, EachChunkHasItsOwnStream) {
  const int64_t n = 2 * kFillChunk + 5;
  const Array a = make_uniform("op", 9, DType::float64, {n}, 0, 1);
  for (uint64_t chunk = 0; chunk < 3; ++chunk) {
    Rng r(case_seed("op", 9, chunk));
    const auto begin = static_cast<size_t>(chunk * kFillChunk);
    for (size_t k = 0; k < 5; ++k) ASSERT_EQ(a.values[begin + k], r.uniform(0, 1));
  }
  const Array b = make_uniform("op", 9, DType::float64, {n}, 0, 1);
  EXPECT_EQ(a.values, b.values);
  const Array c = make_uniform("op", 10, DType::float64, {n}, 0, 1);
  EXPECT_NE(a.values, c.values);
}

}  // namespace
}  // namespace npukit::golden
