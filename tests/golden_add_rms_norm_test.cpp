// golden::add_rms_norm: the residual is the sum rounded once to the dtype, y is rms_norm of
// that rounded sum; its cases are deterministic, representable and reach what the header says.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "golden/add_rms_norm.h"
#include "golden/half.h"
#include "golden/rms_norm.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

TEST(GoldenAddRmsNorm, ResidualIsTheRoundedSumAndYItsNorm) {
  // 1 + 2^-11 is not an fp16 value: it rounds (to even) to 1. In fp32 it stays.
  const double x[] = {1.0, 3.0}, w[] = {1.0, 1.0};
  for (DType t : {DType::float16, DType::float32}) {
    double r[] = {std::ldexp(1.0, -11), -1.0}, y[2];
    add_rms_norm(x, r, w, 1, 2, 0.0, t, y);
    EXPECT_EQ(r[0], t == DType::float16 ? 1.0 : 1.0 + std::ldexp(1.0, -11));
    EXPECT_EQ(r[1], 2.0);
    double want[2];
    rms_norm(r, w, 1, 2, 0.0, want);
    EXPECT_EQ(y[0], want[0]);
    EXPECT_EQ(y[1], want[1]);
  }
}

TEST(GoldenAddRmsNorm, Fp16SumBeyond65504IsInf) {
  const double x[] = {40000.0, 1.0}, w[] = {1.0, 1.0};
  double r[] = {40000.0, 1.0}, y[2];
  add_rms_norm(x, r, w, 1, 2, 1e-6, DType::float16, y);
  EXPECT_EQ(r[0], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(y[0]));  // Inf / Inf
  EXPECT_EQ(y[1], 0.0);           // finite / Inf
}

TEST(GoldenAddRmsNormCases, DeterministicWellFormedAndCovering) {
  for (DType t : {DType::float32, DType::float16}) {
    int inf_sums = 0, nan_sums = 0, zero_rows = 0;
    for (InputClass cls : all_input_classes()) {
      SCOPED_TRACE(cls);
      const std::vector<Case> cases = add_rms_norm_cases(cls, t);
      expect_same_cases(cases, add_rms_norm_cases(cls, t));
      for (const Case& c : cases) {
        const int64_t rows = c.dims.at("rows"), hidden = c.dims.at("hidden");
        const Array &x = c.inputs.at("x"), &r = c.inputs.at("residual");
        ASSERT_EQ(x.shape, (std::vector<int64_t>{rows, hidden}));
        ASSERT_EQ(r.shape, x.shape);
        ASSERT_EQ(c.inputs.at("weight").shape, (std::vector<int64_t>{hidden}));
        for (int64_t row = 0; row < rows; ++row) {
          bool all_zero = true;
          for (int64_t h = 0; h < hidden; ++h) {
            const size_t i = static_cast<size_t>(row * hidden + h);
            ASSERT_TRUE(representable(x.values[i], t) && representable(r.values[i], t)) << c.name;
            const double s = round_to_dtype(x.values[i] + r.values[i], t);
            inf_sums += std::isinf(s) && std::isfinite(x.values[i]) && std::isfinite(r.values[i]);
            nan_sums += std::isnan(s) && !std::isnan(x.values[i]) && !std::isnan(r.values[i]);
            all_zero = all_zero && s == 0;
          }
          zero_rows += all_zero;
        }
      }
    }
    EXPECT_GT(inf_sums, 0) << "the overflow class must overflow the residual's dtype";
    EXPECT_GT(nan_sums, 0) << "+Inf + -Inf";
    EXPECT_GT(zero_rows, 0) << "x = -residual";
  }
  EXPECT_TRUE(add_rms_norm_cases(InputClass::normal, DType::int8).empty());
}

}  // namespace
}  // namespace npukit::golden
