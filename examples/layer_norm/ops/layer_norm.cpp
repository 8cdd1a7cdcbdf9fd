#include "ops/layer_norm.h"

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

LayerNorm define_layer_norm(Func x, Func weight, Func bias, Expr hidden, Expr eps, Type out_type, const Target& target) {
  LayerNorm op;
  Var h = op.h, row = op.row;
  op.k = RDom(0, hidden, "k");
  const Expr n = cast<double>(hidden);

  // Two passes in fp64, the mean first and then the squared deviations from it: the
  // one-pass E[x²] - E[x]² cancels catastrophically for rows with a large mean and a small
  // spread (activations offset by 1e3 with unit variance lose every bit of the variance in
  // fp32), and fp64 holds every fp32 square and sum (|x| up to 3.4e38) without overflow. The
  // op is memory bound; the row is read twice while it sits in L1/L2.
  Expr v = cast<double>(widen_to_f32(x(op.k, row), target));
  op.sum(row) = cast<double>(0);
  op.sum(row) += v;
  op.mean(row) = op.sum(row) / n;
  Expr d = v - op.mean(row);
  op.sqdev(row) = cast<double>(0);
  op.sqdev(row) += d * d;
  // strict_float: IEEE sqrt and division, no reciprocal estimates, and NaN/Inf as the
  // contract says (golden/layer_norm.h).
  op.inv_std(row) = strict_float(cast<double>(1) / sqrt(op.sqdev(row) / n + cast<double>(eps)));

  // Normalize, scale and shift in fp64, then one rounding to the output type (through fp32,
  // which holds every fp16 value and rounds an fp64 to fp16 as one rounding would but for
  // halfway cases, well inside the fp16 tolerance).
  Expr xn = (cast<double>(widen_to_f32(x(h, row), target)) - op.mean(row)) * op.inv_std(row);
  Expr y = xn * cast<double>(widen_to_f32(weight(h), target)) + cast<double>(widen_to_f32(bias(h), target));
  op.out(h, row) = narrow_from_f32(cast<float>(strict_float(y)), out_type, target);
  return op;
}

}  // namespace npukit::ops
