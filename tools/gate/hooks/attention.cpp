// The gate's hooks for attention: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/attention.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "golden/attention.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

golden::Tolerance tolerance(const golden::Case&, const std::string&, DType dtype) {
  // Dot products of length Dh and sums over up to S_max positions in fp32: the reduction
  // defaults; outputs are convex combinations of v, so relative error is bounded by them.
  golden::Tolerance t = golden::default_tolerance(dtype, /*reduction=*/true);
  t.max_zero_ratio = 1.0;  // fully masked rows are zeros on purpose
  return t;
}

}  // namespace

GateHooks attention_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::attention_cases;
  gate.reference = [](const golden::Case& c) {
    return std::map<std::string, std::vector<double>>{{"o", golden::attention_reference(c)}};
  };
  gate.tolerance = tolerance;
  gate.nan_contract =
      "Query t attends to cache positions 0 ... positions[t] that the mask leaves live; no other position is "
      "read, so NaN or Inf there never reaches the output. A fully masked row gives 0. A NaN score in a live "
      "position makes that head's output NaN; a NaN in a live v element reaches that element.";
  return gate;
}

}  // namespace npukit
