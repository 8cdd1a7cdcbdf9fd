// tools/quantize/calibration.h (npukit calibrate's arithmetic) against golden/calibration.h,
// bit for bit, for every method in both modes on random, outlier-heavy, all-zero,
// single-value and all-positive (post-SiLU) samples; plus the method parser's refusals and
// properties that hold whatever the reference says (exact data rebuilds exactly, mse never
// loses to minmax, percentile:100 is minmax).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "golden/calibration.h"
#include "tools/quantize/calibration.h"
#include "tools/quantize/per_token.h"

namespace npukit::quant {
namespace {

constexpr QRange kInt8{-128, 127};

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

golden::CalibMethod golden_method(Method m) {
  switch (m) {
    case Method::minmax: return golden::CalibMethod::minmax;
    case Method::percentile: return golden::CalibMethod::percentile;
    case Method::mse: return golden::CalibMethod::mse;
  }
  return golden::CalibMethod::minmax;
}

std::vector<CalibrationMethod> all_methods() {
  std::vector<CalibrationMethod> out;
  for (const char* text : {"minmax", "percentile:100", "percentile:99.99", "percentile:99", "percentile:50", "mse"})
    out.push_back(parse_method(text));
  return out;
}

// The tool against the golden on x, every method, both modes; and the tool's invariants.
void expect_matches_golden(const std::vector<float>& x, const char* what) {
  for (const CalibrationMethod& m : all_methods()) {
    for (bool sym : {true, false}) {
      SCOPED_TRACE(std::string(what) + " " + method_name(m) + (sym ? " symmetric" : " asymmetric"));
      const int64_t n = static_cast<int64_t>(x.size());
      const Calibration c = calibrate(x.data(), n, m, sym, kInt8);
      const golden::ActivationCalibration g = golden::calibrate_int8(x.data(), n, golden_method(m.method), m.percentile, sym);
      EXPECT_EQ(bits(c.scale), bits(g.scale)) << c.scale << " vs " << g.scale;
      EXPECT_EQ(c.zero_point, g.zero_point);
      EXPECT_EQ(bits(c.lo), bits(g.lo)) << c.lo << " vs " << g.lo;
      EXPECT_EQ(bits(c.hi), bits(g.hi)) << c.hi << " vs " << g.hi;
      EXPECT_EQ(c.clipped, g.clipped);
      const double nmse = g.ref2 == 0 ? g.err2 : g.err2 / g.ref2;
      EXPECT_EQ(c.nmse, nmse);
      EXPECT_TRUE(std::isfinite(c.scale) && c.scale > 0) << c.scale;
      EXPECT_LE(c.lo, 0.0f);
      EXPECT_GE(c.hi, 0.0f);
      if (sym) {
        EXPECT_EQ(c.zero_point, 0);
      }
      EXPECT_GE(c.zero_point, -128);
      EXPECT_LE(c.zero_point, 127);
    }
  }
}

std::vector<float> normal(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = d(rng);
  return x;
}

TEST(Calibration, RandomMatchesGolden) {
  expect_matches_golden(normal(4096, 1.0f, 1), "normal(0, 1)");
  expect_matches_golden(normal(777, 0.01f, 2), "normal(0, 0.01), odd count");
}

TEST(Calibration, OutlierHeavyMatchesGolden) {
  std::vector<float> x = normal(8192, 0.5f, 3);
  for (size_t i = 0; i < x.size(); i += 997) x[i] = (i % 2 ? -1 : 1) * 60.0f;  // LLM-style outlier channels
  expect_matches_golden(x, "outliers");
  // Clipping the outliers must pay off: percentile and mse both choose a narrower range.
  const Calibration mm = calibrate(x.data(), int64_t(x.size()), parse_method("minmax"), true, kInt8);
  const Calibration pc = calibrate(x.data(), int64_t(x.size()), parse_method("percentile:99.9"), true, kInt8);
  const Calibration ms = calibrate(x.data(), int64_t(x.size()), parse_method("mse"), true, kInt8);
  EXPECT_LT(pc.hi, mm.hi);
  EXPECT_GT(pc.clipped, 0);
  EXPECT_LE(ms.nmse, mm.nmse);  // 60 is too far out to clip: mse may keep minmax's range
  EXPECT_EQ(mm.clipped, 0);
}

TEST(Calibration, MseClipsAHeavyTail) {
  // Laplace samples: the tail is long enough that the rounding error saved in the body
  // outweighs the clipping error, so the search must stop short of the maximum.
  std::mt19937 rng(6);
  std::exponential_distribution<float> e(1.0f);
  std::vector<float> x(8192);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 2 ? -1.0f : 1.0f) * e(rng);
  expect_matches_golden(x, "laplace");
  for (bool sym : {true, false}) {
    const Calibration mm = calibrate(x.data(), int64_t(x.size()), parse_method("minmax"), sym, kInt8);
    const Calibration ms = calibrate(x.data(), int64_t(x.size()), parse_method("mse"), sym, kInt8);
    EXPECT_LT(ms.hi, mm.hi);
    EXPECT_GT(ms.clipped, 0);
    EXPECT_LT(ms.nmse, mm.nmse);
  }
}

TEST(Calibration, AllZeroGetsScaleOne) {
  const std::vector<float> x(300, 0.0f);
  expect_matches_golden(x, "all zero");
  for (bool sym : {true, false}) {
    const Calibration c = calibrate(x.data(), int64_t(x.size()), parse_method("minmax"), sym, kInt8);
    EXPECT_EQ(c.scale, 1.0f);
    EXPECT_EQ(c.nmse, 0.0);
    EXPECT_EQ(c.clipped, 0);
    if (!sym) {
      EXPECT_EQ(c.zero_point, -128);  // lo = 0: q = −128 stands for 0
    }
  }
}

TEST(Calibration, SingleValueMatchesGolden) {
  expect_matches_golden(std::vector<float>(64, 0.37f), "constant 0.37");
  expect_matches_golden(std::vector<float>(64, -2.5f), "constant -2.5");
  expect_matches_golden({1.25f}, "one sample");
  expect_matches_golden({1e-45f, 0.0f}, "the smallest subnormal");  // s = 1e-45 / 127 underflows to 0 → 1
  const std::vector<float> tiny{1e-45f, 0.0f};
  for (bool sym : {true, false}) EXPECT_EQ(calibrate(tiny.data(), 2, parse_method("minmax"), sym, kInt8).scale, 1.0f);
  expect_matches_golden({-7e-39f}, "one subnormal sample");  // a subnormal scale
}

TEST(Calibration, AllPositivePostSiluMatchesGolden) {
  // SiLU's output is ≥ −0.2785 and mostly positive; its ReLU'd part all positive.
  std::vector<float> silu = normal(5000, 2.0f, 4), relu = silu;
  for (float& v : silu) v = v / (1.0f + std::exp(-v));
  for (float& v : relu) v = v > 0 ? v : 0;
  expect_matches_golden(silu, "silu");
  expect_matches_golden(relu, "relu (all >= 0)");
  // All-positive data: the asymmetric range starts at 0, so zp is −128 and no code is wasted.
  const Calibration c = calibrate(relu.data(), int64_t(relu.size()), parse_method("minmax"), false, kInt8);
  EXPECT_EQ(c.lo, 0.0f);
  EXPECT_EQ(c.zero_point, -128);
  const Calibration s = calibrate(relu.data(), int64_t(relu.size()), parse_method("minmax"), true, kInt8);
  EXPECT_LT(c.nmse, s.nmse);  // half of the symmetric codes would go unused
}

TEST(Calibration, ExactlyRepresentableDataRebuildsExactly) {
  std::vector<float> x;
  for (int q = -127; q <= 127; ++q) x.push_back(0.25f * float(q));
  const Calibration c = calibrate(x.data(), int64_t(x.size()), parse_method("minmax"), true, kInt8);
  EXPECT_EQ(c.scale, 0.25f);
  EXPECT_EQ(c.nmse, 0.0);
  EXPECT_EQ(c.clipped, 0);
}

TEST(Calibration, PercentileHundredIsMinmaxAndMseNeverLosesToMinmax) {
  const std::vector<float> x = normal(2000, 3.0f, 5);
  for (bool sym : {true, false}) {
    const Calibration mm = calibrate(x.data(), int64_t(x.size()), parse_method("minmax"), sym, kInt8);
    const Calibration p100 = calibrate(x.data(), int64_t(x.size()), parse_method("percentile:100"), sym, kInt8);
    const Calibration ms = calibrate(x.data(), int64_t(x.size()), parse_method("mse"), sym, kInt8);
    EXPECT_EQ(bits(mm.scale), bits(p100.scale));
    EXPECT_EQ(mm.zero_point, p100.zero_point);
    EXPECT_LE(ms.nmse, mm.nmse);  // i = 100 is the minmax range itself
  }
}

TEST(Calibration, PercentileInterpolatesLikeNumpy) {
  // np.percentile([0, 1, 2, 3, 4], 90) = 3.6; of |x| symmetric.
  const std::vector<float> x{0, -1, 2, -3, 4};
  const Calibration c = calibrate(x.data(), 5, parse_method("percentile:90"), true, kInt8);
  EXPECT_FLOAT_EQ(c.hi, 3.6f);
  EXPECT_EQ(c.lo, -c.hi);
  // Asymmetric: np.percentile(x, 10) = -2.2, np.percentile(x, 90) = 3.2.
  const Calibration a = calibrate(x.data(), 5, parse_method("percentile:90"), false, kInt8);
  EXPECT_FLOAT_EQ(a.lo, -2.2f);
  EXPECT_FLOAT_EQ(a.hi, 3.2f);
}

TEST(Calibration, MethodParsing) {
  EXPECT_EQ(parse_method("percentile:99.99").percentile, 99.99);
  EXPECT_EQ(method_name(parse_method("percentile:99.99")), "percentile:99.99");
  EXPECT_EQ(method_name(parse_method("mse")), "mse");
  for (const char* bad : {"percentile:0", "percentile:100.5", "percentile:", "percentile:abc", "percentile:nan",
                          "percentile:-1", "percentile:99x"}) {
    try {
      parse_method(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--method ") + bad + ": P must be a number in (0, 100]"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(check_method(parse_method("percentile:49.9"), false), std::invalid_argument);
  EXPECT_NO_THROW(check_method(parse_method("percentile:49.9"), true));
  EXPECT_NO_THROW(check_method(parse_method("percentile:50"), false));
  EXPECT_THROW(parse_method("max"), std::invalid_argument);
  EXPECT_THROW(parse_method("MSE"), std::invalid_argument);
}

// The printed scale is what `npukit run --param` reads back (strtod, then fp32), bit for bit.
TEST(Calibration, ParamTextRoundTripsThroughDouble) {
  std::mt19937 rng(8);
  std::uniform_int_distribution<uint32_t> bits_of(0x00800000u, 0x7F7FFFFFu);  // every positive normal float
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits_of(rng);
    float f;
    std::memcpy(&f, &u, sizeof f);
    const std::string t = param_float_text(f);
    ASSERT_EQ(static_cast<float>(std::strtod(t.c_str(), nullptr)), f) << t;
  }
  EXPECT_EQ(param_float_text(1.0f), "1");
  EXPECT_EQ(param_float_text(0.15795477f), "0.15795477");
}

TEST(Calibration, FirstNonFinite) {
  std::vector<float> x(10, 1.0f);
  EXPECT_EQ(first_non_finite(x.data(), 10), -1);
  x[7] = std::nanf("");
  x[8] = INFINITY;
  EXPECT_EQ(first_non_finite(x.data(), 10), 7);
}

TEST(PerToken, QuantizesEachRowByItsMaximum) {
  // Row 0: max 2.54 → s = 0.02, q = x / s rounded half to even; row 1 all zero → s = 0, q = 0;
  // row 2 holds a value exactly at the maximum (q = ±127).
  const std::vector<float> x = {2.54f, -1.0f, 0.01f, 0.03f, 0, 0, 0, 0, -5, 2.5f, 5, 0};
  const PerToken p = quantize_per_token(x.data(), 3, 4);
  ASSERT_EQ(p.scales.size(), 3u);
  EXPECT_EQ(p.scales[0], 2.54f / 127.0f);
  EXPECT_EQ(p.scales[1], 0.0f);
  EXPECT_EQ(p.scales[2], 5.0f / 127.0f);
  for (int64_t i = 0; i < 12; ++i) {
    const float s = p.scales[size_t(i / 4)];
    const float want = s == 0 ? 0.0f : std::min(127.0f, std::max(-127.0f, std::nearbyint(x[size_t(i)] / s)));
    EXPECT_EQ(float(p.q[size_t(i)]), want) << i;
    EXPECT_EQ(p.x_hat[size_t(i)], s * want) << i;
  }
  EXPECT_EQ(p.q[0], 127);
  EXPECT_EQ(p.q[8], -127);
  EXPECT_EQ(p.q[10], 127);
}

}  // namespace
}  // namespace npukit::quant
