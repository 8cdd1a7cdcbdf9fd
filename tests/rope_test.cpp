// RoPE on the CPU: every input class, both dtypes and styles (the cases mix them), every
// shipped tier pass the gate; validation errors; the contract checked directly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "tests/gate_matrix.h"
#include "tools/gate/gate.h"

namespace npukit {
namespace {

class RopeGate : public testing::TestWithParam<GateCell> {};

TEST_P(RopeGate, EveryCasePasses) { expect_every_case_passes(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cpu, RopeGate,
                         testing::ValuesIn(gate_matrix("rope", {"float32", "float16"},
                                                       {"boundary", "nan_inf", "overflow"})),
                         gate_cell_name);

struct Rope {
  int64_t tokens, heads, head_dim;
  std::vector<float> x, y;
  std::vector<int32_t> pos;
  Rope(int64_t t, int64_t h, int64_t d) : tokens(t), heads(h), head_dim(d), x(t * h * d), y(t * h * d, -7.0f), pos(t) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * i) + 0.25f;
    for (int64_t i = 0; i < t; ++i) pos[i] = static_cast<int32_t>(3 * i + 1);
  }
  TensorMap views() {
    return {{"x", {x.data(), DType::float32, {tokens, heads, head_dim}, {}}},
            {"positions", {pos.data(), DType::int32, {tokens}, {}}},
            {"y", {y.data(), DType::float32, {tokens, heads, head_dim}, {}}}};
  }
  void run(const std::map<std::string, std::string>& params, const std::string& target = "cpu") {
    run_call(bind_call(find_op("rope"), target, views(), params));
  }
};

std::string error_of(Rope& r, const std::map<std::string, std::string>& params) {
  try {
    r.run(params);
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(Errc::invalid_argument)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(RopeValidation, BadParametersAndPositionsAreClearErrors) {
  Rope r(3, 2, 8);
  EXPECT_EQ(error_of(r, {{"rotary_dim", "5"}}), "rope: parameter rotary_dim=5: must be even (dims rotate in pairs)");
  EXPECT_EQ(error_of(r, {{"rotary_dim", "10"}}), "rope: parameter rotary_dim=10: must be <= head_dim = 8");
  EXPECT_EQ(error_of(r, {{"style", "neox"}}), "rope: parameter style=neox: must be one of interleaved, half");
  EXPECT_EQ(error_of(r, {{"theta", "0.5"}}), "rope: parameter theta=0.5: must be in [1, 1e+12]");
  r.pos[1] = -4;
  EXPECT_EQ(error_of(r, {}), "rope: positions[1] = -4: must be in [0, max_position = 1048576)");
  r.pos[1] = 4096;
  EXPECT_EQ(error_of(r, {{"max_position", "4096"}}), "rope: positions[1] = 4096: must be in [0, max_position = 4096)");
  Rope odd(2, 1, 7);
  EXPECT_NE(error_of(odd, {{"style", "interleaved"}, {"rotary_dim", "4"}}).find("head_dim = 7 is odd"), std::string::npos);
  odd.run({{"style", "half"}, {"rotary_dim", "4"}});  // any head_dim with the half style
  EXPECT_EQ(odd.y[6], odd.x[6]);

  Rope r2(3, 2, 8);
  auto v = r2.views();
  std::vector<int32_t> short_pos(2, 0);
  v["positions"] = {short_pos.data(), DType::int32, {2}, {}};
  try {
    bind_call(find_op("rope"), "cpu", v, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "rope: tensor positions: dimension tokens = 2 but tensor x has tokens = 3; they must be equal");
  }
}

TEST(RopeContract, PassThroughAndPositionZeroAreExact) {
  for (const char* style : {"interleaved", "half"}) {
    Rope r(4, 3, 64);
    r.pos = {0, 5, 1000, 1048575};
    r.run({{"style", style}, {"rotary_dim", "32"}});
    for (int64_t t = 0; t < 4; ++t) {
      for (int64_t h = 0; h < 3; ++h) {
        for (int64_t d = 0; d < 64; ++d) {
          const size_t k = (t * 3 + h) * 64 + d;
          if (d >= 32 || t == 0) {
            ASSERT_EQ(r.y[k], r.x[k]) << style << " t=" << t << " d=" << d;
          }
        }
      }
    }
  }
}

TEST(RopeContract, NanStaysInItsPair) {
  for (const char* style : {"interleaved", "half"}) {
    Rope r(2, 2, 16);
    const bool half = std::string(style) == "half";
    const int64_t a = 5, b = half ? 5 + 8 : 4;  // the pair of dim 5
    r.x[(1 * 2 + 1) * 16 + a] = std::numeric_limits<float>::quiet_NaN();
    r.run({{"style", style}});
    for (size_t k = 0; k < r.y.size(); ++k) {
      const bool in_pair = k == size_t((1 * 2 + 1) * 16 + a) || k == size_t((1 * 2 + 1) * 16 + b);
      EXPECT_EQ(std::isnan(r.y[k]), in_pair) << style << " k=" << k;
    }
  }
}

TEST(RopeContract, StylesAgreeUnderTheirPermutation) {
  // The half layout is the interleaved one with dims (2i, 2i+1) moved to (i, i + d/2).
  Rope a(3, 2, 16), b(3, 2, 16);
  for (int64_t row = 0; row < 6; ++row) {
    for (int64_t i = 0; i < 8; ++i) {
      b.x[row * 16 + i] = a.x[row * 16 + 2 * i];
      b.x[row * 16 + i + 8] = a.x[row * 16 + 2 * i + 1];
    }
  }
  a.run({{"style", "interleaved"}});
  b.run({{"style", "half"}});
  for (int64_t row = 0; row < 6; ++row) {
    for (int64_t i = 0; i < 8; ++i) {
      EXPECT_NEAR(b.y[row * 16 + i], a.y[row * 16 + 2 * i], 1e-6f);
      EXPECT_NEAR(b.y[row * 16 + i + 8], a.y[row * 16 + 2 * i + 1], 1e-6f);
    }
  }
}

}  // namespace
}  // namespace npukit
