#include "ops/rope.h"

#include "ops/sincos.h"

namespace npukit::ops {

using namespace Halide;

RopeAngles rope_angles(Func positions, Expr theta, Expr rotary_dim) {
  RopeAngles a;
  // The angle p·theta^(-2i/rd) is formed and reduced in fp64: in fp32, p = 2^20 − 1 times
  // inv_freq ≈ 1 has an ulp of 0.06 rad. In fp64 the product is within ~1e-10 rad.
  // theta^e as exp(e · ln theta): libm's exp costs a fraction of its pow (whose 64 calls
  // were a quarter of a decode-shape call on Zen 3), and ln theta is loop-invariant. The
  // exponent's rounding (|e · ln theta| <= ln theta) moves inv_freq by a few ulps of fp64:
  // at p = 2^20 the angle by ~1e-9 rad, as far below float32's tolerances as pow's ulp.
  a.inv_freq(a.i) = exp(cast<double>(-2 * a.i) / cast<double>(rotary_dim) * log(cast<double>(theta)));
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
