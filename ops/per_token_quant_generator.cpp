// The Generators of per-token int8 quantization (`npukit_quantize_rows`: activation rows to
// int8 and one fp32 scale per row) and of the per-row dequantization of an int32
// accumulator (`npukit_dequantize_rows`), for linear layers with int8 weights.
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/per_token_quant.h"
#include "schedules/cpu/per_token_quant.h"
#include "schedules/gpu/gpu_target.h"
#include "schedules/gpu/per_token_quant.h"

namespace npukit {
namespace {

class QuantizeRowsGenerator : public Halide::Generator<QuantizeRowsGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> a{"a"};              // (K, T), float32 or float16
  Output<Halide::Buffer<int8_t, 2>> q{"q"};           // (K, T)
  Output<Halide::Buffer<float, 1>> scale{"scale"};    // (T)

  void generate() {
    using namespace Halide;
    const Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(a);
    Var k, t;
    Func af("af");
    af(k, t) = ops::widen_to_f32(a(k, t), target);
    const bool gpu = schedules::gpu::is_gpu(target);
    const int lanes = gpu ? schedules::gpu::quant_lanes(target) : schedules::cpu::quant_lanes(target);
    ops::PerTokenQuant p = ops::define_per_token_quant(af, a.dim(0).extent(), lanes);
    q = p.q;
    scale = p.scale;
    ops::set_mins_to_zero(q, scale);
    if (gpu) {
      schedules::gpu::schedule_per_token_quant(p, target);
    } else {
      schedules::cpu::schedule_per_token_quant(p, target);
    }
  }
};

class DequantizeRowsGenerator : public Halide::Generator<DequantizeRowsGenerator> {
 public:
  Input<Halide::Buffer<int32_t, 2>> acc{"acc"};            // (N, T)
  Input<Halide::Buffer<float, 1>> row_scale{"row_scale"};  // (T)
  Input<Halide::Buffer<float, 1>> w_scale{"w_scale"};      // (N)
  Output<Halide::Buffer<void, 2>> y{"y"};                  // (N, T), float32 or float16

  void generate() {
    using namespace Halide;
    const Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(acc);
    Var n("n"), t("t");
    Func out("dequantized");
    out(n, t) = ops::narrow_from_f32(ops::dequantize(acc(n, t), row_scale(t), w_scale(n)), y.type(), target);
    y = out;
    ops::set_mins_to_zero(y);
    if (schedules::gpu::is_gpu(target)) {
      schedules::gpu::schedule_dequantize_rows(out, target);
    } else {
      schedules::cpu::schedule_dequantize_rows(out, target);
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::QuantizeRowsGenerator, npukit_quantize_rows)
HALIDE_REGISTER_GENERATOR(npukit::DequantizeRowsGenerator, npukit_dequantize_rows)
