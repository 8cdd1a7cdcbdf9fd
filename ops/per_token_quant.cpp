#include "ops/per_token_quant.h"

#include "ops/round_even.h"

namespace npukit::ops {

using namespace Halide;

PerTokenQuant define_per_token_quant(Func a, Expr K, int lanes) {
  PerTokenQuant p;
  Var k = p.k, l = p.l, t = p.t;
  Expr groups = K / lanes;
  p.rj = RDom(0, groups, "rj");
  p.rl = RDom(0, lanes, "rl");
  p.rtail = RDom(groups * lanes, K - groups * lanes, "rtail");
  const auto mag = [&](Expr kk) { return reinterpret<uint32_t>(a(kk, t)) & cast<uint32_t>(0x7fffffff); };
  p.mag_part(l, t) = cast<uint32_t>(0);
  p.mag_part(l, t) = max(p.mag_part(l, t), mag(p.rj * lanes + l));
  p.mag_bits(t) = cast<uint32_t>(0);
  p.mag_bits(t) = max(p.mag_bits(t), p.mag_part(p.rl, t));
  p.mag_bits(t) = max(p.mag_bits(t), mag(p.rtail));
  Expr bits = p.mag_bits(t);
  Expr finite = bits < cast<uint32_t>(0x7f800000);
  // strict_float: an IEEE division, not a multiplication by the reciprocal of 127.
  Expr s = strict_float(reinterpret<float>(bits) / 127.0f);
  p.scale(t) = select(finite, s, reinterpret<float>(cast<uint32_t>(0x7fc00000)));
  Expr sc = p.scale(t);
  // Only finite quotients reach the conversion: rows with s = 0 or NaN divide 0 by 1. The
  // test is on s's bits (s >= +0 always), which fast-math cannot assume away.
  Expr s_bits = reinterpret<uint32_t>(sc);
  Expr ok = s_bits != cast<uint32_t>(0) && s_bits < cast<uint32_t>(0x7f800000);
  Expr num = select(ok, a(k, t), 0.0f), den = select(ok, sc, 1.0f);
  Expr r = strict_float(round_half_even(num / den));
  p.q(k, t) = cast<int8_t>(strict_float(clamp(r, -127.0f, 127.0f)));
  return p;
}

Expr dequantize(Expr acc, Expr row_scale, Expr chan_scale) {
  return strict_float(cast<float>(acc) * strict_float(row_scale * chan_scale));
}

}  // namespace npukit::ops
