#include "ops/add_rms_norm.h"

#include "schedules/cpu/parallel_tasks.h"

namespace npukit::schedules::cpu {

using namespace Halide;

// rms_norm's schedule (tasks of 4 rows, each row's sum of squares and scaling while the row
// is in L1) with the row's x + residual kept in a row buffer, which the norm reads and the
// new residual row is copied from, after the row's norm (compute_with): every row is read
// once and the in-place update never runs ahead of the reads.
void schedule_add_rms_norm(ops::AddRmsNorm& op, Expr, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var h = op.norm.h, row = op.norm.row, rowo{"rowo"}, rowi{"rowi"};

  // GuardWithIf everywhere: a ShiftInwards tail would re-read residual elements that the
  // in-place update has already written. Both outputs get the same loops, so that
  // compute_with can fuse them down to the row. Fewer rows than 4 are one task of their
  // own size: no GuardWithIf tail, whose loop nest Halide leaves unpartitioned, for a
  // decode step's single row (schedules/cpu/rms_norm.cpp).
  Func y = op.norm.out, r = op.residual_out;
  Expr rows = y.output_buffer().dim(1).extent();
  for (Func f : {y, r}) {
    f.split(row, rowo, rowi, min(rows, 4), TailStrategy::GuardWithIf).parallel(rowo).vectorize(h, vec, TailStrategy::GuardWithIf);
  }
  r.compute_with(y, rowi);  // after y's row: the row's reads of the old residual are done

  op.sum.compute_at(y, rowi).vectorize(h, vec, TailStrategy::GuardWithIf);
  schedule_square_sum(op.norm, LoopLevel(y, rowi), target);
  op.norm.inv_rms.compute_at(y, rowi);
}

}  // namespace npukit::schedules::cpu
