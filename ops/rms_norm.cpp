#include "ops/rms_norm.h"

#include "ops/exact_f64.h"
#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

RmsNorm define_rms_norm(Func x, Func weight, Expr hidden, Expr eps, Type out_type, const Target& target) {
  RmsNorm op;
  Var h = op.h, row = op.row;
  op.k = RDom(0, hidden, "k");

  // Σx² in fp64: fp32 squares overflow once |x| > 1.8e19 and underflow below 1e-19, while
  // fp64 holds every fp32 square. The kernel is memory bound, so the widening is free.
  Expr v = cast<double>(widen_to_f32(x(op.k, row), target));
  op.sumsq(row) = cast<double>(0);
  op.sumsq(row) += v * v;

  // 1/rms in fp64, then applied in fp32 as two factors a·b, b a power of two chosen so that
  // a stays a normal fp32 even when rms is beyond fp32's range (|x| near 3.4e38, or tiny
  // values with eps = 0). strict_float keeps IEEE sqrt and division: no reciprocal-sqrt
  // estimates, and NaN/Inf behave as the contract says.
  const auto f64 = exact_f64;
  Expr inv = strict_float(f64(1.0) / sqrt(op.sumsq(row) / cast<double>(hidden) + cast<double>(eps)));
  Expr small = inv < f64(0x1p-100);
  Expr large = inv > f64(0x1p100);
  Expr up = select(small, f64(0x1p64), large, f64(0x1p-64), f64(1.0));
  Expr down = select(small, 0x1p-64f, large, 0x1p64f, 1.0f);
  op.inv_rms(row) = Tuple(cast<float>(strict_float(inv * up)), down);

  Expr a = op.inv_rms(row)[0], b = op.inv_rms(row)[1];
  op.out(h, row) = narrow_from_f32(strict_float(((widen_to_f32(x(h, row), target) * a) * b) * widen_to_f32(weight(h), target)), out_type, target);
  return op;
}

}  // namespace npukit::ops
