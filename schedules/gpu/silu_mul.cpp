#include "ops/silu_mul.h"

#include "schedules/gpu/gpu_target.h"

namespace npukit::schedules::gpu {

using namespace Halide;

// Elementwise: blocks of 256 adjacent outputs of one token, one thread each (coalesced
// loads of the gate half and of the up half).
void schedule_silu_mul(ops::SiluMul& op, const Target& target) {
  Var fo{"fo"}, fi{"fi"};
  op.out.split(op.f, fo, fi, block_threads(target), TailStrategy::GuardWithIf)
      .reorder(fi, fo, op.t)
      .gpu_blocks(fo, op.t)
      .gpu_threads(fi);
}

}  // namespace npukit::schedules::gpu
