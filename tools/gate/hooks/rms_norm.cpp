// The gate's hooks for rms_norm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/rms_norm.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "golden/rms_norm.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  const golden::Array& w = c.inputs.at("weight");
  const int64_t rows = c.dims.at("rows"), hidden = c.dims.at("hidden");
  std::vector<double> y(x.values.size());
  golden::rms_norm(x.values.data(), w.values.data(), rows, hidden, std::stod(c.params.at("eps")), y.data());
  return {{"y", std::move(y)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string&, DType dtype) {
  // Every element is x · (1/rms) · w: the sum of squares is fp64, so each output carries a
  // few fp32 roundings and nothing that grows with hidden. That is far tighter than the
  // default for reductions, and no NMSE escape: one wrong element among millions fails.
  golden::Tolerance t;
  if (dtype == DType::float16) {
    t.rtol = 1e-3;  // one fp16 ULP is at most 2^-10 = 9.8e-4 relative
    t.atol = 1e-5;
    t.reason = "fp32 arithmetic, then one rounding to fp16: at most 1 fp16 ULP";
  } else {
    t.rtol = 1e-5;
    t.atol = 1e-6;
    t.reason = "fp64 sum of squares, then three fp32 roundings: a few fp32 ULPs";
  }
  return t;
}

}  // namespace

GateHooks rms_norm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::rms_norm_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN or Inf in a row affects only that row: a NaN makes the whole row NaN; an Inf "
      "makes its own element NaN and the rest of the row 0. An all-zero row with eps = 0 is "
      "NaN (0/0). Sums of squares beyond the fp32 range (|x| up to 3.4e38) and fp16 rows "
      "whose sum of squares exceeds 65504 are still correct: the sum of squares is fp64.";
  return gate;
}

}  // namespace npukit
