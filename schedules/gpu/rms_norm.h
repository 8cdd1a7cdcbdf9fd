#pragma once

#include "Halide.h"
#include "ops/rms_norm.h"

namespace npukit::schedules::gpu {

// One block per row: its threads stride across the row (adjacent threads, adjacent
// elements), the fp64 sum of squares is a three-level tree in shared memory (256 partial
// sums, then 16, then one), and the same threads then scale the row.
void schedule_rms_norm(ops::RmsNorm& op, Halide::Expr hidden, const Halide::Target& target);

}  // namespace npukit::schedules::gpu
