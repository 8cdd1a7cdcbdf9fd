#pragma once

#include "Halide.h"
#include "ops/silu_mul.h"

namespace npukit::schedules::gpu {

// Elementwise: blocks of 256 adjacent outputs of one token, one thread each (coalesced
// loads of the gate half and of the up half).
void schedule_silu_mul(ops::SiluMul& op, const Halide::Target& target);

}  // namespace npukit::schedules::gpu
