#include "schedules/cpu/per_token_quant.h"

#include "schedules/cpu/parallel_tasks.h"

namespace npukit::schedules::cpu {

using namespace Halide;

int quant_lanes(const Target& target, Type stored) { return target.natural_vector_size(stored); }

void schedule_per_token_quant(ops::PerTokenQuant& p, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  // p.scale and p.q are the outputs (root); each row's maximum inside the row's scale.
  // Rows in parallel, a single row (a decode step) serially.
  Expr rows = p.scale.output_buffer().dim(0).extent();
  parallel_unless_one_task(p.scale, p.t, rows, [](Stage) {});
  p.mag_bits.compute_at(p.scale, p.t);
  p.mag_part.compute_at(p.mag_bits, p.t).vectorize(p.l);
  p.mag_part.update().vectorize(p.l);
  p.q.vectorize(p.k, vec * 4, TailStrategy::GuardWithIf);
  parallel_unless_one_task(p.q, p.t, rows, [](Stage) {});
}

void schedule_dequantize_rows(Func y, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  y.vectorize(y.args()[0], vec * 2, TailStrategy::GuardWithIf);
  parallel_unless_one_task(y, y.args()[1], y.output_buffer().dim(1).extent(), [](Stage) {});
}

}  // namespace npukit::schedules::cpu
