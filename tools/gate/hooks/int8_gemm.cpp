// The gate's hooks for int8_gemm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/int8_gemm.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "golden/int8_gemm.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  golden::Tolerance t;
  if (dtype == DType::int32 || dtype == DType::int8) {
    t.exact = true;
    t.reason = dtype == DType::int32 ? "exact int32 accumulation" : "bit-exact requantization against the declared rounding mode";
    return t;
  }
  // acc → fp32, times fp32(a_scales[m] · fp32(a_scale · w_scale)), plus bias: a few fp32 roundings of the
  // product; where bias nearly cancels it, only an absolute bound scaled by |bias| holds.
  double max_bias = 0;
  if (auto it = c.inputs.find("bias"); it != c.inputs.end()) {
    for (double v : it->second.values) {
      if (std::isfinite(v)) max_bias = std::max(max_bias, std::fabs(v));
    }
  }
  if (dtype == DType::float16) {
    t.rtol = 1e-3;
    t.atol = 6e-8 + 4 * std::ldexp(max_bias, -23);
    t.reason = "fp32 scaling, then one rounding to fp16 (1 fp16 ULP; 2^-24 absolute for subnormals)";
  } else {
    t.rtol = 1e-6;
    t.atol = 1e-30 + 4 * std::ldexp(max_bias, -23);
    t.reason = "fp32 conversion, scale and bias: about 4 fp32 ULPs";
  }
  // Deliberately sparse outputs (the zeros cases) are not vacuous here.
  t.max_zero_ratio = 1.0;
  return t;
}

}  // namespace

GateHooks int8_gemm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::int32, DType::float32, DType::float16, DType::int8};
  gate.cases = golden::int8_gemm_cases;
  gate.reference = [](const golden::Case& c) {
    return std::map<std::string, std::vector<double>>{{"y", golden::int8_gemm_reference(c)}};
  };
  gate.tolerance = tolerance;
  gate.nan_contract =
      "Integer inputs carry no NaN. For float outputs a NaN w_scale or bias makes its output column NaN, a NaN "
      "a_scales[m] its row, and an Inf scale gives +-Inf (NaN where acc = 0). int8 outputs require finite positive scales.";
  return gate;
}

}  // namespace npukit
