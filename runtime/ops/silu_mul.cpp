// The registry entry of silu_mul (SwiGLU's activation).
#include "kernels/silu_mul_f16.h"
#include "kernels/silu_mul_f16_gpu.h"
#include "kernels/silu_mul_f32.h"
#include "kernels/silu_mul_f32_gpu.h"
#include "runtime/error.h"
#include "runtime/kernel_call.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

template <bool Gpu>
void silu_mul_run(const Call& call) {
  const In gate_up{call.tensor("gate_up")};
  const Out y{call.tensor("y")};
  if (gate_up.t.dtype == DType::float16) {
    call_kernel(NPUKIT_TABLE(Gpu, silu_mul_f16), call, gate_up, y);
  } else {
    call_kernel(NPUKIT_TABLE(Gpu, silu_mul_f32), call, gate_up, y);
  }
}

void check(const Call& call) {
  // [tokens, 2, ffn] is the row-major [tokens, 2 * ffn] of a fused gate‖up projection,
  // viewed with its halves apart: no split, no copy.
  if (const int64_t halves = call.dim("halves"); halves != 2) {
    fail(Errc::invalid_argument,
         "silu_mul: gate_up has halves = {}; it must be 2 ([tokens, 2, ffn]: the gate, then up)", halves);
  }
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "silu_mul";
  op.summary = "y = silu(gate) * up with gate = gate_up[:, 0], up = gate_up[:, 1], silu(g) = g / (1 + exp(-g)); "
               "fp32 arithmetic";
  const std::vector<DType> floats = {DType::float32, DType::float16};
  op.tensors = {
      {"gate_up", TensorSpec::Role::input, {"tokens", "halves", "ffn"}, floats, ""},
      {"y", TensorSpec::Role::output, {"tokens", "ffn"}, floats, "gate_up"},
  };
  op.check = check;
  op.kernels = {{"cpu", silu_mul_run<false>}, {"gpu-opencl", silu_mul_run<true>}, {"gpu-cuda", silu_mul_run<true>}};
  op.cpu_tiers = {"avx512", "avx2", "sse41"};
  op.cuda_tensors = true;
  return op;
}

}  // namespace

const OpSpec& silu_mul_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
