// The registry entry of RMSNorm.
#include "golden/rms_norm.h"
#include "golden/rms_norm_cases.h"
#include "kernels/rms_norm_f16.h"
#include "kernels/rms_norm_f16_gpu.h"
#include "kernels/rms_norm_f32.h"
#include "kernels/rms_norm_f32_gpu.h"
#include "runtime/kernel_call.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

template <bool Gpu>
void rms_norm_run(const Call& call) {
  const In x{call.tensor("x")}, weight{call.tensor("weight")};
  const float eps = static_cast<float>(call.params.real("eps"));
  if (x.t.dtype == DType::float16) {
    call_kernel(NPUKIT_KERNEL(Gpu, rms_norm_f16), call, x, weight, eps, Out{call.tensor("y")});
  } else {
    call_kernel(NPUKIT_KERNEL(Gpu, rms_norm_f32), call, x, weight, eps, Out{call.tensor("y")});
  }
}

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

OpSpec make_spec() {
  OpSpec op;
  op.name = "rms_norm";
  op.summary = "y = x / sqrt(mean(x^2, last axis) + eps) * weight; fp64 sum of squares, fp32 arithmetic";
  const std::vector<DType> floats = {DType::float32, DType::float16};
  op.tensors = {
      {"x", TensorSpec::Role::input, {"rows", "hidden"}, floats, ""},
      {"weight", TensorSpec::Role::input, {"hidden"}, floats, "x"},
      {"y", TensorSpec::Role::output, {"rows", "hidden"}, floats, "x"},
  };
  op.params = {{"eps", ParamSpec::Kind::real, "1e-5", 0.0, 1.0, {},
                "added to mean(x^2) before the square root; 0 makes an all-zero row NaN"}};
  op.kernels = {{"cpu", rms_norm_run<false>}, {"gpu-opencl", rms_norm_run<true>}, {"gpu-cuda", rms_norm_run<true>}};
  op.cpu_tiers = {"avx512", "avx2", "sse41"};
  op.cuda_tensors = true;
  op.gate.dtypes = floats;
  op.gate.cases = golden::rms_norm_cases;
  op.gate.reference = reference;
  op.gate.tolerance = tolerance;
  op.gate.nan_contract =
      "A NaN or Inf in a row affects only that row: a NaN makes the whole row NaN; an Inf "
      "makes its own element NaN and the rest of the row 0. An all-zero row with eps = 0 is "
      "NaN (0/0). Sums of squares beyond the fp32 range (|x| up to 3.4e38) and fp16 rows "
      "whose sum of squares exceeds 65504 are still correct: the sum of squares is fp64.";
  return op;
}

}  // namespace

const OpSpec& rms_norm_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
