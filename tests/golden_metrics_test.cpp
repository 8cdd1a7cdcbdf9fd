// golden/metrics, golden/tolerance, golden/guard: how a kernel's output is judged.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "golden/guard.h"
#include "golden/half.h"
#include "golden/metrics.h"
#include "golden/tolerance.h"

namespace npukit::golden {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

Metrics run(const std::vector<double>& a, const std::vector<double>& e, DType t = DType::float64,
            double atol = 0, double rtol = 0) {
  EXPECT_EQ(a.size(), e.size());
  return compare(a.data(), e.data(), static_cast<int64_t>(a.size()), t, atol, rtol);
}

TEST(GoldenMetrics, HandComputedSmallCase) {
  const std::vector<double> a = {1.0, 2.5, 0.0, -3.0};
  const std::vector<double> e = {1.0, 2.0, 0.0, -2.0};
  const Metrics m = run(a, e, DType::float64, 0, 0.25);
  EXPECT_EQ(m.count, 4);
  EXPECT_EQ(m.max_abs, 1.0);
  EXPECT_EQ(m.max_rel, 0.5);        // 1/|-2| and 0.5/2 = 0.25
  EXPECT_EQ(m.mismatches, 1);       // 0.5 <= 0.25*2, 1 > 0.25*2
  EXPECT_EQ(m.mismatch_ratio, 0.25);
  EXPECT_EQ(m.nmse, (0.25 + 1.0) / (1 + 4 + 0 + 4));
  EXPECT_DOUBLE_EQ(m.cosine, (1 + 5 + 6) / std::sqrt((1 + 6.25 + 9) * 9.0));
  EXPECT_EQ(m.zero_ratio, 0.25);
  EXPECT_EQ(m.max_ulp, 0);          // float64 output: no ULP metric
  EXPECT_TRUE(m.lsb_histogram.empty());
  EXPECT_EQ(m.nan_inf_mismatches, 0);
  ASSERT_EQ(m.worst.size(), 2u);    // only nonzero errors
  EXPECT_EQ(m.worst[0].index, 3);
  EXPECT_EQ(m.worst[0].abs_err, 1.0);
  EXPECT_EQ(m.worst[0].rel_err, 0.5);
  EXPECT_EQ(m.worst[1].index, 1);
}

TEST(GoldenMetrics, RelativeErrorIsAbsoluteAtOrBelow1e5) {
  EXPECT_DOUBLE_EQ(run({2e-6}, {1e-6}).max_rel, 1e-6);
  EXPECT_DOUBLE_EQ(run({3e-5}, {1e-5}).max_rel, 2e-5);  // |e| == 1e-5 still absolute
  EXPECT_DOUBLE_EQ(run({3e-5}, {2e-5}).max_rel, 0.5);
  EXPECT_DOUBLE_EQ(run({-1}, {0}).max_rel, 1);
}

TEST(GoldenMetrics, MismatchUsesAtolPlusRtolTimesExpected) {
  const std::vector<double> e = {0, 10, 100, 1000};
  const std::vector<double> a = {0.1, 10.2, 100.35, 1000};
  const Metrics m = run(a, e, DType::float64, 0.15, 0.002);
  // limits 0.15, 0.17, 0.35, 2.15 against errors 0.1, 0.2, 0.35 (just inside), 0
  EXPECT_EQ(m.mismatches, 1);
}

TEST(GoldenMetrics, NmseAndCosineEdges) {
  Metrics m = run({0, 0}, {0, 0});
  EXPECT_EQ(m.nmse, 0);
  EXPECT_EQ(m.cosine, 1);
  EXPECT_EQ(m.zero_ratio, 1);
  m = run({1, 0}, {0, 0});
  EXPECT_EQ(m.nmse, kInf);
  EXPECT_EQ(m.cosine, 0);
  m = run({0, 0}, {1, 0});
  EXPECT_EQ(m.nmse, 1);
  EXPECT_EQ(m.cosine, 0);
  m = run({-1, -2}, {1, 2});
  EXPECT_EQ(m.cosine, -1);
  EXPECT_EQ(m.nmse, 4);
}

TEST(GoldenMetrics, SumsDoNotOverflowForHugeFloat64) {
  const Metrics m = run({1e300, 2e300}, {1e300, 1e300});
  EXPECT_DOUBLE_EQ(m.nmse, 0.5);
  EXPECT_DOUBLE_EQ(m.cosine, 3 / std::sqrt(10.0));
  const Metrics t = run({1e-300, 2e-300}, {1e-300, 1e-300});
  EXPECT_DOUBLE_EQ(t.nmse, 0.5);
}

TEST(GoldenMetrics, UlpDistanceFloat32) {
  const double one = 1.0;
  const double next = std::nextafter(1.0f, 2.0f);
  EXPECT_EQ(run({next}, {one}, DType::float32).max_ulp, 1);
  float three = 1.0f;
  for (int i = 0; i < 3; ++i) three = std::nextafter(three, 2.0f);
  EXPECT_EQ(run({three}, {one}, DType::float32).max_ulp, 3);
  EXPECT_EQ(run({std::nextafter(1.0f, 0.0f)}, {one}, DType::float32).max_ulp, 1);
  // across zero: +0 and -0 coincide, ±smallest subnormal are two steps apart
  EXPECT_EQ(run({-0.0}, {0.0}, DType::float32).max_ulp, 0);
  EXPECT_EQ(run({FLT_TRUE_MIN}, {0.0}, DType::float32).max_ulp, 1);
  EXPECT_EQ(run({-FLT_TRUE_MIN}, {FLT_TRUE_MIN}, DType::float32).max_ulp, 2);
  EXPECT_EQ(run({-FLT_MIN}, {FLT_MIN}, DType::float32).max_ulp, 2.0 * 0x800000);
}

TEST(GoldenMetrics, UlpDistanceFloat16) {
  EXPECT_EQ(run({1 + 0x1p-10}, {1}, DType::float16).max_ulp, 1);
  EXPECT_EQ(run({1 - 0x1p-11}, {1}, DType::float16).max_ulp, 1);
  EXPECT_EQ(run({1 + 0x1p-8}, {1}, DType::float16).max_ulp, 4);
  EXPECT_EQ(run({0x1p-24}, {-0x1p-24}, DType::float16).max_ulp, 2);
  EXPECT_EQ(run({-0.0}, {0.0}, DType::float16).max_ulp, 0);
  EXPECT_EQ(run({65504}, {half_bits_to_float(0x7bfe)}, DType::float16).max_ulp, 1);
  EXPECT_EQ(run({1 + 0x1p-10}, {1}, DType::int8).max_ulp, 0);
}

TEST(GoldenMetrics, LsbHistogramForIntegerOutputs) {
  const Metrics m = run({1, 2, 3, 4, -5, 127}, {1, 3, 3, 1, -5, -128}, DType::int8);
  const std::map<int64_t, int64_t> want = {{0, 3}, {1, 1}, {3, 1}, {255, 1}};
  EXPECT_EQ(m.lsb_histogram, want);
  EXPECT_EQ(m.max_abs, 255);
  EXPECT_TRUE(run({1}, {1}, DType::float32).lsb_histogram.empty());
}

TEST(GoldenMetrics, NanAndInfMatchOnlyThemselves) {
  const double other_nan = -std::nan("7");
  const std::vector<double> a = {kNaN, kInf, -kInf, kInf, 1, kNaN, 2, -kInf};
  const std::vector<double> e = {other_nan, kInf, kInf, 1, kInf, 3, 2, -kInf};
  const Metrics m = run(a, e, DType::float32);
  EXPECT_EQ(m.nan_inf_mismatches, 4);  // positions 2, 3, 4, 5
  EXPECT_EQ(m.mismatches, 4);
  EXPECT_EQ(m.max_abs, 0);             // the one finite pair is exact
  EXPECT_EQ(m.nmse, 0);
  ASSERT_EQ(m.worst.size(), 4u);
  EXPECT_EQ(m.worst[0].index, 2);
  EXPECT_EQ(m.worst[3].index, 5);
  EXPECT_TRUE(std::isnan(m.worst[3].abs_err));
}

TEST(GoldenMetrics, WorstPointsSpecialsFirstThenByAbsError) {
  std::vector<double> e(40, 1.0), a(40, 1.0);
  for (int i = 0; i < 40; ++i) a[i] = 1.0 + 0.001 * i;  // error grows with the index
  a[5] = a[39];                                        // a tie: index 5 comes first
  a[20] = kNaN;
  a[30] = kInf;
  const Metrics m = run(a, e);
  ASSERT_EQ(m.worst.size(), kWorstPoints);
  EXPECT_EQ(m.worst[0].index, 20);
  EXPECT_EQ(m.worst[1].index, 30);
  EXPECT_EQ(m.worst[2].index, 5);
  EXPECT_EQ(m.worst[3].index, 39);
  EXPECT_EQ(m.worst[4].index, 38);
  EXPECT_EQ(m.worst[9].index, 33);
  for (size_t k = 3; k < m.worst.size(); ++k) {
    EXPECT_GE(m.worst[k - 1].abs_err, m.worst[k].abs_err);
  }
}

TEST(GoldenMetrics, ZeroRatioCountsExactZerosOfExpected) {
  EXPECT_EQ(run({0, 0, 1, 1e-30}, {0, -0.0, 1, 1e-30}).zero_ratio, 0.5);
  EXPECT_EQ(run({}, {}).zero_ratio, 0);
}

Metrics metrics(int64_t count) {
  Metrics m;
  m.count = count;
  return m;
}

TEST(GoldenJudge, PassReportsTheTightestTrueMetric) {
  const Tolerance t = default_tolerance(DType::float32, false);
  Metrics m = metrics(100);
  m.max_rel = 3.1e-7;
  m.max_abs = 1e-7;
  Verdict v = judge(m, t);
  EXPECT_EQ(v.status, Status::pass);
  EXPECT_EQ(v.metric, "max_rel");
  EXPECT_EQ(v.value, 3.1e-7);
  EXPECT_EQ(v.limit, 1.3e-6);
  EXPECT_EQ(v.summary, "max_rel 3.1e-07 <= 1.3e-06");

  m.max_rel = 0.5;  // a tiny expected value; atol covers it
  m.max_abs = 2e-6;
  v = judge(m, t);
  EXPECT_EQ(v.status, Status::pass);
  EXPECT_EQ(v.metric, "max_abs");

  m.max_abs = 2e-5;  // neither alone, atol + rtol*|e| together
  v = judge(m, t);
  EXPECT_EQ(v.status, Status::pass);
  EXPECT_EQ(v.metric, "mismatch_ratio");
}

TEST(GoldenJudge, MismatchRatioAndNmse) {
  Tolerance f16 = default_tolerance(DType::float16, false);
  Metrics m = metrics(10000);
  m.max_rel = 0.01;
  m.mismatches = 5;
  m.mismatch_ratio = 5e-4;
  Verdict v = judge(m, f16);
  EXPECT_EQ(v.status, Status::pass);
  EXPECT_EQ(v.metric, "mismatch_ratio");
  m.mismatches = 100;
  m.mismatch_ratio = 0.01;
  v = judge(m, f16);
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_EQ(v.metric, "mismatch_ratio");
  EXPECT_EQ(v.value, 0.01);
  EXPECT_EQ(v.limit, 1e-3);

  const Tolerance red = default_tolerance(DType::float32, true);
  m.nmse = 1e-9;
  v = judge(m, red);
  EXPECT_EQ(v.status, Status::pass);
  EXPECT_EQ(v.metric, "nmse");
  EXPECT_EQ(v.limit, 1e-7);
  m.nmse = 1e-6;
  v = judge(m, red);
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_EQ(v.metric, "mismatch_ratio");
  EXPECT_NE(v.summary.find("nmse 1e-06 > 1e-07"), std::string::npos) << v.summary;
}

TEST(GoldenJudge, NanInfMismatchAlwaysFails) {
  Metrics m = metrics(10);
  m.nan_inf_mismatches = 3;
  m.mismatches = 3;
  m.mismatch_ratio = 0.3;
  m.nmse = 0;
  Tolerance t = default_tolerance(DType::float32, true);
  t.max_mismatch_ratio = 1;  // would pass on every other metric
  const Verdict v = judge(m, t);
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_EQ(v.metric, "nan_inf_mismatches");
  EXPECT_EQ(v.summary, "nan_inf_mismatches 3 > 0");
  EXPECT_EQ(judge(m, default_tolerance(DType::int8, false)).metric, "nan_inf_mismatches");
}

TEST(GoldenJudge, ExactFailsOnAnyError) {
  const Tolerance t = default_tolerance(DType::int8, false);
  EXPECT_TRUE(t.exact);
  Metrics m = metrics(10);
  m.lsb_histogram = {{0, 9}, {1, 1}};
  m.max_abs = 1;
  Verdict v = judge(m, t);
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_EQ(v.metric, "lsb");
  EXPECT_EQ(v.value, 1);
  m.lsb_histogram = {{0, 10}};
  m.max_abs = 0;
  v = judge(m, t);
  EXPECT_EQ(v.status, Status::pass);
  EXPECT_EQ(v.metric, "lsb");

  Tolerance exact_float;
  exact_float.exact = true;
  Metrics f = metrics(4);
  f.max_abs = 0x1p-24;
  v = judge(f, exact_float);
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_EQ(v.metric, "max_abs");
}

TEST(GoldenJudge, MostlyZeroOrEmptyPassIsMistrusted) {
  const Tolerance t = default_tolerance(DType::float32, false);
  Metrics m = metrics(100);
  m.zero_ratio = 0.95;
  Verdict v = judge(m, t);
  EXPECT_EQ(v.status, Status::mistrusted);
  EXPECT_EQ(v.metric, "zero_ratio");
  EXPECT_EQ(v.value, 0.95);
  EXPECT_EQ(v.limit, 0.9);
  m.zero_ratio = 0.9;
  EXPECT_EQ(judge(m, t).status, Status::pass);

  m.zero_ratio = 0.95;  // a failure stays a failure
  m.mismatches = 50;
  m.mismatch_ratio = 0.5;
  EXPECT_EQ(judge(m, t).status, Status::fail);

  EXPECT_EQ(judge(metrics(0), t).status, Status::mistrusted);
  EXPECT_EQ(judge(metrics(0), t).metric, "count");
}

TEST(GoldenJudge, NamesAndDefaults) {
  EXPECT_EQ(status_name(Status::pass), "PASS");
  EXPECT_EQ(status_name(Status::fail), "FAIL");
  EXPECT_EQ(status_name(Status::mistrusted), "MISTRUSTED");
  EXPECT_EQ(status_name(Status::unsupported), "UNSUPPORTED");
  EXPECT_EQ(status_name(Status::crashed), "CRASH");
  for (DType d : {DType::float32, DType::float16, DType::float64, DType::int8, DType::uint8,
                  DType::int32, DType::int64}) {
    for (bool reduction : {false, true}) {
      EXPECT_FALSE(default_tolerance(d, reduction).reason.empty()) << dtype_name(d);
    }
  }
  const Tolerance f32 = default_tolerance(DType::float32, false);
  EXPECT_EQ(f32.rtol, 1.3e-6);
  EXPECT_EQ(f32.atol, 1e-5);
  EXPECT_FALSE(f32.max_nmse);
  const Tolerance f32r = default_tolerance(DType::float32, true);
  EXPECT_EQ(f32r.rtol, 1e-4);
  EXPECT_EQ(f32r.max_nmse, 1e-7);
  const Tolerance f16 = default_tolerance(DType::float16, false);
  EXPECT_EQ(f16.rtol, 1e-3);
  EXPECT_EQ(f16.max_mismatch_ratio, 1e-3);
}

// End to end: a float32 rounding of a double result passes; one flipped element fails.
TEST(GoldenJudge, CompareThenJudge) {
  std::vector<double> e(1000), a(1000);
  for (int i = 0; i < 1000; ++i) {
    e[i] = round_to_dtype(std::sin(i * 0.37), DType::float32);
    a[i] = round_to_dtype(std::sin(i * 0.37) * (1 + 3e-7), DType::float32);
  }
  const Tolerance t = default_tolerance(DType::float32, false);
  EXPECT_EQ(judge(run(a, e, DType::float32, t.atol, t.rtol), t).status, Status::pass);
  a[500] = -a[500];
  const Verdict v = judge(run(a, e, DType::float32, t.atol, t.rtol), t);
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_EQ(v.metric, "mismatch_ratio");
}

TEST(GoldenGuard, FreshBufferIsAlignedFilledAndIntact) {
  GuardedBuffer b(100);
  EXPECT_EQ(b.bytes(), 100u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % GuardedBuffer::kAlignment, 0u);
  EXPECT_TRUE(b.intact());
  EXPECT_EQ(b.corruption_report(), "");
  float f;
  std::memcpy(&f, b.data(), sizeof f);
  EXPECT_TRUE(std::isnan(f));  // 0xFF fill: an unwritten float output is a NaN
  uint16_t h;
  std::memcpy(&h, b.data(), sizeof h);
  EXPECT_TRUE(std::isnan(half_bits_to_float(h)));
  std::memset(b.data(), 0, b.bytes());  // writing the whole payload is fine
  EXPECT_TRUE(b.intact());
  GuardedBuffer z(8, 0x00);
  EXPECT_EQ(static_cast<const uint8_t*>(z.data())[7], 0);
}

TEST(GoldenGuard, DetectsOneByteBeforeThePayload) {
  GuardedBuffer b(100);
  static_cast<uint8_t*>(b.data())[-1] ^= 1;
  EXPECT_FALSE(b.intact());
  EXPECT_EQ(b.corruption_report(),
            "guard before payload: 1 corrupt bytes, first at payload offset -1");
}

TEST(GoldenGuard, DetectsOneByteAfterThePayload) {
  GuardedBuffer b(100);
  static_cast<uint8_t*>(b.data())[100] ^= 0x80;
  static_cast<uint8_t*>(b.data())[103] = 0;
  EXPECT_FALSE(b.intact());
  EXPECT_EQ(b.corruption_report(),
            "guard after payload: 2 corrupt bytes, first at payload offset +100");
}

TEST(GoldenGuard, ReportsBothSidesAndFarBytes) {
  GuardedBuffer b(16);
  auto* p = static_cast<uint8_t*>(b.data());
  p[-static_cast<ptrdiff_t>(GuardedBuffer::kGuardBytes)] ^= 0xFF;
  p[16 + GuardedBuffer::kGuardBytes - 1] ^= 0xFF;
  EXPECT_EQ(b.corruption_report(),
            "guard before payload: 1 corrupt bytes, first at payload offset -4096; "
            "guard after payload: 1 corrupt bytes, first at payload offset +4111");
}

TEST(GoldenGuard, MoveOnly) {
  static_assert(!std::is_copy_constructible_v<GuardedBuffer>);
  static_assert(std::is_nothrow_move_constructible_v<GuardedBuffer>);
  GuardedBuffer a(32);
  void* p = a.data();
  GuardedBuffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.bytes(), 32u);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(a.bytes(), 0u);
  EXPECT_TRUE(a.intact());
  GuardedBuffer empty(0);
  static_cast<uint8_t*>(empty.data())[0] = 0;
  EXPECT_FALSE(empty.intact());
}

}  // namespace
}  // namespace npukit::golden
