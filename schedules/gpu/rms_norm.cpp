#include "ops/rms_norm.h"

#include "schedules/gpu/gpu_target.h"

namespace npukit::schedules::gpu {

using namespace Halide;

// One block per row: its threads stride across the row (adjacent threads, adjacent
// elements), the fp64 sum of squares is a three-level tree in shared memory (256 partial
// sums, then 16, then one), and the same threads then scale the row.
void schedule_rms_norm(ops::RmsNorm& op, Expr, const Target& target) {
  const int threads = block_threads(target), fan_in = 16;
  Var h = op.h, row = op.row, ho{"ho"}, hi{"hi"}, u{"u"}, v{"v"};
  RVar ko{"ko"}, ki{"ki"}, kio{"kio"}, kii{"kii"};

  Func y = op.out;
  y.split(h, ho, hi, threads, TailStrategy::GuardWithIf).reorder(ho, hi, row).gpu_blocks(row).gpu_threads(hi);

  // Level 1: thread (v, u) sums the squares at k ≡ 16·v + u (mod 256), a coalesced
  // stride through the row. Level 2: 16 threads sum 16 partials each. Level 3: one
  // thread sums the last 16, and computes 1/rms for the whole block.
  Func level1 = op.sumsq.update()
                    .split(op.k, ko, ki, threads, TailStrategy::GuardWithIf)
                    .split(ki, kio, kii, fan_in)
                    .rfactor({{kio, v}, {kii, u}});
  level1.compute_at(y, row).gpu_threads(u, v);
  level1.update().gpu_threads(u, v);
  Func level2 = op.sumsq.update().rfactor(kii, u);
  level2.compute_at(y, row).gpu_threads(u);
  level2.update().gpu_threads(u);
  op.sumsq.compute_at(y, row);
  op.inv_rms.compute_at(y, row);
}

}  // namespace npukit::schedules::gpu
