#include "ops/{{op}}.h"

namespace npukit::schedules::cpu {

using namespace Halide;

// Rows in parallel, in tasks of 4 rows; each row in vectors of the tier's width.
void schedule_{{op}}(ops::{{Op}}& op, Expr cols, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var rowo{"rowo"}, rowi{"rowi"};
  op.out.split(op.row, rowo, rowi, 4, TailStrategy::GuardWithIf).parallel(rowo);
  op.out.specialize(cols >= vec).vectorize(op.c, vec, TailStrategy::ShiftInwards);
}

}  // namespace npukit::schedules::cpu
