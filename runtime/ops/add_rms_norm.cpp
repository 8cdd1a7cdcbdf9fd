// The registry entry of add_rms_norm (vLLM's fused_add_rms_norm).
#include "kernels/add_rms_norm_f16.h"
#include "kernels/add_rms_norm_f16_gpu.h"
#include "kernels/add_rms_norm_f32.h"
#include "kernels/add_rms_norm_f32_gpu.h"
#include "runtime/gpu_memory.h"
#include "runtime/kernel_call.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

template <bool Gpu>
void add_rms_norm_run(const Call& call) {
  const TensorView& residual = call.tensor("residual");
  // The kernel reads `residual` and writes `residual_out`: the same host memory on the CPU
  // (its schedule writes each row after reading it). On a GPU its y and residual_out are
  // kernels of their own, in no order the schedule fixes, so they read a device copy of the
  // residual (an upload of a host tensor, a device-to-device copy of a CUDA one) and write
  // the caller's.
  ScratchFrame frame(call);
  RunScratch scratch(call, frame);
  const In x{call.tensor("x")}, res_in{scratch.copy_of(residual)}, weight{call.tensor("weight")};
  const Out res_out{residual}, y{call.tensor("y")};
  const float eps = static_cast<float>(call.params.real("eps"));
  if (residual.dtype == DType::float16) {
    call_kernel(NPUKIT_TABLE(Gpu, add_rms_norm_f16), call, x, res_in, weight, eps, y, res_out);
  } else {
    call_kernel(NPUKIT_TABLE(Gpu, add_rms_norm_f32), call, x, res_in, weight, eps, y, res_out);
  }
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "add_rms_norm";
  op.summary = "residual = x + residual (in place, rounded to its dtype); y = rms_norm(residual) * weight; "
               "sum of squares accumulated in fp64, fp32 arithmetic";
  const std::vector<DType> floats = {DType::float32, DType::float16};
  op.tensors = {
      {"x", TensorSpec::Role::input, {"rows", "hidden"}, floats, ""},
      {"residual", TensorSpec::Role::inout, {"rows", "hidden"}, floats, "x"},
      {"weight", TensorSpec::Role::input, {"hidden"}, floats, "x"},
      {"y", TensorSpec::Role::output, {"rows", "hidden"}, floats, "x"},
  };
  op.params = {{"eps", ParamSpec::Kind::real, "1e-5", 0.0, 1.0, {},
                "added to mean(residual^2) before the square root; 0 makes an all-zero row NaN"}};
  op.kernels = {{"cpu", add_rms_norm_run<false>},
                {"gpu-opencl", add_rms_norm_run<true>},
                {"gpu-cuda", add_rms_norm_run<true>}};
  op.cpu_tiers = {"avx512", "avx2", "sse41"};
  op.cuda_tensors = true;
  return op;
}

}  // namespace

const OpSpec& add_rms_norm_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
