#include "ops/rope.h"

#include "schedules/gpu/gpu_target.h"

namespace npukit::schedules::gpu {

using namespace Halide;

namespace {

constexpr int kRowThreads = 32;  // one warp across a row: 128-byte fp32 loads
constexpr int kHeadsPerBlock = 8;

// The (cos, sin) table of the block's token, computed once per block by its threads.
void schedule_table(ops::RopeAngles& angles, Func y, const Var& block, const Target& target) {
  Var i = angles.i, io{"io"}, ii{"ii"};
  angles.cos_sin.compute_at(y, block)
      .split(i, io, ii, block_threads(target), TailStrategy::GuardWithIf)
      .reorder(io, ii)
      .gpu_threads(ii);
}

}  // namespace

// One block per token and group of 8 heads: first the token's (cos, sin) table in fp64 into
// shared memory (one entry per thread), then 32 threads across the row × 8 heads rotate in
// fp32. The half style stages the rotated rows in shared memory (its pairs are half a row
// apart), then stores them; the interleaved style rotates straight from the loads.
// Same arguments as schedules::cpu::schedule_rope (schedules/cpu/rope.cpp).
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Func, bool, Func y, ops::RopeStyle style, Expr,
                   const Target& target) {
  Var d = rope.d, h = rope.h, t = rope.t, dO{"dO"}, dI{"dI"}, hO{"hO"}, hI{"hI"};
  y.split(d, dO, dI, kRowThreads, TailStrategy::GuardWithIf)
      .split(h, hO, hI, kHeadsPerBlock, TailStrategy::GuardWithIf)
      .reorder(dO, dI, hI, hO, t)
      .gpu_blocks(hO, t)
      .gpu_threads(dI, hI);
  schedule_table(angles, y, hO, target);
  if (style == ops::RopeStyle::half) {
    // Each pair update writes out(r) and out(r + half) from x alone: distinct elements per
    // r, so the threads over r cannot race.
    Var rd = rope.out.args()[0], rh = rope.out.args()[1], ro{"ro"}, ri{"ri"};
    RVar rO{"rO"}, rI{"rI"};
    rope.out.compute_at(y, hO)
        .split(rd, ro, ri, kRowThreads, TailStrategy::GuardWithIf)
        .reorder(ro, ri, rh)
        .gpu_threads(ri, rh);
    for (int u = 0; u < 2; ++u) {
      rope.out.update(u)
          .allow_race_conditions()
          .split(rope.r, rO, rI, kRowThreads, TailStrategy::GuardWithIf)
          .reorder(rO, rI, rh)
          .gpu_threads(rI, rh);
    }
  }
}

// The half style on rows seen as two halves: the same blocks, both halves per thread.
void schedule_rope_half_rows(ops::RopeAngles& angles, Func y, Expr, const Target& target) {
  Var i = y.args()[0], j = y.args()[1], h = y.args()[2], t = y.args()[3], iO{"iO"}, iI{"iI"}, hO{"hO"}, hI{"hI"};
  y.bound(j, 0, 2)
      .split(i, iO, iI, kRowThreads, TailStrategy::GuardWithIf)
      .split(h, hO, hI, kHeadsPerBlock, TailStrategy::GuardWithIf)
      .reorder(j, iO, iI, hI, hO, t)
      .unroll(j)
      .gpu_blocks(hO, t)
      .gpu_threads(iI, hI);
  schedule_table(angles, y, hO, target);
}

}  // namespace npukit::schedules::gpu
