// silu_mul on the CPU: every input class, both dtypes and every shipped tier pass the gate;
// the NaN/Inf contract and the halves' order hold as stated, independently of the golden
// reference; a gate_up that is not [tokens, 2, ffn] is refused with a message naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "tests/gate_matrix.h"

namespace npukit {
namespace {

class SiluMulGate : public testing::TestWithParam<GateCell> {};

TEST_P(SiluMulGate, EveryCasePasses) { expect_every_case_passes(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cpu, SiluMulGate,
                         testing::ValuesIn(gate_matrix("silu_mul", {"float32", "float16"}, {"nan_inf", "overflow"})),
                         gate_cell_name);

// Runs silu_mul on one fp32 token of gate and up and returns y.
std::vector<float> run_f32(const std::vector<float>& gate, const std::vector<float>& up,
                           const std::string& target = "cpu") {
  const int64_t ffn = static_cast<int64_t>(gate.size());
  std::vector<float> gu(gate), y(gate.size(), -7.0f);
  gu.insert(gu.end(), up.begin(), up.end());
  TensorMap t = {{"gate_up", {gu.data(), DType::float32, {1, 2, ffn}, {}}},
                                         {"y", {y.data(), DType::float32, {1, ffn}, {}}}};
  run_call(bind_call(find_op("silu_mul"), target, t, {}));
  return y;
}

TEST(SiluMulContract, LimitsAreNotNan) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> gate = {-100.0f, -1000.0f, -inf, inf, nan, 0.0f, -inf, 2.0f, 1e30f, -1e30f};
  const std::vector<float> up = {1.0f, 3.0f, 5.0f, 1.0f, 1.0f, inf, inf, nan, 2.0f, 1.0f};
  for (const char* target : {"cpu", "cpu:avx2", "cpu:sse41"}) {
    const auto y = run_f32(gate, up, target);
    EXPECT_EQ(y[0], 0.0f) << target << ": silu(-100) = -0, not NaN";
    EXPECT_TRUE(std::signbit(y[0])) << target;
    EXPECT_EQ(y[1], 0.0f) << target;
    EXPECT_EQ(y[2], 0.0f) << target << ": silu(-inf) = -0";
    EXPECT_TRUE(std::signbit(y[2])) << target;
    EXPECT_EQ(y[3], inf) << target;
    EXPECT_TRUE(std::isnan(y[4])) << target;
    EXPECT_TRUE(std::isnan(y[5])) << target << ": silu(0) * inf";
    EXPECT_TRUE(std::isnan(y[6])) << target << ": -0 * inf";
    EXPECT_TRUE(std::isnan(y[7])) << target;
    EXPECT_EQ(y[8], 2e30f) << target;
    EXPECT_EQ(y[9], 0.0f) << target;
  }
}

TEST(SiluMulContract, GateIsTheFirstHalf) {
  // silu(1) * 4 = 2.924; silu(4) * 1 = 3.928: swapping the halves shows.
  const auto y = run_f32({1.0f, 0.0f}, {4.0f, 9.0f});
  EXPECT_NEAR(y[0], 4.0 / (1.0 + std::exp(-1.0)), 1e-5);
  EXPECT_EQ(y[1], 0.0f);
}

TEST(SiluMulValidation, HalvesMustBeTwo) {
  std::vector<float> gu(3 * 8), y(8);
  TensorMap t = {{"gate_up", {gu.data(), DType::float32, {1, 3, 8}, {}}},
                                         {"y", {y.data(), DType::float32, {1, 8}, {}}}};
  try {
    bind_call(find_op("silu_mul"), "cpu", t, {});
    FAIL() << "halves = 3 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("halves = 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace npukit
