// The attention core on the CPU: every input class and dtype on every tier passes the
// gate; grouped-query and position rules are enforced.
#include <gtest/gtest.h>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "tests/gate_matrix.h"

namespace npukit {
namespace {

class AttentionGate : public testing::TestWithParam<GateCell> {};

TEST_P(AttentionGate, EveryCasePasses) { expect_every_case_passes(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cpu, AttentionGate,
                         testing::ValuesIn(gate_matrix("attention", {"float32", "float16"},
                                                       {"boundary", "nan_inf", "overflow"})),
                         gate_cell_name);

std::string error_of(int64_t hq, int64_t hkv, int32_t position) {
  const int64_t T = 1, Dh = 4, S = 8;
  std::vector<float> q(T * hq * Dh), k(hkv * S * Dh), v(hkv * S * Dh), o(T * hq * Dh);
  std::vector<int32_t> pos(T, position);
  std::map<std::string, TensorView> t = {{"q", {q.data(), DType::float32, {T, hq, Dh}, {}}},
                                         {"k_cache", {k.data(), DType::float32, {hkv, S, Dh}, {}}},
                                         {"v_cache", {v.data(), DType::float32, {hkv, S, Dh}, {}}},
                                         {"positions", {pos.data(), DType::int32, {T}, {}}},
                                         {"o", {o.data(), DType::float32, {T, hq, Dh}, {}}}};
  try {
    run_call(bind_call(find_op("attention"), "cpu", t, {}));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AttentionValidation, GroupsAndPositions) {
  EXPECT_EQ(error_of(4, 2, 3), "");
  EXPECT_EQ(error_of(3, 2, 3),
            "attention: Hq = 3 is not a multiple of Hkv = 2 (query head h reads kv head h / (Hq / Hkv))");
  EXPECT_EQ(error_of(2, 1, 8), "attention: positions[0] = 8: must be in [0, S_max = 8)");
  EXPECT_EQ(error_of(2, 1, -1), "attention: positions[0] = -1: must be in [0, S_max = 8)");
}

}  // namespace
}  // namespace npukit
