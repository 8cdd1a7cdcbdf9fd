// add_rms_norm on the CPU: every input class, both dtypes and every shipped tier pass the
// gate (the residual is checked bit-exactly after its in-place update); independently of
// the golden reference, the new residual is x + residual and y is rms_norm of it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/bind.h"
#include "runtime/registry.h"
#include "tests/gate_matrix.h"

namespace npukit {
namespace {

class AddRmsNormGate : public testing::TestWithParam<GateCell> {};

TEST_P(AddRmsNormGate, EveryCasePasses) { expect_every_case_passes(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cpu, AddRmsNormGate,
                         testing::ValuesIn(gate_matrix("add_rms_norm", {"float32", "float16"},
                                                       {"boundary", "nan_inf"})),
                         gate_cell_name);

TEST(AddRmsNormContract, UpdatesResidualInPlaceAndNormalizesTheSum) {
  const int64_t rows = 5, hidden = 37;  // 37: vector tails on every tier
  std::vector<float> x(rows * hidden), res(rows * hidden), w(hidden, 2.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(0.3f * i);
    res[i] = std::cos(0.7f * i) + 0.5f;
  }
  for (const char* target : {"cpu", "cpu:avx2", "cpu:sse41"}) {
    std::vector<float> r = res, y(x.size(), -7.0f);
    TensorMap t = {{"x", {x.data(), DType::float32, {rows, hidden}, {}}},
                                           {"residual", {r.data(), DType::float32, {rows, hidden}, {}}},
                                           {"weight", {w.data(), DType::float32, {hidden}, {}}},
                                           {"y", {y.data(), DType::float32, {rows, hidden}, {}}}};
    run_call(bind_call(find_op("add_rms_norm"), target, t, {{"eps", "0"}}));
    for (int64_t row = 0; row < rows; ++row) {
      double ss = 0;
      for (int64_t h = 0; h < hidden; ++h) {
        const size_t i = static_cast<size_t>(row * hidden + h);
        ASSERT_EQ(r[i], x[i] + res[i]) << target << " " << i;  // one fp32 addition, not applied twice
        ss += double(r[i]) * r[i];
      }
      const double rms = std::sqrt(ss / hidden);
      for (int64_t h = 0; h < hidden; ++h) {
        const size_t i = static_cast<size_t>(row * hidden + h);
        ASSERT_NEAR(y[i], r[i] / rms * 2.0, 1e-5) << target << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace npukit
