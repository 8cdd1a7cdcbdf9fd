// The gate's hooks for {{op}}: its golden cases and reference, tolerances and NaN/Inf
// contract. They make the plug-in's gate companion; the op's own library links none of it.
#include "golden/{{op}}.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  std::vector<double> y(x.values.size());
  golden::{{op}}(x.values.data(), c.dims.at("rows"), c.dims.at("cols"), std::stod(c.params.at("alpha")), y.data());
  return {{"y", std::move(y)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string&, DType dtype) {
  // Declare the op's own bound with its reason (docs/gating.md, Tolerances); the default
  // is a start, not an argument.
  golden::Tolerance t = golden::default_tolerance(dtype, /*reduction=*/false);
  t.reason = "the default for an elementwise op: replace it with the op's error bound";
  return t;
}

}  // namespace

GateHooks {{op}}_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::{{op}}_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract = "Say what a NaN or an Inf in each input does to which outputs.";
  return gate;
}

}  // namespace npukit
