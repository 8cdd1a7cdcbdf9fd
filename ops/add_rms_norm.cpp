#include "ops/add_rms_norm.h"

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

Expr add_residual(Expr x, Expr residual, Type residual_type, const Target& target) {
  // For fp16 this is the correctly rounded fp16 sum (fp32 has more than 2·11 + 2 bits),
  // what an fp16 `x + residual` gives.
  return narrow_from_f32(strict_float(widen_to_f32(x, target) + widen_to_f32(residual, target)), residual_type,
                         target);
}

AddRmsNorm define_add_rms_norm(Func x, Func residual, Func weight, Expr hidden, Expr eps, Type residual_type,
                               Type out_type, const Target& target) {
  AddRmsNorm op;
  Var h("h"), row("row");
  Expr r = add_residual(x(h, row), residual(h, row), residual_type, target);
  op.sum(h, row) = r;
  op.residual_out(h, row) = r;
  op.norm = define_rms_norm(op.sum, weight, hidden, eps, out_type, target);
  return op;
}

}  // namespace npukit::ops
