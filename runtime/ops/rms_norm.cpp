// The registry entry of RMSNorm.
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
    call_kernel(NPUKIT_TABLE(Gpu, rms_norm_f16), call, x, weight, eps, Out{call.tensor("y")});
  } else {
    call_kernel(NPUKIT_TABLE(Gpu, rms_norm_f32), call, x, weight, eps, Out{call.tensor("y")});
  }
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "rms_norm";
  op.summary = "y = x / sqrt(mean(x^2, last axis) + eps) * weight; sum of squares accumulated in fp64, fp32 arithmetic";
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
  return op;
}

}  // namespace

const OpSpec& rms_norm_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
