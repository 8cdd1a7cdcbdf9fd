// golden::silu_mul: its values and limits, and its cases: deterministic, representable,
// gate_up shaped [tokens, 2, ffn], and each class holding what its header promises.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "golden/silu_mul.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(GoldenSilu, ValuesAndLimits) {
  EXPECT_DOUBLE_EQ(silu(1.0), 0.7310585786300049);  // 1 / (1 + e^-1)
  EXPECT_DOUBLE_EQ(silu(-1.0), -0.2689414213699951);
  EXPECT_EQ(silu(0.0), 0.0);
  EXPECT_TRUE(std::signbit(silu(-0.0)));
  EXPECT_NEAR(silu(-100.0), -100.0 * std::exp(-100.0), 1e-55);  // tiny, not 0 in double
  EXPECT_EQ(silu(-1000.0), 0.0);
  EXPECT_TRUE(std::signbit(silu(-1000.0)));
  EXPECT_EQ(silu(-kInf), 0.0);
  EXPECT_TRUE(std::signbit(silu(-kInf)));
  EXPECT_EQ(silu(kInf), kInf);
  EXPECT_TRUE(std::isnan(silu(std::nan(""))));
}

TEST(GoldenSiluMul, GateIsTheFirstHalfOfEachToken) {
  // Two tokens of ffn 2: [g0 g1 | u0 u1], [g2 g3 | u2 u3].
  const double gu[] = {1, 0, 4, 9, -1, 2, 2, -kInf};
  double y[4];
  silu_mul(gu, 2, 2, y);
  EXPECT_DOUBLE_EQ(y[0], silu(1) * 4);
  EXPECT_EQ(y[1], 0.0);
  EXPECT_DOUBLE_EQ(y[2], silu(-1) * 2);
  EXPECT_EQ(y[3], -kInf);
}

TEST(GoldenSiluMulCases, DeterministicWellFormedAndCovering) {
  for (DType t : {DType::float32, DType::float16}) {
    int neg_inf_gates = 0, flushed_gates = 0, overflowing = 0;
    for (InputClass cls : all_input_classes()) {
      SCOPED_TRACE(cls);
      const std::vector<Case> cases = silu_mul_cases(cls, t);
      expect_same_cases(cases, silu_mul_cases(cls, t));
      for (const Case& c : cases) {
        const Array& gu = c.inputs.at("gate_up");
        const int64_t tokens = c.dims.at("tokens"), ffn = c.dims.at("ffn");
        ASSERT_EQ(c.dims.at("halves"), 2);
        ASSERT_EQ(gu.shape, (std::vector<int64_t>{tokens, 2, ffn}));
        for (size_t i = 0; i < gu.values.size(); ++i) {
          const double v = gu.values[i];
          ASSERT_TRUE(representable(v, t)) << c.name << " " << i;
          const bool gate = (static_cast<int64_t>(i) / ffn) % 2 == 0;
          neg_inf_gates += gate && v == -kInf;
          flushed_gates += gate && v < -87.4 && std::isfinite(v);
        }
        std::vector<double> y(static_cast<size_t>(tokens * ffn));
        silu_mul(gu.values.data(), tokens, ffn, y.data());
        for (double v : y) overflowing += std::isinf(round_to_dtype(v, t)) && std::isfinite(v);
      }
    }
    EXPECT_GT(neg_inf_gates, 0);
    EXPECT_GT(flushed_gates, 0);
    EXPECT_GT(overflowing, 0) << "the overflow class must overflow the output dtype";
  }
  EXPECT_TRUE(silu_mul_cases(InputClass::normal, DType::int8).empty());
}

}  // namespace
}  // namespace npukit::golden
