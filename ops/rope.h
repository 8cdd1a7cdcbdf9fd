// Rotary position embedding as a pure Halide algorithm, in two pieces so that the
// attention operator can rotate q and k inside its own pipeline without copying code:
// rope_angles() makes the (cos, sin) table of a positions Func, apply_rope() rotates any
// fp32 Func of (dim, head, token) with it.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// Which dims form pair i: interleaved (2i, 2i+1), GPT-J / Meta Llama; half
// (i, i + rotary_dim/2), GPT-NeoX / Hugging Face Llama.
enum class RopeStyle { interleaved, half };

struct RopeAngles {
  Halide::Var i{"i"}, t{"t"};
  Halide::Func inv_freq{"inv_freq"};  // (i): theta^(-2i/rotary_dim), fp64
  Halide::Func cos_sin{"cos_sin"};    // (i, t): Tuple(cos, sin) of positions(t)·inv_freq(i), fp32
};

// `positions(t)` is any integer Func. Defined for every i ≥ 0 (pairs past rotary_dim/2
// are harmless numbers), so that vector loads of the table need no clamp.
RopeAngles rope_angles(Halide::Func positions, Halide::Expr theta, Halide::Expr rotary_dim);

struct Rope {
  Halide::Var d{"d"}, h{"h"}, t{"t"};
  Halide::RDom r;                 // the half style's pairs, [0, rotary_dim/2)
  Halide::Func out{"rope"};       // (d, h, t), fp32
};

// The half style when rotary_dim = head_dim, on a view of each row as two halves:
// x(i, j, h, t) = row[j·half + i]. Pairs (i, i + half) become (x(i, 0), x(i, 1)): dense
// vectors, no copy or update pass. rotary_dim is 2·half.
Halide::Func apply_rope_half_rows(Halide::Func x, const RopeAngles& angles);

// Rotates `x(d, h, t)` (fp32) in pairs for d < rotary_dim and copies the rest. The
// interleaved style needs an even head_dim (it reads x in whole pairs up to head_dim).
Rope apply_rope(Halide::Func x, const RopeAngles& angles, RopeStyle style, Halide::Expr rotary_dim);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/rope.cpp, schedules/gpu/rope.cpp);
// the Generator (below) applies the one of its target.
namespace npukit::schedules::cpu {
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Halide::Func x_f32, bool widened,
                   Halide::Func y, ops::RopeStyle style, Halide::Expr head_dim, const Halide::Target& target);
void schedule_rope_half_rows(ops::RopeAngles& angles, Halide::Func y, Halide::Expr half,
                             const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Halide::Func x_f32, bool widened,
                   Halide::Func y, ops::RopeStyle style, Halide::Expr head_dim, const Halide::Target& target);
void schedule_rope_half_rows(ops::RopeAngles& angles, Halide::Func y, Halide::Expr half,
                             const Halide::Target& target);
}  // namespace npukit::schedules::gpu

// ---- Section NPUKIT_ALGORITHM_rope: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_rope

#include "ops/exp_f64.h"
#include "ops/sincos.h"

namespace npukit::ops {

using namespace Halide;

RopeAngles rope_angles(Func positions, Expr theta, Expr rotary_dim) {
  RopeAngles a;
  // The angle p·theta^(-2i/rd) is formed and reduced in fp64: in fp32, p = 2^20 − 1 times
  // inv_freq ≈ 1 has an ulp of 0.06 rad. In fp64 the product is within ~1e-10 rad.
  // theta^e as exp(e · ln theta) (ln theta is loop-invariant), with a vectorized exp: libm's
  // pow, then its exp, one lane at a time, were a quarter, then 13%, of a decode-shape call
  // on Zen 3. The exponent's rounding (|e · ln theta| <= ln theta) and exp_f64's ~2 ulp
  // move inv_freq by a few ulps of fp64: at p = 2^20 the angle by ~1e-9 rad, as far below
  // float32's tolerances as pow's ulp.
  a.inv_freq(a.i) = exp_f64(cast<double>(-2 * a.i) / cast<double>(rotary_dim) * log(cast<double>(theta)));
  Expr angle = cast<double>(positions(a.t)) * a.inv_freq(a.i);
  auto [c, s] = cos_sin_f64(angle);
  a.cos_sin(a.i, a.t) = Tuple(cast<float>(c), cast<float>(s));
  return a;
}

Func apply_rope_half_rows(Func x, const RopeAngles& angles) {
  Var i("i"), j("j"), h("h"), t("t");
  Expr a = x(i, 0, h, t), b = x(i, 1, h, t);
  Expr c = angles.cos_sin(i, t)[0], s = angles.cos_sin(i, t)[1];
  Func out("rope_half_rows");
  out(i, j, h, t) = select(j == 0, a * c - b * s, a * s + b * c);
  return out;
}

Rope apply_rope(Func x, const RopeAngles& angles, RopeStyle style, Expr rotary_dim) {
  Rope op;
  Var d = op.d, h = op.h, t = op.t;
  if (style == RopeStyle::interleaved) {
    // Pair i is (2i, 2i + 1); rot(j, i) is its element j. Laid out with j innermost, rot is
    // indexed exactly like d, and x is read only at 2i and 2i + 1: inside the row for an
    // even head_dim, with no clamp. Vectorized over d, the loads are stride-2 (dense loads
    // and shuffles) and the store dense (schedules/cpu/rope.cpp).
    Var j("j"), i("i");
    Func rot("rope_pairs");
    Expr a = x(2 * i, h, t), b = x(2 * i + 1, h, t);
    Expr c = angles.cos_sin(i, t)[0], s = angles.cos_sin(i, t)[1];
    rot(j, i, h, t) = select(j == 0, a * c - b * s, a * s + b * c);
    op.out(d, h, t) = select(d < rotary_dim, rot(d % 2, d / 2, h, t), x(d, h, t));
  } else {
    // Pairs (i, i + half) are far apart: a copy, then one dense update per half.
    Expr half = rotary_dim / 2;
    op.r = RDom(0, half, "r");
    Expr i = op.r;
    Expr a = x(i, h, t), b = x(i + half, h, t);
    Expr c = angles.cos_sin(i, t)[0], s = angles.cos_sin(i, t)[1];
    op.out(d, h, t) = x(d, h, t);
    op.out(i, h, t) = a * c - b * s;
    op.out(i + half, h, t) = a * s + b * c;
  }
  return op;
}

}  // namespace npukit::ops

// The RoPE Generator: `style` picks the pair layout at compile time (the two layouts want
// different loops); storage types come from the `x.type` and `y.type` generator params.
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class RopeGenerator : public Halide::Generator<RopeGenerator> {
 public:
  GeneratorParam<ops::RopeStyle> style{"style", ops::RopeStyle::interleaved,
                                       {{"interleaved", ops::RopeStyle::interleaved}, {"half", ops::RopeStyle::half}}};
  Input<Halide::Buffer<void, 3>> x{"x"};  // (head_dim, heads, tokens): head_dim innermost
  Input<Halide::Buffer<int32_t, 1>> positions{"positions"};
  Input<double> theta{"theta"};
  Input<int32_t> rotary_dim{"rotary_dim"};
  Output<Halide::Buffer<void, 3>> y{"y"};

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    // npukit passes every buffer with min 0; saying so lets the parity of d be known at
    // compile time once the schedule splits it.
    ops::set_mins_to_zero(x, positions);
    Expr head_dim = x.dim(0).extent();
    Func xf("xf");
    Var d, h, t;
    xf(d, h, t) = ops::widen_to_f32(x(d, h, t), get_target());
    ops::RopeAngles angles = ops::rope_angles(positions, theta, rotary_dim);
    ops::Rope rope = ops::apply_rope(xf, angles, style, rotary_dim);
    Func out("rope_out");
    out(rope.d, rope.h, rope.t) = ops::narrow_from_f32(rope.out(rope.d, rope.h, rope.t), y.type(), get_target());
    y = out;
    ops::set_mins_to_zero(y);
    const bool widened = x.type().bits() == 16;
    if (schedules::gpu::is_gpu(get_target())) {
      schedules::gpu::schedule_rope(angles, rope, xf, widened, out, style, head_dim, get_target());
    } else {
      schedules::cpu::schedule_rope(angles, rope, xf, widened, out, style, head_dim, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::RopeGenerator, npukit_rope)

namespace npukit {
namespace {

// RoPE, half style, rotary_dim = head_dim (Hugging Face Llama): rows seen as two halves,
// x(i, j, h, t) = row[j·half + i], so the pairs are dense vectors.
class RopeHalfRowsGenerator : public Halide::Generator<RopeHalfRowsGenerator> {
 public:
  Input<Halide::Buffer<void, 4>> x{"x"};  // (half, 2, heads, tokens)
  Input<Halide::Buffer<int32_t, 1>> positions{"positions"};
  Input<double> theta{"theta"};
  Output<Halide::Buffer<void, 4>> y{"y"};

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    ops::set_mins_to_zero(x, positions);
    x.dim(1).set_extent(2);
    Expr half = x.dim(0).extent();
    Func xf("xf");
    Var i, j, h, t;
    xf(i, j, h, t) = ops::widen_to_f32(x(i, j, h, t), get_target());
    ops::RopeAngles angles = ops::rope_angles(positions, theta, 2 * half);
    Func rotated = ops::apply_rope_half_rows(xf, angles);
    Func out("rope_out");
    Var oi = rotated.args()[0], oj = rotated.args()[1], oh = rotated.args()[2], ot = rotated.args()[3];
    out(oi, oj, oh, ot) = ops::narrow_from_f32(rotated(oi, oj, oh, ot), y.type(), get_target());
    y = out;
    ops::set_mins_to_zero(y);
    y.dim(1).set_extent(2);
    if (schedules::gpu::is_gpu(get_target())) {
      schedules::gpu::schedule_rope_half_rows(angles, out, half, get_target());
    } else {
      schedules::cpu::schedule_rope_half_rows(angles, out, half, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::RopeHalfRowsGenerator, npukit_rope_half_rows)

#endif  // NPUKIT_ALGORITHM_rope
