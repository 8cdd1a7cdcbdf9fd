// The gate's hooks for add_rms_norm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/add_rms_norm.cpp is the rest of the op; libnpukit.so links none of this).
#include "golden/add_rms_norm.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  std::vector<double> residual = c.inputs.at("residual").values, y(x.values.size());
  golden::add_rms_norm(x.values.data(), residual.data(), c.inputs.at("weight").values.data(), c.dims.at("rows"),
                       c.dims.at("hidden"), std::stod(c.params.at("eps")), x.dtype, y.data());
  return {{"y", std::move(y)}, {"residual", std::move(residual)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string& output, DType dtype) {
  golden::Tolerance t;
  if (output == "residual") {
    // One fp32 addition of two values of the storage type, rounded once to it: the
    // correctly rounded sum (fp32 carries more than 2·11 + 2 bits), bit for bit.
    t.exact = true;
    t.reason = "x + residual rounded once to the storage type: the correctly rounded sum, bit-exact";
    return t;
  }
  // y is rms_norm of the rounded sum, which the golden rounds the same way: rms_norm's
  // tolerance (tools/gate/hooks/rms_norm.cpp).
  if (dtype == DType::float16) {
    t.rtol = 1e-3;
    t.atol = 1e-5;
    t.reason = "rms_norm of the bit-exact sum: fp32 arithmetic, one rounding to fp16, at most 1 fp16 ULP";
  } else {
    t.rtol = 1e-5;
    t.atol = 1e-6;
    t.reason = "rms_norm of the bit-exact sum: fp64 sum of squares, three fp32 roundings, a few fp32 ULPs";
  }
  return t;
}

}  // namespace

GateHooks add_rms_norm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::add_rms_norm_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "residual becomes x + residual in its dtype (IEEE: NaN stays NaN, +Inf + -Inf is NaN, a sum beyond the "
      "dtype's range is +-Inf); y is rms_norm of that new residual, with rms_norm's contract per row: a NaN "
      "makes the row NaN, an Inf makes its element NaN and the rest of the row 0, an all-zero row with "
      "eps = 0 is NaN. The sum of squares is fp64, so rows beyond fp32's (or fp16's) range are still right.";
  return gate;
}

}  // namespace npukit
