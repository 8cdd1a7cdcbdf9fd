// The gate's hooks for per_token_quant: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/per_token_quant.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "golden/per_token_quant.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& a = c.inputs.at("a");
  const int64_t T = c.dims.at("T"), K = c.dims.at("K");
  std::vector<float> row(static_cast<size_t>(K));
  std::vector<int8_t> qrow(static_cast<size_t>(K));
  std::vector<double> q(static_cast<size_t>(T * K)), scale(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    // Exact: the case's values are representable in fp32 (or fp16, a subset).
    for (int64_t k = 0; k < K; ++k) row[static_cast<size_t>(k)] = static_cast<float>(a.values[static_cast<size_t>(t * K + k)]);
    scale[static_cast<size_t>(t)] = golden::quantize_token(row.data(), K, qrow.data());
    for (int64_t k = 0; k < K; ++k) q[static_cast<size_t>(t * K + k)] = qrow[static_cast<size_t>(k)];
  }
  return {{"q", std::move(q)}, {"scale", std::move(scale)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string& output, DType) {
  // The contract is fp32 arithmetic with IEEE division and ties-to-even rounding, which the
  // golden reproduces exactly: any difference is a bug, in q or in the scale.
  golden::Tolerance t;
  t.exact = true;
  t.reason = output == "q" ? "bit-exact: clamp(nearbyint(a / s), -127, 127) with one fp32 division"
                           : "bit-exact: s = max|a| / 127 in fp32 (NaN for a non-finite row)";
  return t;
}

}  // namespace

GateHooks per_token_quant_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::per_token_quant_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN or +-Inf in a row makes that row's scale NaN and its q all 0; other rows are "
      "unaffected. An all-zero row (or one whose max/127 underflows to 0) has scale 0 and q 0.";
  return gate;
}

}  // namespace npukit
