// Per-token symmetric int8 quantization of activation rows and the dequantization of an
// int32 accumulator with a per-row and a per-channel scale: the two ends of a linear layer
// with int8 weights and fp activations (docs/ops/attention.md, "Int8 weights").
#pragma once

#include "Halide.h"
#include "ops/round_even.h"

namespace npukit::ops {

struct PerTokenQuant {
  Halide::Var k{"k"}, l{"l"}, t{"t"};
  Halide::RDom rj;                         // lane groups, [0, K / lanes)
  Halide::RDom rl;                         // lanes, [0, lanes)
  Halide::RDom rtail;                      // [K / lanes · lanes, K)
  Halide::Func mag_part{"mag_part"};       // (l, t): the maximum over k = j·lanes + l
  Halide::Func mag_bits{"mag_bits"};       // (t): max_k of |stored(k, t)|'s bits, unsigned
  Halide::Func scale{"token_scale"};       // (t): fp32 s, 0 or NaN
  Halide::Func q{"token_q"};               // (k, t): int8
};

// How q's quotient a / s is formed; both give the same q.
enum class Division {
  ieee,  // one fp32 division per value
  // p = a·r with r = 1/s (one division per row), then p + (a − s·p)·r with the remainder
  // exact (fma): the correctly rounded quotient for fp16 activations, checked for every
  // pair of an fp16 value and an fp16 row maximum (per_token_quant_test,
  // Fp16KernelsMatchIeeeDivisionForEveryValueAndRowMaximum); not shown for fp32, where a·r
  // alone misses ties. A vector division costs about 3 cycles per 16 values on Zen 4, more
  // than the rest of q's loop. Needs ops/fma.h.
  reciprocal_fma,
};

// The division for activations stored as `stored` on `target`: reciprocal_fma for fp16
// where the target has fma, else ieee.
Division division_for(Halide::Type stored, const Halide::Target& target);

// `stored(k, t)`: activations as stored, fp32 or fp16, K per row; `a(k, t)`: the same as
// fp32. s = m / 127 with m = max |a| (NaN when a row holds NaN or ±Inf);
// q = clamp(nearbyint(a / s), −127, 127), or 0 where s is 0 or NaN.
// The maximum runs on the stored magnitude bits: for IEEE floats |a| as an unsigned integer
// of their width orders exactly like |a|, and NaN and ±Inf sort above every finite value,
// so one integer reduction gives m and detects a non-finite row, immune to fast-math (and
// for fp16 without converting, two values per 32 bits). The maximum keeps `lanes` partial
// maxima (one vector) over whole lane groups, then the tail. `rounding`: the form of
// nearbyint (ops/round_even.h); `division`: the form of a / s. Neither changes a result.
PerTokenQuant define_per_token_quant(Halide::Func stored, Halide::Func a, Halide::Expr K, int lanes, Rounding rounding,
                                     Division division);

// (float)acc · (row_scale · chan_scale), the multiplications in fp32 in that order.
Halide::Expr dequantize(Halide::Expr acc, Halide::Expr row_scale, Halide::Expr chan_scale);

}  // namespace npukit::ops

// ---- Section NPUKIT_ALGORITHM_per_token_quant: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_per_token_quant

#include "ops/fma.h"

namespace npukit::ops {

using namespace Halide;

Division division_for(Type stored, const Target& target) {
  return stored == Float(16) && has_native_fma(target) ? Division::reciprocal_fma : Division::ieee;
}

PerTokenQuant define_per_token_quant(Func stored, Func a, Expr K, int lanes, Rounding rounding, Division division) {
  const Type st = stored.output_types().at(0);
  _halide_user_assert(st == Float(32) || st == Float(16))
      << "define_per_token_quant: stored activations are " << st << "; must be float32 or float16\n";
  _halide_user_assert(division == Division::ieee || st == Float(16))
      << "define_per_token_quant: Division::reciprocal_fma is exact for float16 activations only\n";
  PerTokenQuant p;
  Var k = p.k, l = p.l, t = p.t;
  Expr groups = K / lanes;
  p.rj = RDom(0, groups, "rj");
  p.rl = RDom(0, lanes, "rl");
  p.rtail = RDom(groups * lanes, K - groups * lanes, "rtail");
  const Type ut = UInt(st.bits());
  const bool wide = st.bits() == 32;
  Expr magnitude = Internal::make_const(ut, wide ? 0x7fffffff : 0x7fff);
  Expr inf = Internal::make_const(ut, wide ? 0x7f800000 : 0x7c00);
  const auto mag = [&](Expr kk) { return reinterpret(ut, stored(kk, t)) & magnitude; };
  p.mag_part(l, t) = Internal::make_const(ut, 0);
  p.mag_part(l, t) = max(p.mag_part(l, t), mag(p.rj * lanes + l));
  p.mag_bits(t) = Internal::make_const(ut, 0);
  p.mag_bits(t) = max(p.mag_bits(t), p.mag_part(p.rl, t));
  p.mag_bits(t) = max(p.mag_bits(t), mag(p.rtail));
  Expr bits = p.mag_bits(t);
  Expr finite = bits < inf;
  Expr m = cast<float>(reinterpret(st, bits));  // exact for every finite fp16
  // strict_float: an IEEE division, not a multiplication by the reciprocal of 127.
  Expr s = strict_float(m / 127.0f);
  p.scale(t) = select(finite, s, reinterpret<float>(cast<uint32_t>(0x7fc00000)));
  Expr sc = p.scale(t);
  // Only finite quotients reach the conversion: rows with s = 0 or NaN divide 0 by 1. The
  // test is on s's bits (s >= +0 always), which fast-math cannot assume away.
  Expr s_bits = reinterpret<uint32_t>(sc);
  Expr ok = s_bits != cast<uint32_t>(0) && s_bits < cast<uint32_t>(0x7f800000);
  Expr num = select(ok, a(k, t), 0.0f), den = select(ok, sc, 1.0f);
  Expr quotient;
  if (division == Division::ieee) {
    quotient = num / den;
  } else {
    Expr r = 1.0f / den, p0 = num * r;  // r is per row: hoisted out of q's loop
    quotient = fma(fma(-den, p0, num), r, p0);
  }
  // For fp16 rows the clamp to ±127 is dead on the CPU: |a| <= m, and s = RN(m/127) is
  // within 2^-24 relative of m/127 (m/127 >= 2^-31 is a normal fp32), so |a/s| <=
  // 127·(1 + 2^-24) and its rounding RN(a/s) <= 127 + 2^-17 (the next fp32 after 127)
  // rounds to 127 at most. Without it a hot fp16 [1, 4096] call took 0.47 us instead of
  // 0.55 (Zen 4). fp32 rows keep it: their m/127 can be subnormal, and s then far from it.
  // The portable form (GPUs, the NPU simulator) keeps it too.
  const bool in_range = st == Float(16) && rounding == Rounding::x86_roundps;
  p.q(k, t) = in_range ? round_to_int8(strict_float(quotient), rounding)
                       : round_clamp_to_int8(strict_float(quotient), -127.0f, 127.0f, rounding);
  return p;
}

Expr dequantize(Expr acc, Expr row_scale, Expr chan_scale) {
  return strict_float(cast<float>(acc) * strict_float(row_scale * chan_scale));
}

}  // namespace npukit::ops

// The Generators of per-token int8 quantization (`npukit_quantize_rows`: activation rows to
// int8 and one fp32 scale per row) and of the per-row dequantization of an int32
// accumulator (`npukit_dequantize_rows`), for linear layers with int8 weights.
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
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
    ops::add_fma_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(a);
    Var k, t;
    Func af("af");
    af(k, t) = ops::widen_to_f32(a(k, t), target);
    const bool gpu = schedules::gpu::is_gpu(target);
    // GPU kernels take fp16 as uint16 bits (ops/float_convert.h) and reduce in fp32 bits.
    Func stored = gpu ? af : Func(a);
    const Type stored_type = stored.output_types().at(0);
    const int lanes = gpu ? schedules::gpu::quant_lanes(target) : schedules::cpu::quant_lanes(target, stored_type);
    ops::PerTokenQuant p = ops::define_per_token_quant(stored, af, a.dim(0).extent(), lanes, ops::rounding_for(target),
                                                       ops::division_for(stored_type, target));
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

#endif  // NPUKIT_ALGORITHM_per_token_quant
