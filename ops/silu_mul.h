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
// On targets with fma (ops/fma.h) a shorter form of the same (silu_fma below).
Halide::Expr silu(Halide::Expr g, const Halide::Target& target);

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

#include <limits>

#include "ops/float_convert.h"
#include "ops/fma.h"
#include "ops/round_even.h"

namespace npukit::ops {

using namespace Halide;

// The portable form: Halide's fast_exp and a select per sign.
Expr silu_portable(Expr g) {
  // fast_exp is good to ~2^-18 relative (its last 5 mantissa bits); silu inherits at most
  // that. The clamp keeps its float-to-int conversion in range; it flushes e^-100 to 0.
  Expr e = fast_exp(clamp(-abs(g), -100.0f, 0.0f));
  Expr sigmoid = select(g >= 0.0f, 1.0f / (1.0f + e), e / (1.0f + e));
  // -inf * sigmoid(-inf) would be -inf * 0 = NaN; the limit is -0, made from its bits
  // (Halide's simplifier folds a -0.0f constant into +0).
  Expr minus_zero = reinterpret<float>(cast<uint32_t>(1) << 31);
  return select(is_inf(g) && g < 0.0f, minus_zero, g * sigmoid);
}

// The same function in about 22 vector instructions per 16 values instead of 40: silu_mul
// is compute-bound on Zen 4 (39 cycles per 16 values in fp32 and fp16 alike). Where the
// instructions went: fast_exp's floor is two 8-lane roundps and an extract and insert on
// 16 lanes in Halide 14, its 2^k a clamp of k at both ends, its polynomial unfused
// multiplies and adds under strict_float, the sign test three selects.
//   e = e^x for x = max(−|g|, −100): k = nearbyint(x·log2 e) by the FPU's own rounding
//   (x·log2 e + kRoundingBias, ops/round_even.h; its encoding's low bits are k),
//   r = x − k·ln 2 in one fma (fp32 ln 2 is 2e-9 off; |k| ≤ 145 puts 3e-7 into r),
//   e^r = 1 + r + r²·P(r), P a cubic fitted for relative error (1e-7 on |r| ≤ ln2/2) and
//   evaluated by Estrin's scheme, 2^k put into the exponent field from those low bits;
//   k < −126 gives an encoding below 0, clamped to +0: e is flushed where fp32 cannot hold it.
//   The loop is latency-bound on Zen 4 (a 50-cycle chain per vector, the FP scheduler
//   holds about three), so the short chain is the speed: Cephes expf's degree-5 P by
//   Horner and a two-part ln 2 took 21 cycles per 16 values, this 17. silu's worst
//   relative error over every 7th fp32 gate in [−110, 110] is 3.9e-7 (the gate allows 1e-5).
//   silu = n / (1 + e) with n = g for g ≥ 0 (and NaN) and max(g, −FLT_MAX)·e for g < 0, so
//   that −inf gives −FLT_MAX · 0 = −0, not NaN.
Expr silu_fma(Expr g) {
  Expr sign = Internal::make_const(UInt(32), 0x80000000u);
  Expr x = max(reinterpret<float>(reinterpret<uint32_t>(g) | sign), -100.0f);
  Expr shifted = fma(x, Expr(1.44269504088896341f), Expr(kRoundingBias));
  Expr k = shifted - kRoundingBias;  // exact
  Expr r = fma(k, Expr(-0.693147182f), x);
  // e^r = 1 + r + r²·P(r), P cubic, evaluated by Estrin's scheme.
  Expr r2 = r * r;
  Expr p = fma(fma(Expr(8.31239391e-3f), r, Expr(4.18902710e-2f)), r2, fma(Expr(1.66671157e-1f), r, Expr(4.99992311e-1f)));
  p = fma(p, r2, r + 1.0f);
  // (k + 127) << 23, in uint32: Halide lets LLVM assume int32 arithmetic never wraps.
  Expr exponent = (reinterpret<uint32_t>(shifted) << 23) + Internal::make_const(UInt(32), 0x3f800000);
  Expr e = p * reinterpret<float>(max(reinterpret<int32_t>(exponent), 0));
  Expr n = select(g < 0.0f, max(g, -std::numeric_limits<float>::max()) * e, g);
  return n / (1.0f + e);
}

Expr silu(Expr g, const Target& target) { return has_native_fma(target) ? silu_fma(g) : silu_portable(g); }

SiluMul define_silu_mul(Func gate_up, Type out_type, const Target& target) {
  SiluMul op;
  Var f = op.f, t = op.t;
  Expr g = widen_to_f32(gate_up(f, 0, t), target), up = widen_to_f32(gate_up(f, 1, t), target);
  op.out(f, t) = narrow_from_f32(strict_float(silu(g, target) * up), out_type, target);
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
    ops::add_fma_bitcode(*get_externs_map(), get_target());
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
