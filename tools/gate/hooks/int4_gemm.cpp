// The gate's hooks for int4_gemm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/int4_gemm.cpp is the rest of the op; libnpukit.so links none of this).
// The gate's dtypes are the activations' (int8, float32, float16); each case's output dtype
// is its `out` parameter.
#include <algorithm>
#include <cmath>

#include "golden/int4_gemm.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

// The kernels sum the groups (and, for float a, each group's products) in fp32 in an order
// of their own, so an element's error is bounded by its number of fp32 roundings times 2^-24
// times the sum of its terms' magnitudes, not by its own magnitude (the terms can cancel).
// One bound per case: the largest over its elements.
golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  const bool int8 = c.inputs.at("a").dtype == DType::int8;
  const int64_t group = std::stoll(c.params.at("group"));
  const double roundings = static_cast<double>(golden::int4_gemm_roundings(c.dims.at("K"), group, int8));
  double largest = 0;
  for (double v : golden::int4_gemm_magnitude(c)) {
    if (std::isfinite(v)) largest = std::max(largest, v);
  }
  golden::Tolerance t;
  t.atol = roundings * std::ldexp(largest, -24);
  if (dtype == DType::float16) {
    t.rtol = 1e-3;
    t.atol += 6e-8;
    t.reason = "fp32 sums of the groups (and products) in the kernel's order: roundings x 2^-24 x the sum of |terms|; "
               "then one rounding to fp16 (1 fp16 ULP; 2^-24 absolute for subnormals)";
  } else {
    t.rtol = 4 * std::ldexp(1.0, -24);
    t.atol += 1e-40;
    t.reason = "fp32 sums of the groups (and products) in the kernel's order: roundings x 2^-24 x the sum of |terms|";
  }
  return t;
}

}  // namespace

GateHooks int4_gemm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::int8, DType::float32, DType::float16};
  gate.cases = golden::int4_gemm_cases;
  gate.reference = [](const golden::Case& c) {
    return std::map<std::string, std::vector<double>>{{"y", golden::int4_gemm_reference(c)}};
  };
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN scale makes its output column NaN; an infinite one +-Inf by the sign of its group's sum, NaN where that "
      "sum is 0. int8 a: a NaN a_scales[m] makes row m NaN, an infinite one +-Inf (NaN where the row's sum is 0). "
      "float a: a NaN a[m, k] makes row m NaN; an infinite one +-Inf, NaN where it meets q = zero point.";
  return gate;
}

}  // namespace npukit
