#include "ops/silu_mul.h"

namespace npukit::schedules::cpu {

using namespace Halide;

// Chunks of 2048 outputs of a token as tasks, so that a decode step (one token, an FFN
// width of 11008 or 14336) still spreads over the cores; vectors within a chunk, four
// natural vectors per step: each vector's silu is one long dependency chain (its exp, then
// a division), and four independent chains side by side keep the FP pipes busy where the
// out-of-order window alone held about three (Zen 4, hot [1, 11008]: fp32 3.3 -> 3.1 us,
// fp16 5.3 -> 4.5 us against one vector per step).
void schedule_silu_mul(ops::SiluMul& op, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var fo{"fo"}, fi{"fi"}, task{"task"};
  // 2048 outputs read 16 KiB of fp32 gate‖up: a task long enough to amortize the thread
  // pool's overhead, short enough that 14336 gives seven of them.
  op.out.split(op.f, fo, fi, 2048, TailStrategy::GuardWithIf)
      .vectorize(fi, 4 * vec)
      .fuse(fo, op.t, task)
      .parallel(task);
}

}  // namespace npukit::schedules::cpu
