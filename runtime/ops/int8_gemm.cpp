// The registry entry of INT8 GEMM (docs/ops/int8_gemm.md).
#include <algorithm>
#include <cmath>

#include "kernels/int8_epilogue_f16.h"
#include "kernels/int8_epilogue_f16_gpu.h"
#include "kernels/int8_epilogue_f32.h"
#include "kernels/int8_epilogue_f32_gpu.h"
#include "kernels/int8_epilogue_fixed_point.h"
#include "kernels/int8_epilogue_fixed_point_gpu.h"
#include "kernels/int8_epilogue_float.h"
#include "kernels/int8_epilogue_float_gpu.h"
#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/gpu_memory.h"
#include "runtime/halide_call.h"
#include "runtime/kernel_call.h"
#include "runtime/int8_gemm.h"
#include "runtime/ops/int8_gemm_channels.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

const float* floats(const Call& call, const char* name) {
  auto it = find_name(call.tensors, name);
  return it == call.tensors.end() ? nullptr : static_cast<const float*>(it->second.data);
}

void check(const Call& call) {
  const int64_t k = call.dim("K"), n = call.dim("N");
  const int32_t zp = static_cast<int32_t>(call.params.integer("a_zero_point"));
  const int64_t limit = int8_k_limit(zp);
  if (k > limit) {
    fail(Errc::invalid_argument,
         "int8_gemm: K = {} exceeds {}, the largest K whose int32 accumulation cannot overflow with a_zero_point = {}; "
         "split K and add the int32 partial sums in int64",
         k, limit, zp);
  }
  const std::string out = call.params.choice("out");
  const float* w_scale = floats(call, "w_scale");
  if (out != "int32" && w_scale == nullptr) {
    fail(Errc::invalid_argument, "int8_gemm: out={} needs input w_scale (per-channel weight scales, float32 [N])", out);
  }
  if (call.tensors.count("bias") && out != "float32" && out != "float16") {
    fail(Errc::invalid_argument, "int8_gemm: input bias applies to float outputs only (out={})", out);
  }
  // int8 folds one activation scale into each channel's multiplier; a per-row one would
  // need a multiplier per element.
  if (call.tensors.count("a_scales") && out != "float32" && out != "float16") {
    fail(Errc::invalid_argument,
         "int8_gemm: input a_scales (per-row activation scales) applies to float outputs only (out={})", out);
  }
  if (out != "int8") return;
  const double a_scale = call.params.real("a_scale"), out_scale = call.params.real("out_scale");
  const bool fixed = call.params.choice("rounding") == "fixed_point";
  for (int64_t c = 0; c < n; ++c) {
    if (!(std::isfinite(w_scale[c]) && w_scale[c] > 0)) {
      fail(Errc::invalid_argument, "int8_gemm: w_scale[{}] = {}: must be finite and > 0 for out=int8", c,
           param_text(double(w_scale[c])));
    }
    const double real = a_scale * double(w_scale[c]) / out_scale;
    const float m32 = (static_cast<float>(a_scale) * w_scale[c]) / static_cast<float>(out_scale);
    if (!fixed && !std::isfinite(m32)) {
      fail(Errc::invalid_argument,
           "int8_gemm: channel {}: a_scale * w_scale / out_scale overflows fp32 (rounding=float)", c);
    }
    if (fixed && !quantize_multiplier(real)) {
      fail(Errc::invalid_argument,
           "int8_gemm: channel {}: multiplier a_scale * w_scale / out_scale = {} needs a shift outside [-31, 30] "
           "(rounding=fixed_point)",
           c, param_text(real));
    }
  }
}

}  // namespace

Int8ChannelFactors int8_channel_factors(const Call& call, ScratchFrame& frame) {
  const int64_t n = call.dim("N");
  const float a_scale = static_cast<float>(call.params.real("a_scale"));
  const float out_scale = static_cast<float>(call.params.real("out_scale"));
  const float* w_scale = floats(call, "w_scale");
  const float* bias_in = floats(call, "bias");
  const std::string out = call.params.choice("out");
  const auto count = static_cast<size_t>(n);
  const float* a_scales = floats(call, "a_scales");
  Int8ChannelFactors f{frame.take<float>(count), frame.fill(count, 0.0f), frame.fill<int32_t>(count, 0),
                       frame.fill<int32_t>(count, 0),
                       a_scales != nullptr ? a_scales : frame.fill(static_cast<size_t>(call.dim("M")), 1.0f)};
  const bool is_int8 = out == "int8";
  // In fp32 exactly as the contract writes them.
  for (int64_t c = 0; c < n; ++c) {
    f.chan_scale[c] = is_int8 ? (a_scale * w_scale[c]) / out_scale : a_scale * w_scale[c];
    if (bias_in) f.bias[c] = bias_in[c];
    if (is_int8 && call.params.choice("rounding") == "fixed_point") {
      const auto q = quantize_multiplier(call.params.real("a_scale") * double(w_scale[c]) / call.params.real("out_scale"));
      f.multiplier[c] = q->multiplier;
      f.shift[c] = q->shift;
    }
  }
  return f;
}

namespace {

// The epilogue of `out` (not int32) from the int32 `acc`: scale to float or requantize.
// `acc` and the tensors of the call may be in host or device memory (GPU); the channel
// factors are the host arrays int8_channel_factors made.
template <bool Gpu>
void int8_epilogue(const Call& call, const TensorView& acc, const Int8ChannelFactors& f) {
  const int64_t m = call.dim("M"), n = call.dim("N");
  // The per-row scales as the caller passed them (host or device), else ones.
  auto a_scales = find_name(call.tensors, "a_scales");
  const TensorView ones{const_cast<float*>(f.row_scale), DType::float32, {m}, {}};
  const In rs{a_scales != call.tensors.end() ? a_scales->second : ones};
  const In cs{{f.chan_scale, DType::float32, {n}, {}}}, bs{{f.bias, DType::float32, {n}, {}}};
  const In ms{{f.multiplier, DType::int32, {n}, {}}}, ss{{f.shift, DType::int32, {n}, {}}};
  const int32_t out_zp = static_cast<int32_t>(call.params.integer("out_zero_point"));
  const std::string out = call.params.choice("out");
  const In acc_in{acc};
  const Out y_out{call.tensor("y")};
  if (out == "float32") {
    call_kernel(NPUKIT_TABLE(Gpu, int8_epilogue_f32), call, acc_in, cs, rs, bs, ms, ss, out_zp, y_out);
  } else if (out == "float16") {
    call_kernel(NPUKIT_TABLE(Gpu, int8_epilogue_f16), call, acc_in, cs, rs, bs, ms, ss, out_zp, y_out);
  } else if (call.params.choice("rounding") == "fixed_point") {
    call_kernel(NPUKIT_TABLE(Gpu, int8_epilogue_fixed_point), call, acc_in, cs, rs, bs, ms, ss, out_zp, y_out);
  } else {
    call_kernel(NPUKIT_TABLE(Gpu, int8_epilogue_float), call, acc_in, cs, rs, bs, ms, ss, out_zp, y_out);
  }
}

template <bool Gpu>
void int8_gemm_run(const Call& call) {
  const int64_t m = call.dim("M"), n = call.dim("N"), k = call.dim("K");
  const TensorView& a = call.tensor("a");
  // A prepared op packed w once (npukit_op_set_constant); a plain call packs it here.
  layouts::PackedInt8Weights packed_here;
  const layouts::PackedInt8Weights* packed = call.packed_constant<layouts::PackedInt8Weights>("w");
  if (packed == nullptr) {
    packed_here = layouts::pack_int8_weights(static_cast<const int8_t*>(call.tensor("w").data), n, k);
    packed = &packed_here;
  }
  const int32_t zp = static_cast<int32_t>(call.params.integer("a_zero_point"));
  const bool int32_out = call.params.choice("out") == "int32";
  const TensorView& y = call.tensor("y");
  ScratchFrame frame(call);
  // On a GPU everything stays on the device between the kernels: the int32 accumulator in
  // device scratch, the weights as the prepared op's device copies (uploaded once).
  RunScratch scratch(call, frame);
  const TensorView acc = int32_out ? y : scratch.take(DType::int32, {m, n});
  if constexpr (Gpu) {
    int8_gemm_accumulate_gpu(a, int8_gpu_weights(call, "w", *packed), zp, acc, call.target);
  } else {
    int8_gemm_accumulate(a, *packed, zp, acc, call.tier, call.target, &frame);
  }
  if (!int32_out) int8_epilogue<Gpu>(call, acc, int8_channel_factors(call, frame));
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "int8_gemm";
  op.summary = "y = f(sum_k (a - a_zero_point) * w[n, k]): int32 exact, scaled to float, or requantized to int8";
  // Read on the host: the checks and the channel factors read w_scale and bias, and a plain
  // call packs w there (a prepared op packs it once and keeps it on the device).
  TensorSpec w{"w", TensorSpec::Role::input, {"N", "K"}, {DType::int8}, ""};
  w.host_data = true;
  TensorSpec w_scale{"w_scale", TensorSpec::Role::input, {"N"}, {DType::float32}, ""};
  w_scale.optional = true;
  w_scale.host_data = true;
  TensorSpec bias{"bias", TensorSpec::Role::input, {"N"}, {DType::float32}, ""};
  bias.optional = true;
  bias.host_data = true;
  TensorSpec a_scales{"a_scales", TensorSpec::Role::input, {"M"}, {DType::float32}, ""};
  a_scales.optional = true;
  TensorSpec y{"y", TensorSpec::Role::output, {"M", "N"}, {DType::int32, DType::float32, DType::float16, DType::int8}, ""};
  y.dtype_param = "out";
  TensorSpec a{"a", TensorSpec::Role::input, {"M", "K"}, {DType::int8}, ""};
  a.scale_param = "a_scale";
  a.zero_point_param = "a_zero_point";
  op.tensors = {a,
                w,
                w_scale,
                bias,
                y,
                a_scales};  // last: the positions of the tensors before it stay those of ABI 3
  op.params = {
      {"a_zero_point", ParamSpec::Kind::integer, "0", -128, 127, {}, "activation zero point"},
      {"a_scale", ParamSpec::Kind::real, "1", 1e-30, 1e30, {}, "activation scale (> 0)"},
      {"out", ParamSpec::Kind::choice, "int32", 0, 0, {"int32", "float32", "float16", "int8"}, "output dtype"},
      {"out_scale", ParamSpec::Kind::real, "1", 1e-30, 1e30, {}, "output scale for out=int8 (> 0)"},
      {"out_zero_point", ParamSpec::Kind::integer, "0", -128, 127, {}, "output zero point for out=int8"},
      {"rounding", ParamSpec::Kind::choice, "fixed_point", 0, 0, {"fixed_point", "float"},
       "out=int8: gemmlowp fixed-point multiplier, or ONNX QLinearMatMul fp32 scale with ties to even"},
  };
  op.check = check;
  op.constants["w"] = [](const TensorView& t) {
    auto w = std::make_shared<const layouts::PackedInt8Weights>(
        layouts::pack_int8_weights(static_cast<const int8_t*>(t.data), t.shape.at(0), t.shape.at(1)));
    return PackedConstant{w, w->bytes()};
  };
  op.kernels = {{"cpu", int8_gemm_run<false>}, {"gpu-opencl", int8_gemm_run<true>}, {"gpu-cuda", int8_gemm_run<true>}};
  op.cpu_tiers = {"avx512_amx", "avx512_vnni", "avx2", "sse41"};
  op.cuda_tensors = true;  // a, y and a_scales without copies; the host_data tensors above copied back
  return op;
}

}  // namespace

const OpSpec& int8_gemm_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
