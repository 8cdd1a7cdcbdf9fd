// The golden per-token quantization contract (docs/ops/attention.md, "Int8 weights"): zero,
// NaN, Inf and underflowing rows, ties to even, fp32 dequantization, and the int8 golden of
// qkv_attention against the float golden on the same (dequantized) weights; and its cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "golden/attention.h"
#include "golden/per_token_quant.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

std::vector<int> quantized(const std::vector<float>& a, float* s) {
  std::vector<int8_t> q(a.size(), 99);
  *s = quantize_token(a.data(), static_cast<int64_t>(a.size()), q.data());
  return std::vector<int>(q.begin(), q.end());
}

TEST(GoldenPerTokenQuant, ZeroRowHasScaleZeroAndZeros) {
  float s = -1;
  EXPECT_EQ(quantized({0.0f, -0.0f, 0.0f}, &s), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(s, 0.0f);
  // max |a| / 127 underflows fp32 (m < 127·2^-150): the same.
  const float tiny = std::ldexp(1.0f, -149) * 60;  // 60 · 2^-149 / 127 < 2^-150: rounds to 0
  EXPECT_EQ(quantized({tiny, -tiny}, &s), (std::vector<int>{0, 0}));
  EXPECT_EQ(s, 0.0f);
}

TEST(GoldenPerTokenQuant, NonFiniteRowHasScaleNaNAndZeros) {
  for (float bad : {kNaNf, kInff, -kInff}) {
    float s = 0;
    EXPECT_EQ(quantized({1.0f, bad, -3.0f}, &s), (std::vector<int>{0, 0, 0})) << bad;
    EXPECT_TRUE(std::isnan(s)) << bad;
    EXPECT_TRUE(std::isnan(dequantize_token(0, s, 1.0f)));  // the row's projection is NaN
  }
}

TEST(GoldenPerTokenQuant, RoundsTiesToEvenAfterAnFp32Division) {
  float s = 0;
  // max 127 → s = 1 exactly: the quotients are the values themselves.
  EXPECT_EQ(quantized({127, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f, -127}, &s),
            (std::vector<int>{127, 0, 2, 2, 0, -2, -2, 4, -127}));
  EXPECT_EQ(s, 1.0f);
  // max 63.5 → s = 0.5: 0.25 → 0.5 → 0, 0.75 → 1.5 → 2, −1.25 → −2.5 → −2.
  EXPECT_EQ(quantized({63.5f, 0.25f, 0.75f, -1.25f}, &s), (std::vector<int>{127, 0, 2, -2}));
  EXPECT_EQ(s, 0.5f);
  // s = fp32(1/127), not its double: the scale and every quotient are fp32 operations.
  const std::vector<float> a = {1.0f, 0.3f, -0.77f};
  quantized(a, &s);
  EXPECT_EQ(s, 1.0f / 127.0f);
  EXPECT_EQ(quantized(a, &s)[1], static_cast<int>(std::nearbyint(0.3f / (1.0f / 127.0f))));
}

TEST(GoldenPerTokenQuant, DequantizesInFp32InTheDocumentedOrder) {
  const float s = 0.1f, ws = 3e-3f;
  EXPECT_EQ(dequantize_token(12345, s, ws), 12345.0f * (s * ws));
  // (float)acc rounds above 2^24.
  EXPECT_EQ(dequantize_token((int64_t(1) << 24) + 1, 1.0f, 1.0f), 16777216.0f);
  EXPECT_EQ(dequantize_token(0, 0.0f, 2.0f), 0.0f);
}

TEST(GoldenPerTokenQuant, ProjectRejectsNonInt8WeightsAndBadScales) {
  const std::vector<double> a = {1, 2}, ws = {1};
  std::vector<double> out(1);
  for (double w : {128.0, -129.0, 0.5}) {
    const std::vector<double> wv = {w, 1};
    EXPECT_THROW(project_int8(a.data(), wv.data(), ws.data(), 1, 1, 2, out.data()), std::invalid_argument) << w;
  }
  const std::vector<double> w = {1, 1};
  for (double bad : {0.0, -1.0, 0.1, std::numeric_limits<double>::infinity()}) {  // 0.1 is not an fp32
    const std::vector<double> b = {bad};
    EXPECT_THROW(project_int8(a.data(), w.data(), b.data(), 1, 1, 2, out.data()), std::invalid_argument) << bad;
  }
}

// The int8 golden is the float golden up to activation quantization: with the weights
// replaced by their real values w_int · ws, y agrees to about 8-bit quantization noise. A
// scale applied along the wrong axis or a lost zero point would be off by far more.
TEST(GoldenQkvAttention, Int8IsTheFloatOpUpToActivationQuantization) {
  int checked = 0;
  for (const Case& c : qkv_attention_cases(InputClass::normal, DType::float32)) {
    if (!c.inputs.count("w_qkv_scale")) continue;
    Case f = c;
    for (const char* w : {"w_qkv", "w_o"}) {
      Array& a = f.inputs.at(w);
      const Array& sc = c.inputs.at(std::string(w) + "_scale");
      const int64_t K = a.shape.at(1);
      a.dtype = DType::float64;
      for (size_t i = 0; i < a.values.size(); ++i) a.values[i] *= sc.values[i / static_cast<size_t>(K)];
      f.inputs.erase(std::string(w) + "_scale");
    }
    const QkvAttentionResult q = qkv_attention_reference(c), r = qkv_attention_reference(f);
    double err = 0, ref = 0;
    for (size_t i = 0; i < r.y.size(); ++i) {
      err += (q.y[i] - r.y[i]) * (q.y[i] - r.y[i]);
      ref += r.y[i] * r.y[i];
    }
    EXPECT_LT(err / ref, 1e-3) << c.name;
    EXPECT_GT(err / ref, 0) << c.name;  // it is quantized
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

// Its cases: deterministic, well-formed, and each class holds what golden/per_token_quant.h
// promises (so the gate's bit-exact check meets every branch of the contract).

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
