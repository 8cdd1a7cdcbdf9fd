// RMSNorm on the CPU: every input class, both dtypes and every shipped tier pass the gate;
// the NaN/Inf contract holds as stated, independently of the golden reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "golden/half.h"
#include "runtime/bind.h"
#include "runtime/registry.h"
#include "tests/gate_matrix.h"
#include "tools/gate/gate.h"

namespace npukit {
namespace {

class RmsNormGate : public testing::TestWithParam<GateCell> {};

TEST_P(RmsNormGate, EveryCasePasses) { expect_every_case_passes(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cpu, RmsNormGate,
                         testing::ValuesIn(gate_matrix("rms_norm", {"float32", "float16"},
                                                       {"boundary", "nan_inf", "overflow"})),
                         gate_cell_name);

// Runs rms_norm on fp32 rows and returns y.
std::vector<float> run_f32(const std::vector<float>& x, int64_t rows, int64_t hidden, double eps,
                           const std::string& target = "cpu") {
  std::vector<float> w(hidden, 1.0f), y(x.size(), -7.0f);
  TensorMap t = {
      {"x", {const_cast<float*>(x.data()), DType::float32, {rows, hidden}, {}}},
      {"weight", {w.data(), DType::float32, {hidden}, {}}},
      {"y", {y.data(), DType::float32, {rows, hidden}, {}}}};
  run_call(bind_call(find_op("rms_norm"), target, t, {{"eps", std::to_string(eps)}}));
  return y;
}

TEST(RmsNormContract, NanAndInfStayInTheirRow) {
  const int64_t rows = 4, hidden = 37;
  std::vector<float> x(rows * hidden);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.3f * i) + 0.1f;
  x[1 * hidden + 5] = std::numeric_limits<float>::quiet_NaN();
  x[2 * hidden + 9] = std::numeric_limits<float>::infinity();
  const auto y = run_f32(x, rows, hidden, 1e-5);
  for (int64_t h = 0; h < hidden; ++h) {
    EXPECT_TRUE(std::isfinite(y[0 * hidden + h]));
    EXPECT_TRUE(std::isnan(y[1 * hidden + h])) << "a NaN makes its whole row NaN";
    if (h == 9) {
      EXPECT_TRUE(std::isnan(y[2 * hidden + h])) << "Inf / Inf";
    } else {
      EXPECT_EQ(y[2 * hidden + h], 0.0f) << "finite / Inf";
    }
    EXPECT_TRUE(std::isfinite(y[3 * hidden + h]));
  }
}

TEST(RmsNormContract, AllZeroRowWithZeroEpsIsNan) {
  std::vector<float> x(2 * 16, 0.0f);
  x[16] = 1.0f;
  const auto y = run_f32(x, 2, 16, 0.0);
  for (int h = 0; h < 16; ++h) EXPECT_TRUE(std::isnan(y[h]));
  EXPECT_FLOAT_EQ(y[16], 4.0f);  // 1 / sqrt(1/16)
}

TEST(RmsNormContract, Fp32SumOfSquaresBeyondFloatRangeIsStillRight) {
  // Σx² = 4096 · 1e60 overflows float; the result must still be x / rms = ±1.
  const int64_t hidden = 4096;
  std::vector<float> x(hidden);
  for (int64_t i = 0; i < hidden; ++i) x[i] = (i % 2 ? 1e30f : -1e30f);
  for (const char* target : {"cpu", "cpu:avx2", "cpu:sse41"}) {
    const auto y = run_f32(x, 1, hidden, 1e-5, target);
    for (int64_t i = 0; i < hidden; ++i) ASSERT_NEAR(y[i], i % 2 ? 1.0f : -1.0f, 1e-6f) << target << " " << i;
  }
}

TEST(RmsNormContract, Fp16RowBeyond65504IsStillRight) {
  const int64_t hidden = 4096;
  std::vector<uint16_t> x(hidden), w(hidden, golden::float_to_half_bits(1.0f)), y(hidden);
  for (int64_t i = 0; i < hidden; ++i) x[i] = golden::float_to_half_bits(i % 3 ? 60000.0f : -30000.0f);
  TensorMap t = {{"x", {x.data(), DType::float16, {1, hidden}, {}}},
                                         {"weight", {w.data(), DType::float16, {hidden}, {}}},
                                         {"y", {y.data(), DType::float16, {1, hidden}, {}}}};
  run_call(bind_call(find_op("rms_norm"), "cpu", t, {}));
  double ss = 0;
  for (int64_t i = 0; i < hidden; ++i) ss += std::pow(golden::half_bits_to_float(x[i]), 2);
  const double rms = std::sqrt(ss / hidden + 1e-5);
  for (int64_t i = 0; i < hidden; ++i) {
    const double want = golden::half_bits_to_float(x[i]) / rms;
    ASSERT_NEAR(golden::half_bits_to_float(y[i]), want, 1e-3 * std::fabs(want)) << i;
  }
}

}  // namespace
}  // namespace npukit
