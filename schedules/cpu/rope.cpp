#include "schedules/cpu/rope.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Func x_f32, bool widened, Func y,
                   ops::RopeStyle style, Expr head_dim, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var d = rope.d, h = rope.h, t = rope.t, to{"to"}, ti{"ti"}, pair{"pair"}, parity{"parity"};

  y.split(t, to, ti, 8, TailStrategy::GuardWithIf).parallel(to);
  angles.inv_freq.compute_root();
  // Scratch sizes depend on head_dim and rotary_dim, so Halide allocates them on the heap:
  // store_at(to) makes that once per task instead of once per token or head.
  angles.cos_sin.store_at(y, to).compute_at(y, ti).vectorize(angles.i, target.natural_vector_size<double>(),
                                                              TailStrategy::GuardWithIf);

  if (style == ops::RopeStyle::interleaved) {
    if (widened) x_f32.store_at(y, to).compute_at(y, ti).vectorize(x_f32.args()[0], vec, TailStrategy::GuardWithIf);
    // Parity unrolled: loads of x at 2·pair and 2·pair + 1 become one dense load and a
    // deinterleave, and the two strided stores one interleaved dense store. For fp16 the
    // input rows are staged in fp32 first: shuffling 16-bit lanes around the conversion
    // cost 5x (vpinsrw/vpextrw per lane); staging the output too cost 2x.
    // ShiftInwards, not GuardWithIf: with guards each parity's store sits in its own if
    // and Halide cannot merge the two stride-2 stores into one dense store (they became
    // 16 scalar stores each).
    y.specialize(head_dim >= 2 * vec)
        .split(d, pair, parity, 2, TailStrategy::ShiftInwards)
        .unroll(parity)
        .vectorize(pair, vec, TailStrategy::ShiftInwards);
  } else {
    rope.out.store_at(y, to).compute_at(y, h).vectorize(d, vec, TailStrategy::GuardWithIf);
    rope.out.update(0).vectorize(rope.r, vec, TailStrategy::GuardWithIf);
    rope.out.update(1).vectorize(rope.r, vec, TailStrategy::GuardWithIf);
    y.specialize(head_dim >= vec).vectorize(d, vec, TailStrategy::ShiftInwards);
  }
}

void schedule_rope_half_rows(ops::RopeAngles& angles, Func y, Expr half, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var i = y.args()[0], j = y.args()[1], t = y.args()[3], to{"to"}, ti{"ti"};
  y.split(t, to, ti, 8, TailStrategy::GuardWithIf).parallel(to);
  angles.inv_freq.compute_root();
  angles.cos_sin.store_at(y, to).compute_at(y, ti).vectorize(angles.i, target.natural_vector_size<double>(),
                                                              TailStrategy::GuardWithIf);
  y.reorder(i, j).bound(j, 0, 2).unroll(j);
  y.specialize(half >= vec).vectorize(i, vec, TailStrategy::ShiftInwards);
}

}  // namespace npukit::schedules::cpu
