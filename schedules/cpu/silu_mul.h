#pragma once

#include "Halide.h"
#include "ops/silu_mul.h"

namespace npukit::schedules::cpu {

// Chunks of 2048 outputs of a token as tasks, so that a decode step (one token, an FFN
// width of 11008 or 14336) still spreads over the cores; vectors within a chunk.
void schedule_silu_mul(ops::SiluMul& op, const Halide::Target& target);

}  // namespace npukit::schedules::cpu
