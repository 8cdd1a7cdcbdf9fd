// tools/quantize (npukit quantize's arithmetic) against golden/weight_quant.h, bit for bit,
// on every scheme, symmetric and asymmetric: random weights with outlier and all-zero
// channels, exact ties at .5, extreme magnitudes; plus the refusals and the report.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "golden/weight_quant.h"
#include "tools/quantize/quant_report.h"
#include "tools/quantize/weight_quant.h"

namespace npukit::quant {
namespace {

struct Golden {
  std::vector<uint8_t> q;
  std::vector<float> s;
  std::vector<int32_t> zp;
};

Golden golden_quantize(const std::vector<float>& w, int64_t N, int64_t K, const Scheme& sc) {
  Golden g;
  if (sc.bits == Bits::int8) {
    std::vector<int8_t> q(static_cast<size_t>(N * K)), zp(static_cast<size_t>(N));
    g.s.resize(size_t(N));
    golden::quantize_int8_per_channel(w.data(), N, K, sc.symmetric, q.data(), g.s.data(), zp.data());
    for (int8_t v : q) g.q.push_back(static_cast<uint8_t>(v));
    if (!sc.symmetric) g.zp.assign(zp.begin(), zp.end());
  } else {
    const int64_t groups = K / sc.group;
    std::vector<uint8_t> zp(static_cast<size_t>(N * groups));
    g.q.resize(size_t(N * K / 2));
    g.s.resize(size_t(N * groups));
    golden::quantize_int4_group(w.data(), N, K, sc.group, sc.symmetric, g.q.data(), g.s.data(), zp.data());
    if (!sc.symmetric) g.zp.assign(zp.begin(), zp.end());
  }
  return g;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

std::vector<Scheme> all_schemes() {
  std::vector<Scheme> out;
  for (bool sym : {true, false}) {
    out.push_back({Bits::int8, 0, sym});
    for (int64_t g : {32, 64, 128}) out.push_back({Bits::int4, g, sym});
  }
  return out;
}

// Checks the tool against the golden on w[N, K] and the tool's own invariants.
void expect_matches_golden(const std::vector<float>& w, int64_t N, int64_t K, const Scheme& sc, const char* what) {
  SCOPED_TRACE(std::string(what) + " " + scheme_name(sc, true));
  const Quantized t = quantize(w.data(), N, K, sc);
  const Golden g = golden_quantize(w, N, K, sc);
  ASSERT_EQ(t.q.size(), g.q.size());
  for (size_t i = 0; i < t.q.size(); ++i) ASSERT_EQ(int(t.q[i]), int(g.q[i])) << "q byte " << i;
  ASSERT_TRUE(same_bits(t.scales, g.s));
  ASSERT_EQ(t.zero_points, g.zp);
  const QRange r = q_range(sc);
  for (float s : t.scales) ASSERT_TRUE(std::isfinite(s) && s > 0) << s;
  for (int32_t z : t.zero_points) ASSERT_TRUE(z >= r.lo && z <= r.hi) << z;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      const int32_t q = q_at(t, sc, n, k);
      ASSERT_TRUE(q >= r.lo && q <= r.hi) << q;
    }
}

constexpr int64_t kN = 12, kK = 256;

std::vector<float> random_weights(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> w(static_cast<size_t>(kN * kK));
  for (float& v : w) v = normal(rng);
  for (int64_t k = 0; k < kK; ++k) w[size_t(2 * kK + k)] = 0;  // an all-zero channel
  w[size_t(5 * kK + 17)] = 40.0f;                                // outlier channels
  w[size_t(6 * kK + 200)] = -75.0f;
  for (int64_t k = 0; k < kK; ++k) w[size_t(7 * kK + k)] = std::fabs(w[size_t(7 * kK + k)]);  // all positive
  for (int64_t k = 0; k < kK; ++k) w[size_t(8 * kK + k)] = -std::fabs(w[size_t(8 * kK + k)]);  // all negative
  for (int64_t k = 0; k < 64; ++k) w[size_t(9 * kK + k)] = 0;  // a zero group inside a row
  return w;
}

TEST(WeightQuant, RandomWeightsWithOutliersAndZeroChannelsMatchGolden) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const std::vector<float> w = random_weights(seed);
    for (const Scheme& sc : all_schemes()) expect_matches_golden(w, kN, kK, sc, "random");
  }
}

// Rows whose scale is exactly 1, so that w / s lands on every .5 tie (and for the
// asymmetric int4 row, a zero point that is itself a tie, 7.5 → 8).
TEST(WeightQuant, TiesRoundHalfToEven) {
  const int64_t K = 128;
  std::vector<float> w;
  const float sym_int8_max = 127, sym_int4_max = 7;
  for (float top : {sym_int8_max, sym_int4_max}) {
    std::vector<float> row(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) row[size_t(k)] = float(k % 16) - 7.5f;  // −7.5 … 7.5
    for (int64_t g = 0; g < K; g += 32) row[size_t(g)] = top;  // every group's max
    w.insert(w.end(), row.begin(), row.end());
  }
  {
    std::vector<float> row(static_cast<size_t>(K));  // asymmetric int8: lo −128, hi 127 → s = 1, zp = 0
    for (int64_t k = 0; k < K; ++k) row[size_t(k)] = float(k % 8) - 3.5f;
    row[0] = -128, row[1] = 127;
    w.insert(w.end(), row.begin(), row.end());
  }
  {
    std::vector<float> row(static_cast<size_t>(K));  // asymmetric int4: lo −7.5, hi 7.5 → s = 1, zp = rhe(7.5) = 8
    for (int64_t k = 0; k < K; ++k) row[size_t(k)] = float(k % 16) - 7.5f;
    w.insert(w.end(), row.begin(), row.end());
  }
  const int64_t N = int64_t(w.size()) / K;
  for (const Scheme& sc : all_schemes()) expect_matches_golden(w, N, K, sc, "ties");

  // And the ties themselves, independently of both implementations.
  const Scheme int8sym{Bits::int8, 0, true};
  const Quantized q = quantize(w.data(), N, K, int8sym);
  EXPECT_EQ(q.scales[0], 1.0f);
  EXPECT_EQ(q_at(q, int8sym, 0, 1), -6);  // −6.5 → −6
  EXPECT_EQ(q_at(q, int8sym, 0, 2), -6);  // −5.5 → −6
  EXPECT_EQ(q_at(q, int8sym, 0, 10), 2);  // 2.5 → 2
  EXPECT_EQ(q_at(q, int8sym, 0, 11), 4);  // 3.5 → 4
  const Scheme int4asym{Bits::int4, 32, false};
  const Quantized a = quantize(w.data(), N, K, int4asym);
  EXPECT_EQ(a.scales[size_t(3 * a.groups)], 1.0f);
  EXPECT_EQ(a.zero_points[size_t(3 * a.groups)], 8);
  EXPECT_EQ(q_at(a, int4asym, 3, 0), 0);   // rhe(−7.5) = −8, + 8
  EXPECT_EQ(q_at(a, int4asym, 3, 15), 15);  // rhe(7.5) = 8, + 8 → 16, clamped
  EXPECT_EQ(golden::round_half_even(-2.5f), -2.0f);
  EXPECT_EQ(golden::round_half_even(0.5f), 0.0f);
  EXPECT_EQ(golden::round_half_even(1.5f), 2.0f);
}

TEST(WeightQuant, ExtremeValuesMatchGolden) {
  const int64_t K = 128;
  const float big = std::numeric_limits<float>::max(), tiny = std::numeric_limits<float>::denorm_min();
  std::vector<float> w;
  auto row = [&](auto f) {
    for (int64_t k = 0; k < K; ++k) w.push_back(f(k));
  };
  row([&](int64_t k) { return k % 2 ? big : -big; });  // hi − lo overflows fp32
  row([&](int64_t k) { return k == 3 ? big : 1.0f; });
  row([&](int64_t k) { return float(k % 5) * tiny; });  // scales underflow to 0 → 1
  row([&](int64_t k) { return float(k + 1) * 1e-38f; });  // subnormal scales
  row([&](int64_t k) { return k % 3 ? -0.0f : 0.0f; });
  row([&](int64_t k) { return std::ldexp(1.0f, int(k % 60) - 30) * (k % 2 ? 1.0f : -1.0f); });
  const int64_t N = int64_t(w.size()) / K;
  for (const Scheme& sc : all_schemes()) expect_matches_golden(w, N, K, sc, "extreme");
}

TEST(WeightQuant, AllZeroChannelHasScaleOneAndRebuildsExactly) {
  const std::vector<float> w(64, 0.0f);
  for (const Scheme& sc : all_schemes()) {
    if (sc.group > 64) continue;
    const Quantized q = quantize(w.data(), 1, 64, sc);
    for (float s : q.scales) EXPECT_EQ(s, 1.0f);
    for (float v : dequantize(q, sc)) EXPECT_EQ(v, 0.0f);
    const ErrorReport e = reconstruction_error(w.data(), dequantize(q, sc).data(), 1, 64, 3);
    EXPECT_EQ(e.nmse, 0);
    EXPECT_EQ(e.cosine, 1);
  }
}

TEST(WeightQuant, Int4PacksEvenKInTheLowNibble) {
  std::vector<float> w(32, 0.0f);
  w[0] = 7;   // q 7 → 0x7
  w[1] = -7;  // q −7 → 0x9
  w[2] = -1;  // q −1 → 0xF
  w[3] = 2;
  const Scheme sc{Bits::int4, 32, true};
  const Quantized q = quantize(w.data(), 1, 32, sc);
  ASSERT_EQ(q.q.size(), 16u);
  EXPECT_EQ(q.q[0], 0x97);
  EXPECT_EQ(q.q[1], 0x2F);
}

TEST(WeightQuant, RefusesNonFiniteWeightsAndBadShapes) {
  std::vector<float> w(64, 0.5f);
  w[37] = std::numeric_limits<float>::quiet_NaN();
  try {
    quantize(w.data(), 2, 32, {Bits::int8, 0, true});
    FAIL() << "NaN accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("w[1, 5] = nan"), std::string::npos) << e.what();
  }
  w[37] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(quantize(w.data(), 2, 32, {Bits::int4, 32, false}), std::invalid_argument);
  w[37] = 0;
  try {
    quantize(w.data(), 1, 64, {Bits::int4, 128, true});
    FAIL() << "K = 64 accepted with group 128";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("K = 64: must be a multiple of the group 128"), std::string::npos) << e.what();
  }
  EXPECT_THROW(quantize(w.data(), 0, 64, {Bits::int8, 0, true}), std::invalid_argument);
}

TEST(WeightQuant, ParsesSchemes) {
  EXPECT_EQ(parse_scheme("int8-per-channel", true).bits, Bits::int8);
  EXPECT_EQ(parse_scheme("int4-group", true).group, 32);
  EXPECT_EQ(parse_scheme("int4-group:128", false).group, 128);
  EXPECT_FALSE(parse_scheme("int4-group:64", false).symmetric);
  for (const char* bad : {"int4-group:16", "int4-group:", "int4", "int8", "fp8", "int4-group:64x"})
    EXPECT_THROW(parse_scheme(bad, true), std::invalid_argument) << bad;
  // The form the reports print parses back to the same scheme.
  for (const Scheme& s : {Scheme{Bits::int8, 0, true}, Scheme{Bits::int4, 64, false}, Scheme{Bits::int4, 128, true}}) {
    const Scheme back = parse_scheme_and_mode(scheme_name(s, true));
    EXPECT_EQ(back.bits, s.bits);
    EXPECT_EQ(back.group, s.group);
    EXPECT_EQ(back.symmetric, s.symmetric);
  }
  EXPECT_TRUE(parse_scheme_and_mode("int4-group:32").symmetric);
  for (const char* bad : {"int4-group:32,", "int4-group:32,signed", "int4-group:16,symmetric", ",asymmetric"})
    EXPECT_THROW(parse_scheme_and_mode(bad), std::invalid_argument) << bad;
}

TEST(WeightQuant, ReportsTheErrorAndTheWorstChannels) {
  const std::vector<float> w = {1, 2, 3, 4, 1, 1, 1, 1, 0, 0, 0, 0};
  const std::vector<float> h = {1, 2, 3, 4, 1, 1, 1, 0, 0, 0, 0, 0};
  const ErrorReport e = reconstruction_error(w.data(), h.data(), 3, 4, 2);
  EXPECT_DOUBLE_EQ(e.nmse, 1.0 / 34.0);
  EXPECT_DOUBLE_EQ(e.cosine, 33.0 / std::sqrt(34.0 * 33.0));
  EXPECT_EQ(e.max_abs_error, 1.0);
  EXPECT_EQ(e.max_error_n, 1);
  EXPECT_EQ(e.max_error_k, 3);
  ASSERT_EQ(e.worst.size(), 2u);
  EXPECT_EQ(e.worst[0].channel, 1);
  EXPECT_DOUBLE_EQ(e.worst[0].nmse, 0.25);
  EXPECT_EQ(e.worst[1].channel, 0);  // a tie at 0 with channel 2: the lower index
}

}  // namespace
}  // namespace npukit::quant
