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
// the Generator (ops/silu_mul_generator.cpp) applies the one of its target.
namespace npukit::schedules::cpu {
void schedule_silu_mul(ops::SiluMul& op, const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_silu_mul(ops::SiluMul& op, const Halide::Target& target);
}  // namespace npukit::schedules::gpu
