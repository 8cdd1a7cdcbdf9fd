// SwiGLU's activation as a pure Halide algorithm: y = silu(gate) * up, silu(g) = g / (1 + e^-g).
// gate and up are the two halves of one tensor, as a fused gate‖up projection writes them.
// No scheduling here; schedules/<target>/silu_mul.cpp does that.
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct SiluMul {
  Halide::Var f{"f"}, t{"t"};   // f indexes the FFN width (innermost), t the tokens
  Halide::Func out{"silu_mul"};  // y(f, t) in the output type
};

// silu(g) of fp32 `g`, vectorizable: e = e^-|g| is in [0, 1], so nothing overflows, and
// g < -87.3 (e below fp32's smallest normal) gives -0. silu(-inf) = -0, silu(+inf) = +inf,
// silu(NaN) = NaN. Call inside strict_float: fast-math would fold the -inf test away.
Halide::Expr silu(Halide::Expr g);

// `gate_up(f, half, t)`: half 0 is the gate, half 1 is up; any float type (or uint16 fp16
// bits); arithmetic is fp32. `target` picks the fp16 conversions (ops/float_convert.h).
SiluMul define_silu_mul(Halide::Func gate_up, Halide::Type out_type, const Halide::Target& target);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/silu_mul.cpp, schedules/gpu/silu_mul.cpp);
// the Generator (below) applies the one of its target.
namespace npukit::schedules::cpu {
void schedule_silu_mul(ops::SiluMul& op, const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_silu_mul(ops::SiluMul& op, const Halide::Target& target);
}  // namespace npukit::schedules::gpu

// ---- Section NPUKIT_ALGORITHM_silu_mul: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_silu_mul

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

Expr silu(Expr g) {
  // fast_exp is good to ~2^-18 relative (its last 5 mantissa bits); silu inherits at most
  // that. The clamp keeps its float-to-int conversion in range; it flushes e^-100 to 0.
  Expr e = fast_exp(clamp(-abs(g), -100.0f, 0.0f));
  Expr sigmoid = select(g >= 0.0f, 1.0f / (1.0f + e), e / (1.0f + e));
  // -inf * sigmoid(-inf) would be -inf * 0 = NaN; the limit is -0, made from its bits
  // (Halide's simplifier folds a -0.0f constant into +0).
  Expr minus_zero = reinterpret<float>(cast<uint32_t>(1) << 31);
  return select(is_inf(g) && g < 0.0f, minus_zero, g * sigmoid);
}

SiluMul define_silu_mul(Func gate_up, Type out_type, const Target& target) {
  SiluMul op;
  Var f = op.f, t = op.t;
  Expr g = widen_to_f32(gate_up(f, 0, t), target), up = widen_to_f32(gate_up(f, 1, t), target);
  op.out(f, t) = narrow_from_f32(strict_float(silu(g) * up), out_type, target);
  return op;
}

}  // namespace npukit::ops

// The SiLU-and-multiply Generator: one source for the ahead-of-time kernels and for JIT
// users. Storage types come from the `gate_up.type` and `y.type` generator params.
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class SiluMulGenerator : public Halide::Generator<SiluMulGenerator> {
 public:
  Input<Halide::Buffer<void, 3>> gate_up{"gate_up"};  // (ffn, 2, tokens): gate, then up, per token
  Output<Halide::Buffer<void, 2>> y{"y"};             // (ffn, tokens)

  void generate() {
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    ops::set_mins_to_zero(gate_up);
    ops::SiluMul op = ops::define_silu_mul(gate_up, y.type(), get_target());
    y = op.out;
    ops::set_mins_to_zero(y);
    if (schedules::gpu::is_gpu(get_target())) {
      schedules::gpu::schedule_silu_mul(op, get_target());
    } else {
      schedules::cpu::schedule_silu_mul(op, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::SiluMulGenerator, npukit_silu_mul)

#endif  // NPUKIT_ALGORITHM_silu_mul
