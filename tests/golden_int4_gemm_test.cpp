// golden/int4_gemm and golden/int4_gemm_cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "golden/int4_gemm.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

TEST(GoldenInt4Gemm, EvenKIsTheLowNibble) {
  const uint8_t w[] = {0x71, 0x8F, 0x0A};  // one row, K = 6 (or 5)
  EXPECT_EQ(int4_at(w, 3, 0, 0, true), 1);
  EXPECT_EQ(int4_at(w, 3, 0, 1, true), 7);
  EXPECT_EQ(int4_at(w, 3, 0, 2, true), 15);
  EXPECT_EQ(int4_at(w, 3, 0, 3, true), 8);
  EXPECT_EQ(int4_at(w, 3, 0, 4, true), 10);
  // Two's complement without zero points: 0xF = −1, 0x8 = −8, 0xA = −6.
  EXPECT_EQ(int4_at(w, 3, 0, 2, false), -1);
  EXPECT_EQ(int4_at(w, 3, 0, 3, false), -8);
  EXPECT_EQ(int4_at(w, 3, 0, 4, false), -6);
  EXPECT_EQ(int4_at(w, 3, 0, 1, false), 7);
}

// K = 3 (odd: the second byte's high nibble is padding), one group of 32.
TEST(GoldenInt4Gemm, SymmetricAndAsymmetricByHand) {
  const uint8_t w[] = {0x9F, 0xE3,   // channel 0: q = −1, −7, 3 (signed) or 15, 9, 3
                       0x21, 0x04};  // channel 1: q = 1, 2, 4
  const double scales[] = {0.5, 2};
  const double a[] = {3, -2, 5};
  Int4GemmInputs in;
  in.M = 1, in.N = 2, in.K = 3, in.group = 32;
  in.a_int8 = true;
  in.a = a, in.w = w, in.scales = scales;
  // 3·(−1) − 2·(−7) + 5·3 = 26 → 13; 3 − 4 + 20 = 19 → 38.
  EXPECT_EQ(int4_gemm_reference(in), (std::vector<double>{13, 38}));
  const uint8_t zp[] = {8, 1};
  in.zero_points = zp;
  // (15, 9, 3) − 8 = (7, 1, −5): 21 − 2 − 25 = −6 → −3; (0, 1, 3): 0 − 2 + 15 = 13 → 26.
  EXPECT_EQ(int4_gemm_reference(in), (std::vector<double>{-3, 26}));
  const double a_scales[] = {0.25};
  in.a_scales = a_scales;
  EXPECT_EQ(int4_gemm_reference(in), (std::vector<double>{-0.75, 6.5}));
  // Float activations: the same sums in double.
  const double af[] = {0.5, -1.25, 2};
  in.a_int8 = false, in.a = af, in.a_scales = nullptr;
  EXPECT_DOUBLE_EQ(int4_gemm_reference(in)[0], 0.5 * (0.5 * 7 - 1.25 * 1 - 2 * 5));
}

// K = 40 in groups of 32: the second group is partial, with its own scale and zero point.
TEST(GoldenInt4Gemm, EachGroupHasItsScaleAndZeroPoint) {
  std::vector<uint8_t> w(20, 0x55);  // q = 5 everywhere
  const double scales[] = {1, 10};
  const uint8_t zp[] = {5, 3};
  std::vector<double> a(40, 1);
  Int4GemmInputs in;
  in.M = 1, in.N = 1, in.K = 40, in.group = 32;
  in.a_int8 = true;
  in.a = a.data(), in.w = w.data(), in.scales = scales, in.zero_points = zp;
  EXPECT_EQ(int4_gemm_reference(in), (std::vector<double>{10 * 8 * 2}));
  // The magnitude sums |s · P| per group: here the same, both terms positive.
  EXPECT_EQ(int4_gemm_magnitude(in), (std::vector<double>{160}));
  EXPECT_EQ(int4_gemm_roundings(40, 32, true), 5);
  EXPECT_EQ(int4_gemm_roundings(40, 32, false), 37);
}

TEST(GoldenInt4Gemm, NanAndInfFollowIeee) {
  const uint8_t w[] = {0x11, 0x11, 0x11, 0x11};  // two channels, K = 4, q = 1
  double scales[] = {kNaN, kInf};
  const double a[] = {1, 2, -3, 0,   // row 0: Σ a = 0
                      1, 1, 1, 1};   // row 1: Σ a = 4
  Int4GemmInputs in;
  in.M = 2, in.N = 2, in.K = 4, in.group = 32;
  in.a_int8 = true;
  in.a = a, in.w = w, in.scales = scales;
  std::vector<double> y = int4_gemm_reference(in);
  EXPECT_TRUE(std::isnan(y[0]));  // NaN scale
  EXPECT_TRUE(std::isnan(y[1]));  // Inf · 0
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[3], kInf);
  scales[0] = 1, scales[1] = 1;
  const double a_scales[] = {kInf, kNaN};
  in.a_scales = a_scales;
  y = int4_gemm_reference(in);
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));  // Inf · 0 on a zero row
  EXPECT_TRUE(std::isnan(y[2]) && std::isnan(y[3]));
  // Float a: an infinity meets d = 0 (NaN) or d = 1 (Inf).
  const uint8_t w2[] = {0x10, 0x00, 0x11, 0x11};
  const double af[] = {kInf, 0, 0, 0, 1, 1, 1, 1};
  in.w = w2, in.a = af, in.a_int8 = false, in.a_scales = nullptr;
  y = int4_gemm_reference(in);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], kInf);
  EXPECT_EQ(y[2], 1);
  EXPECT_EQ(y[3], 4);
}

TEST(GoldenInt4Gemm, RefusesWhatTheOpRefuses) {
  const uint8_t w[] = {0};
  const double s[] = {1}, a[] = {1};
  Int4GemmInputs in;
  in.M = 1, in.N = 1, in.K = 1, in.group = 48;
  in.a = a, in.w = w, in.scales = s;
  EXPECT_THROW(int4_gemm_reference(in), std::invalid_argument);
  in.group = 32;
  const uint8_t zp[] = {16};
  in.zero_points = zp;
  EXPECT_THROW(int4_gemm_reference(in), std::invalid_argument);
  in.zero_points = nullptr;
  in.a_scales = s;  // float a
  EXPECT_THROW(int4_gemm_reference(in), std::invalid_argument);
  in.a_int8 = true;
  const double bad[] = {0.5};
  in.a = bad;
  EXPECT_THROW(int4_gemm_reference(in), std::invalid_argument);
}

const DType kDTypes[] = {DType::int8, DType::float32, DType::float16};

TEST(GoldenInt4GemmCases, DeterministicAndRepresentable) {
  for (DType t : kDTypes) {
    for (InputClass cls : all_input_classes()) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + std::string(input_class_name(cls)));
      const std::vector<Case> cases = int4_gemm_cases(cls, t);
      expect_same_cases(cases, int4_gemm_cases(cls, t));
      for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        EXPECT_EQ(c.inputs.at("a").dtype, t);
        for (const auto& [name, arr] : c.inputs) {
          for (double v : arr.values) ASSERT_TRUE(representable(v, arr.dtype)) << name << " " << v;
        }
        const std::string out = c.params.at("out");
        EXPECT_TRUE(out == "float32" || out == "float16");
      }
    }
  }
  EXPECT_TRUE(int4_gemm_cases(InputClass::normal, DType::int32).empty());
}

// Each case's reference is finite unless the class is nan_inf or the case says it overflows;
// the classes cover what golden/int4_gemm.h says they cover.
TEST(GoldenInt4GemmCases, CoverTheirClasses) {
  for (DType t : kDTypes) {
    std::set<std::string> groups, outs;
    bool asym = false, sym = false, s16 = false, s32 = false;
    for (InputClass cls : all_input_classes()) {
      const std::vector<Case> cases = int4_gemm_cases(cls, t);
      for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        groups.insert(c.params.at("group"));
        outs.insert(c.params.at("out"));
        (c.inputs.count("zero_points") ? asym : sym) = true;
        (c.inputs.at("scales").dtype == DType::float16 ? s16 : s32) = true;
        const std::vector<double> y = int4_gemm_reference(c);
        const bool may_not_be_finite = cls == InputClass::nan_inf || c.name.find("overflows") != std::string::npos;
        size_t finite = 0;
        for (double v : y) finite += std::isfinite(v);
        if (!may_not_be_finite) {
          EXPECT_EQ(finite, y.size());
        }
        if (cls == InputClass::nan_inf) {
          EXPECT_LT(finite, y.size());
        }
      }
      if (cls == InputClass::shape) {
        EXPECT_TRUE(contains_all(dim_values(cases, "K"), {1, 65, 129, 257, 1000, 4095, 4097}));
        EXPECT_TRUE(contains_all(dim_values(cases, "N"), {1, 3, 17, 65, 127, 4097, 11008}));
        EXPECT_TRUE(contains_all(dim_values(cases, "M"), {1, 2, 3, 7, 17, 33, 65, 100}));
      }
      if (cls == InputClass::boundary) {
        EXPECT_TRUE(contains_all(dim_values(cases, "K"), {1, 2, 3, 31, 32, 33, 63, 65, 127, 129}));
        EXPECT_TRUE(contains_all(dim_values(cases, "N"), {1, 15, 16, 17, 31, 33}));
      }
    }
    EXPECT_EQ(groups, (std::set<std::string>{"128", "32", "64"}));
    EXPECT_EQ(outs, (std::set<std::string>{"float16", "float32"}));
    EXPECT_TRUE(asym && sym && s16 && s32);
  }
}

// The overflow class reaches the largest group sum, 128 · 15 · 128 = 245760, in both signs:
// past int16, within int32.
TEST(GoldenInt4GemmCases, OverflowReachesTheLargestGroupSum) {
  const std::vector<Case> cases = int4_gemm_cases(InputClass::overflow, DType::int8);
  bool reached = false;
  for (const Case& c : cases) {
    if (c.name.find("largest group sums") == std::string::npos || c.params.at("group") != "128") continue;
    Case one = c;  // one group, a_scales 1, scale 1: y is P itself
    const int64_t K = 128, M = c.dims.at("M"), N = c.dims.at("N");
    one.dims["K"] = K;
    Array& a = one.inputs.at("a");
    std::vector<double> rows;
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t k = 0; k < K; ++k) rows.push_back(a.values[static_cast<size_t>(m * c.dims.at("K") + k)]);
    }
    a.values = rows, a.shape = {M, K};
    Array& w = one.inputs.at("w");
    std::vector<double> bytes;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t j = 0; j < K / 2; ++j) bytes.push_back(w.values[static_cast<size_t>(n * w.shape[1] + j)]);
    }
    w.values = bytes, w.shape = {N, K / 2};
    for (const char* t : {"scales", "zero_points"}) {
      if (!one.inputs.count(t)) continue;
      Array& x = one.inputs.at(t);
      std::vector<double> first;
      for (int64_t n = 0; n < N; ++n) first.push_back(x.values[static_cast<size_t>(n * x.shape[1])]);
      x.values = first, x.shape = {N, 1};
    }
    for (double& s : one.inputs.at("scales").values) s = 1;
    for (double& s : one.inputs.at("a_scales").values) s = 1;
    const std::vector<double> y = int4_gemm_reference(one);
    double hi = 0, lo = 0;
    for (double v : y) hi = std::max(hi, v), lo = std::min(lo, v);
    if (one.inputs.count("zero_points")) {
      EXPECT_EQ(hi, 245760);
      EXPECT_EQ(lo, -245760);
      reached = true;
    }
  }
  EXPECT_TRUE(reached);
}

}  // namespace
}  // namespace npukit::golden
