#include "ops/{{op}}.h"

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

{{Op}} define_{{op}}(Func x, Expr alpha, Type out_type, const Target& target) {
  {{Op}} op;
  op.out(op.c, op.row) = narrow_from_f32(widen_to_f32(x(op.c, op.row), target) * alpha, out_type, target);
  return op;
}

}  // namespace npukit::ops
