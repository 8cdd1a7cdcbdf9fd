#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

Expr widen_to_f32(Expr v) {
  if (v.type().bits() != 16) return cast<float>(v);
  Expr bits = reinterpret<uint16_t>(v);
  Expr is_nan16 = (bits & 0x7fff) > 0x7c00;
  return select(is_nan16, reinterpret<float>(cast<uint32_t>(0x7fc00000)), cast<float>(v));
}

Expr narrow_from_f32(Expr v, Type t) {
  if (t.bits() != 16) return cast(t, v);
  // Test the fp32 bits, not v != v: fast-math may assume no NaNs and fold that away.
  Expr is_nan32 = (reinterpret<uint32_t>(v) & 0x7fffffff) > 0x7f800000;
  return select(is_nan32, reinterpret(t, cast<uint16_t>(0x7e00)), cast(t, v));
}

}  // namespace npukit::ops
