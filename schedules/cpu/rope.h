#pragma once

#include "Halide.h"
#include "ops/rope.h"

namespace npukit::schedules::cpu {

// Tokens in parallel; per token the (cos, sin) table in fp64 vectors, then every head
// rotated in fp32 vectors while the token's rows are in L1.
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Halide::Func y, ops::RopeStyle style,
                   Halide::Expr head_dim, const Halide::Target& target);

}  // namespace npukit::schedules::cpu
