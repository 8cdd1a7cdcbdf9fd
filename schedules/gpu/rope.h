#pragma once

#include "Halide.h"
#include "ops/rope.h"

namespace npukit::schedules::gpu {

// One block per token and group of 8 heads: first the token's (cos, sin) table in fp64 into
// shared memory (one entry per thread), then 32 threads across the row × 8 heads rotate in
// fp32. The half style stages the rotated rows in shared memory (its pairs are half a row
// apart), then stores them; the interleaved style rotates straight from the loads.
// Same arguments as schedules::cpu::schedule_rope.
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Halide::Func x_f32, bool widened,
                   Halide::Func y, ops::RopeStyle style, Halide::Expr head_dim, const Halide::Target& target);

// The half style on rows seen as two halves: the same blocks, both halves per thread.
void schedule_rope_half_rows(ops::RopeAngles& angles, Halide::Func y, Halide::Expr half,
                             const Halide::Target& target);

}  // namespace npukit::schedules::gpu
