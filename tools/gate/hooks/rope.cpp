// The gate's hooks for rope: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/rope.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "golden/rope.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  const golden::Array& p = c.inputs.at("positions");
  const int64_t tokens = c.dims.at("tokens"), heads = c.dims.at("heads"), head_dim = c.dims.at("head_dim");
  const int64_t rd_param = std::stoll(c.params.at("rotary_dim"));
  const auto style = golden::rope_style_from_name(c.params.at("style"));
  std::vector<int64_t> positions(p.values.begin(), p.values.end());
  std::vector<double> y(x.values.size());
  golden::rope(x.values.data(), positions.data(), tokens, heads, head_dim, rd_param == 0 ? head_dim : rd_param,
               std::stod(c.params.at("theta")), *style, y.data());
  return {{"y", std::move(y)}};
}

golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  // a·cos − b·sin with cos, sin and the products rounded to fp32 is off by a few fp32 ULPs
  // of max(|a|, |b|), not of the result: where the two terms nearly cancel, the result is
  // small and only an absolute bound scaled by the inputs' magnitude is meaningful.
  double max_abs = 0;
  for (double v : c.inputs.at("x").values) {
    if (std::isfinite(v)) max_abs = std::max(max_abs, std::fabs(v));
  }
  const double fp32_ulps = 4 * std::ldexp(max_abs, -23);
  golden::Tolerance t;
  if (dtype == DType::float16) {
    t.rtol = 1e-3;
    t.atol = std::max(1e-5, fp32_ulps);
    t.reason = "fp32 rotation (4 fp32 ULPs of max|x| absolute), then one rounding to fp16 (1 fp16 ULP)";
  } else {
    t.rtol = 1e-5;
    t.atol = std::max(1e-6, fp32_ulps);
    t.reason = "fp64 angles, fp32 cos/sin and rotation: 4 fp32 ULPs of max|x| absolute, 1e-5 relative";
  }
  return t;
}

}  // namespace

GateHooks rope_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::rope_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN or Inf in x reaches only the two outputs of its own pair (dims past rotary_dim only "
      "themselves): a NaN makes both NaN; an Inf gives Inf * cos and Inf * sin terms, so at "
      "position 0 (sin = 0) Inf * 0 = NaN. fp16 outputs beyond 65504 are Inf, as storage says.";
  return gate;
}

}  // namespace npukit
