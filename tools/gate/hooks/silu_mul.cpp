// The gate's hooks for silu_mul: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/silu_mul.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "golden/silu_mul.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& gu = c.inputs.at("gate_up");
  const int64_t tokens = c.dims.at("tokens"), ffn = c.dims.at("ffn");
  std::vector<double> y(static_cast<size_t>(tokens * ffn));
  golden::silu_mul(gu.values.data(), tokens, ffn, y.data());
  return {{"y", std::move(y)}};
}

// The largest finite |up| of a case: what a flushed silu is multiplied by.
double max_abs_up(const golden::Case& c) {
  const golden::Array& gu = c.inputs.at("gate_up");
  const int64_t ffn = c.dims.at("ffn");
  double m = 0;
  for (size_t i = 0; i < gu.values.size(); ++i) {
    const double v = std::fabs(gu.values[i]);
    if ((static_cast<int64_t>(i) / ffn) % 2 == 1 && std::isfinite(v)) m = std::max(m, v);
  }
  return m;
}

golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  // Elementwise, no reduction: fast_exp (~2^-18 relative) and three fp32 roundings, so no
  // NMSE escape. Gates below -87.3 make e^gate an fp32 subnormal, which the kernel flushes:
  // silu is then -0 where the true value is at most 87.3·e^-87.3 = 1.03e-36 in magnitude,
  // an absolute error of that times |up|.
  golden::Tolerance t;
  const double flush = 1.1e-36 * max_abs_up(c);
  if (dtype == DType::float16) {
    t.rtol = 1e-3;  // one fp16 ULP is at most 2^-10 = 9.8e-4 relative
    t.atol = std::max(6e-8, flush);  // one ULP of fp16's subnormals, 2^-24
    t.reason = "fp32 arithmetic with fast_exp, then one rounding to fp16: at most 1 fp16 ULP";
  } else {
    t.rtol = 1e-5;
    t.atol = std::max(1e-38, flush);
    t.reason = "fast_exp (2^-18 relative) and three fp32 roundings; gates < -87.3 flush silu to -0 (<= 1.03e-36 |up|)";
  }
  return t;
}

}  // namespace

GateHooks silu_mul_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::silu_mul_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "Elementwise: y = silu(gate) * up with plain IEEE multiplication. silu(NaN) = NaN, silu(+Inf) = +Inf, "
      "silu(-Inf) = -0 (the limit, not -Inf/Inf = NaN), and gates far below zero give -0, never NaN "
      "(silu(-100) = -0: e^-100 is below fp32's normals and is flushed). So NaN in either half, "
      "Inf * 0 and -0 * Inf give NaN; products beyond the output's range give +-Inf.";
  return gate;
}

}  // namespace npukit
