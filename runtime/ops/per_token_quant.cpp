// The registry entry of per-token int8 quantization (the activation side of int8-weight
// linear layers, docs/ops/attention.md "Int8 weights"): the quantize_rows kernels that
// qkv_attention's int8 path runs, exposed as an op of their own so that every target's
// kernel is gated against golden::quantize_token.
#include <cstdint>
#include <vector>

#include "kernels/quantize_rows_f16.h"
#include "kernels/quantize_rows_f16_gpu.h"
#include "kernels/quantize_rows_f32.h"
#include "kernels/quantize_rows_f32_gpu.h"
#include "runtime/kernel_call.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

template <bool Gpu>
void per_token_quant_run(const Call& call) {
  const In a{call.tensor("a")};
  const Out q{call.tensor("q")}, scale{call.tensor("scale")};
  if (call.tensor("a").dtype == DType::float16) {
    call_kernel(NPUKIT_TABLE(Gpu, quantize_rows_f16), call, a, q, scale);
  } else {
    call_kernel(NPUKIT_TABLE(Gpu, quantize_rows_f32), call, a, q, scale);
  }
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "per_token_quant";
  op.summary = "q[T, K] int8 and scale[T]: s = max|a| / 127 per row, q = clamp(round(a / s), -127, 127)";
  op.tensors = {
      {"a", TensorSpec::Role::input, {"T", "K"}, {DType::float32, DType::float16}, ""},
      {"q", TensorSpec::Role::output, {"T", "K"}, {DType::int8}, ""},
      {"scale", TensorSpec::Role::output, {"T"}, {DType::float32}, ""},
  };
    op.kernels = {{"cpu", per_token_quant_run<false>},
                {"gpu-opencl", per_token_quant_run<true>},
                {"gpu-cuda", per_token_quant_run<true>}};
  op.cpu_tiers = {"avx512", "avx2", "sse41"};
  op.cuda_tensors = true;  // no check, and its kernel reads nothing on the host
  return op;
}

}  // namespace

const OpSpec& per_token_quant_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
