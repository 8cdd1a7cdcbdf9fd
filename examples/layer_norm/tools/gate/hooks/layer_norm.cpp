// The gate's hooks for layer_norm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/layer_norm.cpp is the rest of the op; the op's own library links
// none of this: it is the plug-in's gate companion).
#include "golden/layer_norm.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  const int64_t rows = c.dims.at("rows"), hidden = c.dims.at("hidden");
  // eps is an fp32 number of the op (its kernels take it as one, as PyTorch's fp32 LayerNorm
  // does): where var << eps, 1e-5 and its fp32 neighbour differ in y by far more than an ULP.
  const double eps = static_cast<float>(std::stod(c.params.at("eps")));
  std::vector<double> y(x.values.size());
  golden::layer_norm(x.values.data(), c.inputs.at("weight").values.data(), c.inputs.at("bias").values.data(), rows,
                     hidden, eps, y.data());
  return {{"y", std::move(y)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string&, DType dtype) {
  // The kernel computes in fp64 as the golden does (only the order of the sums differs, by a
  // few fp64 ULPs) and rounds once: its result is the golden's rounded value, or one ULP off
  // where the two straddle a rounding boundary. No NMSE escape: one wrong element fails.
  golden::Tolerance t;
  if (dtype == DType::float16) {
    t.rtol = 1e-3;  // one fp16 ULP is at most 2^-10 = 9.8e-4 relative
    t.atol = 1e-5;  // fp16's subnormals
    t.reason = "fp64 arithmetic, then one rounding to fp16 (through fp32): at most 1 fp16 ULP";
  } else {
    t.rtol = 2.4e-7;  // two fp32 ULPs
    t.atol = 1e-12;   // where x̂·w cancels the bias, the fp64 error of the terms
    t.reason = "fp64 arithmetic, then one rounding to fp32: at most 1 fp32 ULP (2 allowed)";
  }
  return t;
}

}  // namespace

GateHooks layer_norm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::layer_norm_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN or an Inf anywhere in a row makes the whole row NaN (the mean or the variance is NaN or Inf). A "
      "constant row with eps = 0 is NaN (0/0); with eps > 0 it is the bias. NaN/Inf in weight or bias reach "
      "their column only; results beyond the dtype's range are +-Inf. Rows with |x| up to 3.4e38, or a large "
      "mean and a small spread, are still correct: the statistics are fp64, in two passes.";
  return gate;
}

}  // namespace npukit
