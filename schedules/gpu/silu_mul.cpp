#include "schedules/gpu/silu_mul.h"

#include "schedules/gpu/gpu_target.h"

namespace npukit::schedules::gpu {

using namespace Halide;

void schedule_silu_mul(ops::SiluMul& op, const Target& target) {
  Var fo{"fo"}, fi{"fi"};
  op.out.split(op.f, fo, fi, block_threads(target), TailStrategy::GuardWithIf)
      .reorder(fi, fo, op.t)
      .gpu_blocks(fo, op.t)
      .gpu_threads(fi);
}

}  // namespace npukit::schedules::gpu
