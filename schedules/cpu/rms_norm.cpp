#include "ops/rms_norm.h"

#include "schedules/cpu/parallel_tasks.h"

namespace npukit::schedules::cpu {

using namespace Halide;

// Σx² of one row, computed at `at`. Four vector accumulators per row hide the FMA latency
// (one chain would cap the sum of squares below DRAM speed). rfactor appends its lane Var
// as the outermost storage dimension; each intermediate stores its lanes innermost instead,
// since where the rows realized at `at` are not a constant 1 (add_rms_norm's fused outputs)
// the lanes' stride is the runtime row count and every vector store became a scatter
// (add_rms_norm fp32 [1, 4096]: 3.3 us hot, Zen 4).
void schedule_square_sum(ops::RmsNorm& op, LoopLevel at, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var u{"u"};
  RVar ko{"ko"}, ki{"ki"};
  // An fp64 sum over all of hidden (`r`), computed at `at`: four vectors of partial sums.
  auto schedule_f64_sum = [&](Func sum, RDom r) {
    Func partial = sum.update().split(r, ko, ki, 4 * vec, TailStrategy::GuardWithIf).rfactor(ki, u);
    partial.reorder_storage(u, op.row).compute_at(at).vectorize(u);
    partial.update().vectorize(u);
  };
  if (op.block.defined()) {
    // fp32 blocks (ops::SquareSum), each computed where the fp64 sum adds it (no scratch
    // sized by hidden, which Halide would allocate on the heap): its 512 squares in four
    // vectors (512 is a multiple of 4·vec: no tail), the four added into one vector, then
    // its lanes; the row's last partial block in one vector.
    RVar kio{"kio"}, kii{"kii"};
    Var v{"v"};
    Func lanes4 = op.block.update().split(op.j, ko, ki, 4 * vec, TailStrategy::GuardWithIf).rfactor(ki, u);
    Func lanes = op.block.update().split(ki, kio, kii, vec, TailStrategy::GuardWithIf).rfactor(kii, v);
    lanes4.reorder_storage(u, op.c, op.row).compute_at(op.block, op.c).vectorize(u);
    lanes4.update().vectorize(u);
    lanes.reorder_storage(v, op.c, op.row).compute_at(op.block, op.c).vectorize(v);
    lanes.update().vectorize(v);
    op.block.compute_at(op.sumsq, op.k.x);
    Func tail = op.tail.update().split(op.t, ko, ki, vec, TailStrategy::GuardWithIf).rfactor(ki, u);
    tail.reorder_storage(u, op.row).compute_at(at).vectorize(u);
    tail.update().vectorize(u);
    op.tail.compute_at(at);
    if (op.sumsq_f64.defined()) {
      // The fp64 sum of rows out of the fp32 blocks' range: its loop runs inside the test of
      // ke's predicate (loop-invariant), so the rows in range skip it.
      op.sumsq_f64.compute_at(at);
      schedule_f64_sum(op.sumsq_f64, op.ke);
    }
  } else {
    schedule_f64_sum(op.sumsq, op.k);
  }
  op.sumsq.compute_at(at);
}

// Rows in parallel, each row in two vector passes (sum of squares, then scale) while it
// is still in L1/L2, so DRAM sees one read and one write of the tensor.
void schedule_rms_norm(ops::RmsNorm& op, Expr hidden, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var h = op.h, row = op.row, rowo{"rowo"}, rowi{"rowi"};

  // A task of 4 rows amortizes the thread pool's overhead; up to 4 rows run as one task,
  // serially. ShiftInwards: a GuardWithIf tail put a decode step's single row in a loop
  // nest that Halide did not partition (its sum of squares kept its accumulators in memory).
  Func y = op.out;
  Expr rows = y.output_buffer().dim(1).extent();
  y.split(row, rowo, rowi, min(rows, 4), TailStrategy::ShiftInwards);
  parallel_unless_one_task(y, rowo, (rows + 3) / 4, [&](Stage s) {
    s.specialize(hidden >= vec).vectorize(h, vec, TailStrategy::ShiftInwards);
  });

  schedule_square_sum(op, LoopLevel(y, rowi), target);
  op.inv_rms.compute_at(y, rowi);
}

}  // namespace npukit::schedules::cpu
