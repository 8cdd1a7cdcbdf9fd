#include "ops/silu_mul.h"

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
