#include "schedules/cpu/rope.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Func x_f32, bool widened, Func y,
                   ops::RopeStyle style, Expr head_dim, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var d = rope.d, h = rope.h, t = rope.t, to{"to"}, ti{"ti"};

  y.split(t, to, ti, 8, TailStrategy::GuardWithIf).parallel(to);
  angles.inv_freq.compute_root();
  // Scratch sizes depend on head_dim and rotary_dim, so Halide allocates them on the heap:
  // store_at(to) makes that once per task instead of once per token or head.
  angles.cos_sin.store_at(y, to).compute_at(y, ti).vectorize(angles.i, target.natural_vector_size<double>(),
                                                              TailStrategy::GuardWithIf);

  if (style == ops::RopeStyle::interleaved) {
    // fp16 rows are staged in fp32 per token: read in place, the pair loads below would
    // be stride-2 loads of 16-bit lanes, which LLVM assembles lane by lane (vpinsrw):
    // 6.0 us instead of 3.8 us at [1, 32, 128] on the Sapphire Rapids machine.
    if (widened) x_f32.store_at(y, to).compute_at(y, ti).vectorize(x_f32.args()[0], vec, TailStrategy::GuardWithIf);
    // d itself is the vector index: the pair loads x(2·(d/2)) and x(2·(d/2) + 1) become
    // stride-2 loads (dense loads and a shuffle), the parity select a blend of the
    // deinterleaved halves, and the store one dense vector. Splitting d into (pair,
    // parity) and unrolling parity left two stride-2 stores that Halide 14 could not merge
    // (the ShiftInwards clamp of the parity split and the token split's GuardWithIf `if`
    // sit between them when its interleaving pass runs), so each became 16 scalar stores:
    // 14.3 us instead of 3.5 us. Two vectors per step: one vector of output is only half a
    // vector of each deinterleaved half (4.2 us instead of 3.5 us).
    y.specialize(head_dim >= 2 * vec).vectorize(d, 2 * vec, TailStrategy::ShiftInwards);
    y.specialize(head_dim >= vec).vectorize(d, vec, TailStrategy::ShiftInwards);
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
