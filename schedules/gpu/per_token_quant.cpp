#include "schedules/gpu/per_token_quant.h"

#include "schedules/gpu/gpu_target.h"

namespace npukit::schedules::gpu {

using namespace Halide;

int quant_lanes(const Target& target) { return block_threads(target); }

void schedule_per_token_quant(ops::PerTokenQuant& p, const Target& target) {
  const int threads = block_threads(target);
  Var k = p.k, t = p.t, ko{"ko"}, ki{"ki"};
  p.scale.gpu_blocks(t);
  p.mag_bits.compute_at(p.scale, t);
  p.mag_part.compute_at(p.scale, t).gpu_threads(p.l);
  p.mag_part.update().gpu_threads(p.l);
  p.q.split(k, ko, ki, threads, TailStrategy::GuardWithIf).reorder(ki, ko, t).gpu_blocks(ko, t).gpu_threads(ki);
}

void schedule_dequantize_rows(Func y, const Target& target) {
  Var n = y.args()[0], t = y.args()[1], no{"no"}, ni{"ni"};
  y.split(n, no, ni, block_threads(target), TailStrategy::GuardWithIf)
      .reorder(ni, no, t)
      .gpu_blocks(no, t)
      .gpu_threads(ni);
}

}  // namespace npukit::schedules::gpu
