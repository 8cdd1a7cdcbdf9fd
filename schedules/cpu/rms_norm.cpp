#include "ops/rms_norm.h"

namespace npukit::schedules::cpu {

using namespace Halide;

// Rows in parallel, each row in two vector passes (sum of squares, then scale) while it
// is still in L1/L2, so DRAM sees one read and one write of the tensor.
void schedule_rms_norm(ops::RmsNorm& op, Expr hidden, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var h = op.h, row = op.row, rowo{"rowo"}, rowi{"rowi"}, u{"u"};
  RVar ko{"ko"}, ki{"ki"};

  // Four vector accumulators per row hide the FMA latency (one chain would cap the sum of
  // squares below DRAM speed); a task of 4 rows amortizes the thread pool's overhead.
  Func y = op.out;
  y.split(row, rowo, rowi, 4, TailStrategy::GuardWithIf).parallel(rowo);
  y.specialize(hidden >= vec).vectorize(h, vec, TailStrategy::ShiftInwards);

  Func partial = op.sumsq.update()
                     .split(op.k, ko, ki, 4 * vec, TailStrategy::GuardWithIf)
                     .rfactor(ki, u);
  partial.compute_at(y, rowi).vectorize(u);
  partial.update().vectorize(u);
  op.sumsq.compute_at(y, rowi);
  op.inv_rms.compute_at(y, rowi);
}

}  // namespace npukit::schedules::cpu
