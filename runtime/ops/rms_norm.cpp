// The registry entry of RMSNorm.
#include "golden/rms_norm.h"
#include "golden/rms_norm_cases.h"
#include "kernels/rms_norm_f16.h"
#include "kernels/rms_norm_f16_gpu.h"
#include "kernels/rms_norm_f32.h"
#include "kernels/rms_norm_f32_gpu.h"
#include "runtime/gpu_call.h"
#include "runtime/halide_call.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

template <class Table>
void run_cpu(const Table& table, const char* kernel, const Call& call) {
  HalideBuffer x(call.tensor("x")), weight(call.tensor("weight")), y(call.tensor("y"));
  call_cpu_kernel(table, kernel, call.tier, x.get(), weight.get(), static_cast<float>(call.params.real("eps")),
                  y.get());
}

void rms_norm_cpu(const Call& call) {
  if (call.tensor("x").dtype == DType::float16) {
    run_cpu(kernels::rms_norm_f16, "rms_norm_f16", call);
  } else {
    run_cpu(kernels::rms_norm_f32, "rms_norm_f32", call);
  }
}

template <class Table>
void run_gpu(const Table& table, const char* kernel, const Call& call) {
  GpuCall g(table, kernel, call.target);
  g.run(g.in(call.tensor("x")), g.in(call.tensor("weight")), static_cast<float>(call.params.real("eps")),
        g.out(call.tensor("y")));
}

// Both GPU families: the call's target picks the variant.
void rms_norm_gpu(const Call& call) {
  if (call.tensor("x").dtype == DType::float16) {
    run_gpu(kernels::rms_norm_f16_gpu, "rms_norm_f16", call);
  } else {
    run_gpu(kernels::rms_norm_f32_gpu, "rms_norm_f32", call);
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
  op.kernels = {{"cpu", rms_norm_cpu}, {"gpu-opencl", rms_norm_gpu}, {"gpu-cuda", rms_norm_gpu}};
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
