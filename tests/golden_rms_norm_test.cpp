// golden/rms_norm and golden/rms_norm_cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>
#include <vector>

#include "golden/half.h"
#include "golden/rms_norm.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

double eps_of(const Case& c) { return std::stod(c.params.at("eps")); }

std::vector<double> norm(const std::vector<double>& x, const std::vector<double>& w, double eps) {
  const auto hidden = static_cast<int64_t>(w.size());
  std::vector<double> y(x.size());
  rms_norm(x.data(), w.data(), static_cast<int64_t>(x.size()) / hidden, hidden, eps, y.data());
  return y;
}

TEST(GoldenRmsNorm, HandComputedRows) {
  // row 0: mean(9, 16) = 12.5; row 1: mean = 1, so y = w; eps = 0
  const std::vector<double> y = norm({3, 4, -1, 1}, {1, 2}, 0);
  EXPECT_EQ(y[0], 3 / std::sqrt(12.5) * 1);
  EXPECT_EQ(y[1], 4 / std::sqrt(12.5) * 2);
  EXPECT_EQ(y[2], -1);
  EXPECT_EQ(y[3], 2);
  // eps enters under the root: mean(1, 1, 1, 1) = 1, rms = sqrt(1.5)
  const std::vector<double> z = norm({1, -1, 1, -1}, {1, 1, 1, 1}, 0.5);
  EXPECT_EQ(z[1], -1 / std::sqrt(1.5));
  // hidden = 1: x / sqrt(x² + eps)
  EXPECT_EQ(norm({-2}, {3}, 1e-5)[0], -2 / std::sqrt(4 + 1e-5) * 3);
}

// The scaled sum must not change a single bit where the plain formula is in range.
TEST(GoldenRmsNorm, BitIdenticalToPlainFormulaOnOrdinaryData) {
  const Case c = rms_norm_cases(InputClass::normal, DType::float32).at(3);
  const Array& x = c.inputs.at("x");
  const Array& w = c.inputs.at("weight");
  const int64_t rows = c.dims.at("rows"), hidden = c.dims.at("hidden");
  const double eps = eps_of(c);
  std::vector<double> y(x.values.size());
  rms_norm(x.values.data(), w.values.data(), rows, hidden, eps, y.data());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < hidden; ++i) ss += x.values[r * hidden + i] * x.values[r * hidden + i];
    const double rms = std::sqrt(ss / static_cast<double>(hidden) + eps);
    for (int64_t i = 0; i < hidden; ++i) {
      ASSERT_EQ(y[r * hidden + i], x.values[r * hidden + i] / rms * w.values[i]);
    }
  }
}

TEST(GoldenRmsNorm, HugeAndTinyRowsDoNotOverflow) {
  std::vector<double> y = norm({1e200, -1e200, 1e200, 1e200}, {1, 1, 1, 2}, 1e-5);
  EXPECT_DOUBLE_EQ(y[0], 1);
  EXPECT_DOUBLE_EQ(y[1], -1);
  EXPECT_DOUBLE_EQ(y[3], 2);
  y = norm({1e300, 2e300, 2e300}, {1, 1, 1}, 1e-5);  // rms = sqrt(3) * 1e300
  EXPECT_DOUBLE_EQ(y[0], 1 / std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(y[1], 2 / std::sqrt(3.0));
  y = norm({1e-200, -1e-200}, {1, 1}, 0);
  EXPECT_DOUBLE_EQ(y[0], 1);
  EXPECT_DOUBLE_EQ(y[1], -1);
  y = norm({1e-300, 3e-300}, {1, 1}, 1e-5);  // eps dominates
  EXPECT_DOUBLE_EQ(y[1], 3e-300 / std::sqrt(1e-5));
  y = norm({3e-320, 4e-320}, {1, 1}, 0);  // subnormal x
  EXPECT_NEAR(y[0], 3 / std::sqrt(12.5), 1e-3);
}

TEST(GoldenRmsNorm, NanAndInfSemantics) {
  const std::vector<double> x = {
      1, kNaN, 2,     // NaN: the whole row
      1, kInf, -2,    // +Inf: finite/Inf = ±0, Inf/Inf = NaN
      -kInf, 3, 0,    // -Inf
      0, 0, 0,        // all zero, eps = 0: 0/0
      1, 2, 2,        // untouched by its neighbours
  };
  const std::vector<double> y = norm(x, {1, 1, 1}, 0);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
  EXPECT_EQ(y[3], 0);
  EXPECT_FALSE(std::signbit(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], 0);
  EXPECT_TRUE(std::signbit(y[5]));
  EXPECT_TRUE(std::isnan(y[6]));
  EXPECT_EQ(y[7], 0);
  for (int i = 9; i < 12; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
  EXPECT_EQ(y[12], 1 / std::sqrt(3.0));

  const std::vector<double> z = norm({0, 0}, {1, 1}, 1e-5);  // zero row with eps: zeros
  EXPECT_EQ(z[0], 0);
  const std::vector<double> w = norm({1, 1}, {kNaN, 1}, 0);  // weight: its column only
  EXPECT_TRUE(std::isnan(w[0]));
  EXPECT_EQ(w[1], 1);
}

TEST(GoldenCases, NumberTextReadsBackExactly) {
  EXPECT_EQ(number_text(1e-5), "1e-05");
  EXPECT_EQ(number_text(0), "0");
  EXPECT_EQ(number_text(0.1), "0.1");
  for (double v : {1.0 / 3, -2.5e-300, 6.02214076e23, 1e-5 * 3}) {
    EXPECT_EQ(std::stod(number_text(v)), v) << number_text(v);
  }
}

TEST(GoldenRmsNormCases, DeterministicAndWellFormed) {
  EXPECT_EQ(input_class_names(),
            (std::vector<std::string>{"normal", "boundary", "overflow", "nan_inf", "shape"}));
  for (DType t : {DType::float32, DType::float16}) {
    for (InputClass cls : all_input_classes()) {
      const std::vector<Case> a = rms_norm_cases(cls, t);
      const std::vector<Case> b = rms_norm_cases(cls, t);
      SCOPED_TRACE(cls);
      expect_same_cases(a, b);
      int64_t elements = 0;
      for (const Case& c : a) {
        SCOPED_TRACE(c.name);
        const int64_t rows = c.dims.at("rows"), hidden = c.dims.at("hidden");
        EXPECT_EQ(c.dims.size(), 2u);
        EXPECT_EQ(c.params.size(), 1u);
        EXPECT_EQ(number_text(eps_of(c)), c.params.at("eps"));
        const Array& x = c.inputs.at("x");
        const Array& w = c.inputs.at("weight");
        EXPECT_EQ(x.shape, (std::vector<int64_t>{rows, hidden}));
        EXPECT_EQ(w.shape, (std::vector<int64_t>{hidden}));
        EXPECT_EQ(x.dtype, t);
        EXPECT_EQ(w.dtype, t);
        for (double v : x.values) ASSERT_TRUE(representable(v, t));
        for (double v : w.values) ASSERT_TRUE(representable(v, t));
        elements += rows * hidden;
      }
      EXPECT_LE(elements, 8 << 20) << cls;
    }
  }
  EXPECT_TRUE(rms_norm_cases(InputClass::normal, DType::int8).empty());
}

double row_max_abs(const Case& c, int64_t r) {
  const Array& x = c.inputs.at("x");
  const int64_t hidden = x.shape[1];
  double m = 0;
  for (int64_t i = 0; i < hidden; ++i) m = std::max(m, std::fabs(x.values[r * hidden + i]));
  return m;
}

TEST(GoldenRmsNormCases, RequiredShapesAndSpecialRows) {
  for (DType t : {DType::float32, DType::float16}) {
    const std::vector<Case> boundary = rms_norm_cases(InputClass::boundary, t);
    EXPECT_TRUE(contains_all(dim_values(boundary, "hidden"),
                             {1, 7, 63, 64, 65, 4095, 4096, 4097, 8192}));
    EXPECT_TRUE(contains_all(dim_values(boundary, "rows"), {1, 2, 3, 17, 128, 512}));
    bool constant_row = false, tiny_row = false, eps0 = false;
    for (const Case& c : boundary) {
      const Array& x = c.inputs.at("x");
      const int64_t hidden = x.shape[1];
      eps0 |= eps_of(c) == 0;
      for (int64_t r = 0; r < x.shape[0]; ++r) {
        const double* row = x.values.data() + r * hidden;
        constant_row |= hidden > 1 && std::all_of(row, row + hidden, [&](double v) {
                          return v == row[0] && v != 0;
                        });
        tiny_row |= hidden > 1000 && row_max_abs(c, r) < 1e-2 && eps_of(c) == 1e-5;
      }
    }
    EXPECT_TRUE(constant_row && tiny_row && eps0) << dtype_name(t);

    const std::vector<Case> shape = rms_norm_cases(InputClass::shape, t);
    EXPECT_TRUE(contains_all(dim_values(shape, "hidden"),
                             {1, 3, 31, 33, 127, 129, 1000, 4097, 8191, 8193}));
    EXPECT_TRUE(contains_all(dim_values(shape, "rows"), {1, 512}));
  }
}

TEST(GoldenRmsNormCases, OverflowClassOverflowsNaiveAccumulators) {
  bool f16_big = false;
  for (const Case& c : rms_norm_cases(InputClass::overflow, DType::float16)) {
    const Array& x = c.inputs.at("x");
    double ss = 0;
    for (int64_t i = 0; i < x.shape[1]; ++i) ss += x.values[i] * x.values[i];
    if (eps_of(c) == 0) {
      EXPECT_LT(ss / static_cast<double>(x.shape[1]), 0x1p-24) << c.name;  // squares underflow
    } else {
      EXPECT_GT(ss, 65504.0 * 100) << c.name;
    }
    f16_big |= c.dims.at("hidden") == 4096 && row_max_abs(c, 0) > 50000;
  }
  EXPECT_TRUE(f16_big);

  bool f32_big = false, f32_tiny = false;
  for (const Case& c : rms_norm_cases(InputClass::overflow, DType::float32)) {
    f32_big |= row_max_abs(c, 0) >= 1e30;
    f32_tiny |= eps_of(c) == 0 && row_max_abs(c, 0) <= 2e-30;
    // golden stays finite on every case of the class, in float32 too
    const Array& x = c.inputs.at("x");
    std::vector<double> y(x.values.size());
    rms_norm(x.values.data(), c.inputs.at("weight").values.data(), c.dims.at("rows"),
             c.dims.at("hidden"), eps_of(c), y.data());
    for (double v : y) {
      ASSERT_TRUE(std::isfinite(round_to_dtype(v, DType::float32))) << c.name;
      ASSERT_LE(std::fabs(v), 1.5 * std::sqrt(static_cast<double>(c.dims.at("hidden"))));
    }
  }
  EXPECT_TRUE(f32_big && f32_tiny);
}

TEST(GoldenRmsNormCases, NanInfClassHasEachSpecialValue) {
  for (DType t : {DType::float32, DType::float16}) {
    bool nan = false, pos_inf = false, neg_inf = false, zero_row_nan = false;
    for (const Case& c : rms_norm_cases(InputClass::nan_inf, t)) {
      const Array& x = c.inputs.at("x");
      for (double v : x.values) {
        nan |= std::isnan(v);
        pos_inf |= v == kInf;
        neg_inf |= v == -kInf;
      }
      const int64_t rows = c.dims.at("rows"), hidden = c.dims.at("hidden");
      std::vector<double> y(x.values.size());
      rms_norm(x.values.data(), c.inputs.at("weight").values.data(), rows, hidden,
               eps_of(c), y.data());
      for (int64_t r = 0; r < rows; ++r) {
        if (eps_of(c) == 0 && row_max_abs(c, r) == 0) {
          zero_row_nan = std::all_of(y.begin() + r * hidden, y.begin() + (r + 1) * hidden,
                                     [](double v) { return std::isnan(v); });
        }
      }
    }
    EXPECT_TRUE(nan && pos_inf && neg_inf && zero_row_nan) << dtype_name(t);
  }
}

TEST(GoldenRmsNormCases, NoNanOutsideTheNanInfClass) {
  for (InputClass cls : {InputClass::normal, InputClass::boundary, InputClass::overflow, InputClass::shape}) {
    for (const Case& c : rms_norm_cases(cls, DType::float16)) {
      const Array& x = c.inputs.at("x");
      std::vector<double> y(x.values.size());
      rms_norm(x.values.data(), c.inputs.at("weight").values.data(), c.dims.at("rows"),
               c.dims.at("hidden"), eps_of(c), y.data());
      for (double v : y) ASSERT_TRUE(std::isfinite(v)) << cls << " / " << c.name;
    }
  }
}

}  // namespace
}  // namespace npukit::golden
