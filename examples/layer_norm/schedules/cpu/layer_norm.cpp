#include "ops/layer_norm.h"

namespace npukit::schedules::cpu {

using namespace Halide;

// Rows in parallel, each row in three vector passes (Σx, Σ(x - mean)², then normalize)
// while it is still in L1/L2, so DRAM sees one read and one write of the tensor.
void schedule_layer_norm(ops::LayerNorm& op, Expr hidden, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  const int dvec = target.natural_vector_size<double>();
  Var h = op.h, row = op.row, rowo{"rowo"}, rowi{"rowi"}, u{"u"};

  // A task of 4 rows amortizes the thread pool's overhead.
  Func y = op.out;
  y.split(row, rowo, rowi, 4, TailStrategy::GuardWithIf).parallel(rowo);
  y.specialize(hidden >= vec).vectorize(h, vec, TailStrategy::ShiftInwards);

  // Four fp64 vector accumulators per sum hide the add latency; the fp64 sums are the
  // reason this kernel is not at DRAM speed on narrow vectors (sse41: 2 lanes).
  for (Func acc : {op.sum, op.sqdev}) {
    RVar ko{"ko"}, ki{"ki"};
    Func partial = acc.update().split(op.k, ko, ki, 4 * dvec, TailStrategy::GuardWithIf).rfactor(ki, u);
    partial.compute_at(y, rowi).vectorize(u);
    partial.update().vectorize(u);
    acc.compute_at(y, rowi);
  }
  op.mean.compute_at(y, rowi);
  op.inv_std.compute_at(y, rowi);
}

}  // namespace npukit::schedules::cpu
