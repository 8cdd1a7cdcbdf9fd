// golden/per_token_quant_cases: deterministic, well-formed, and each class holds what its
// header promises (so the gate's bit-exact check meets every branch of the contract).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "golden/per_token_quant.h"
#include "golden/per_token_quant_cases.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

struct RowFacts {
  int zero_scale = 0, nan_scale = 0, full_scale_q = 0;
};

// What golden::quantize_token makes of each row of every case of a class.
RowFacts facts_of(const std::vector<Case>& cases) {
  RowFacts f;
  for (const Case& c : cases) {
    const int64_t T = c.dims.at("T"), K = c.dims.at("K");
    std::vector<float> row(static_cast<size_t>(K));
    std::vector<int8_t> q(static_cast<size_t>(K));
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t k = 0; k < K; ++k) row[size_t(k)] = float(c.inputs.at("a").values[size_t(t * K + k)]);
      const float s = quantize_token(row.data(), K, q.data());
      f.zero_scale += s == 0.0f;
      f.nan_scale += std::isnan(s);
      for (int8_t v : q) f.full_scale_q += v == 127 || v == -127;
    }
  }
  return f;
}

TEST(GoldenPerTokenQuantCases, DeterministicAndWellFormed) {
  for (DType t : {DType::float32, DType::float16}) {
    for (InputClass cls : all_input_classes()) {
      SCOPED_TRACE(cls);
      const std::vector<Case> a = per_token_quant_cases(cls, t);
      expect_same_cases(a, per_token_quant_cases(cls, t));
      int64_t elements = 0;
      for (const Case& c : a) {
        SCOPED_TRACE(c.name);
        ASSERT_EQ(c.inputs.size(), 1u);
        const Array& x = c.inputs.at("a");
        EXPECT_EQ(x.shape, (std::vector<int64_t>{c.dims.at("T"), c.dims.at("K")}));
        EXPECT_EQ(x.dtype, t);
        for (double v : x.values) ASSERT_TRUE(representable(v, t));
        elements += x.size();
      }
      EXPECT_LE(elements, 8 << 20);
    }
  }
  EXPECT_TRUE(per_token_quant_cases(InputClass::normal, DType::int8).empty());
}

TEST(GoldenPerTokenQuantCases, ClassesReachEveryBranchOfTheContract) {
  for (DType t : {DType::float32, DType::float16}) {
    SCOPED_TRACE(dtype_name(t));
    EXPECT_GE(facts_of(per_token_quant_cases(InputClass::boundary, t)).zero_scale, 1);  // the zero row
    EXPECT_GE(facts_of(per_token_quant_cases(InputClass::nan_inf, t)).nan_scale, 4);
    EXPECT_EQ(facts_of(per_token_quant_cases(InputClass::normal, t)).nan_scale, 0);
    EXPECT_TRUE(contains_all(dim_values(per_token_quant_cases(InputClass::shape, t), "K"), {1, 3, 31, 33, 127, 129, 4097, 8191}));
    EXPECT_TRUE(contains_all(dim_values(per_token_quant_cases(InputClass::boundary, t), "K"), {1, 16, 17, 64, 65, 4096, 4097}));
  }
  // fp32 rows of subnormals: the scale underflows to 0 on at least one of them.
  EXPECT_GE(facts_of(per_token_quant_cases(InputClass::overflow, DType::float32)).zero_scale, 1);
}

}  // namespace
}  // namespace npukit::golden
