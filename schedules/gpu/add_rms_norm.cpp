#include "ops/add_rms_norm.h"

#include "schedules/gpu/gpu_target.h"

namespace npukit::schedules::gpu {

using namespace Halide;

// y as rms_norm's GPU schedule (one block per row, a three-level shared-memory tree for
// the fp64 sum of squares), recomputing x + residual where it reads it; the new residual
// as its own elementwise kernel. The runtime gives the two residual arguments separate
// device buffers (host tensors only), so the order of the two kernels does not matter.
void schedule_add_rms_norm(ops::AddRmsNorm& op, Expr, const Target& target) {
  const int threads = block_threads(target), fan_in = 16;
  Var h = op.norm.h, row = op.norm.row, ho{"ho"}, hi{"hi"}, u{"u"}, v{"v"};
  RVar ko{"ko"}, ki{"ki"}, kio{"kio"}, kii{"kii"};

  Func y = op.norm.out;
  y.split(h, ho, hi, threads, TailStrategy::GuardWithIf).reorder(ho, hi, row).gpu_blocks(row).gpu_threads(hi);
  op.residual_out.split(h, ho, hi, threads, TailStrategy::GuardWithIf)
      .reorder(hi, ho, row)
      .gpu_blocks(ho, row)
      .gpu_threads(hi);

  // op.sum stays inline: the sum of squares and the scaling each add the row's x and
  // residual again (from L2), which keeps shared memory to the tree's partial sums at any
  // hidden size.
  // rms_norm's three-level tree (schedules/gpu/rms_norm.cpp).
  Func level1 = op.norm.sumsq.update()
                    .split(op.norm.k, ko, ki, threads, TailStrategy::GuardWithIf)
                    .split(ki, kio, kii, fan_in)
                    .rfactor({{kio, v}, {kii, u}});
  level1.compute_at(y, row).gpu_threads(u, v);
  level1.update().gpu_threads(u, v);
  Func level2 = op.norm.sumsq.update().rfactor(kii, u);
  level2.compute_at(y, row).gpu_threads(u);
  level2.update().gpu_threads(u);
  op.norm.sumsq.compute_at(y, row);
  op.norm.inv_rms.compute_at(y, row);
}

}  // namespace npukit::schedules::gpu
