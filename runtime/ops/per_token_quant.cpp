// The registry entry of per-token int8 quantization (the activation side of int8-weight
// linear layers, docs/ops/attention.md "Int8 weights"): the quantize_rows kernels that
// qkv_attention's int8 path runs, exposed as an op of their own so that every target's
// kernel is gated against golden::quantize_token.
#include <cstdint>
#include <vector>

#include "golden/per_token_quant.h"
#include "golden/per_token_quant_cases.h"
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
    call_kernel(NPUKIT_KERNEL(Gpu, quantize_rows_f16), call, a, q, scale);
  } else {
    call_kernel(NPUKIT_KERNEL(Gpu, quantize_rows_f32), call, a, q, scale);
  }
}

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
  op.gate.dtypes = {DType::float32, DType::float16};
  op.gate.cases = golden::per_token_quant_cases;
  op.gate.reference = reference;
  op.gate.tolerance = tolerance;
  op.gate.nan_contract =
      "A NaN or +-Inf in a row makes that row's scale NaN and its q all 0; other rows are "
      "unaffected. An all-zero row (or one whose max/127 underflows to 0) has scale 0 and q 0.";
  return op;
}

}  // namespace

const OpSpec& per_token_quant_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
