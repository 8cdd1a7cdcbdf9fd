#pragma once

#include "Halide.h"
#include "ops/rope.h"

namespace npukit::schedules::cpu {

// Tokens in parallel; per token the (cos, sin) table in fp64 vectors, then every head
// rotated in fp32 vectors while the token's rows are in L1.
// `x_f32` is the input widened to fp32. For fp16 storage and the interleaved style it is
// staged per block of two vectors, and so is the fp32 rotation, so that the pair shuffles
// work on fp32 vectors rather than on 16-bit lanes one at a time; the half style reads
// it in place.
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Halide::Func x_f32, bool widened,
                   Halide::Func y, ops::RopeStyle style, Halide::Expr head_dim, const Halide::Target& target);

// The half style on rows seen as two halves (ops::apply_rope_half_rows): tokens in
// parallel, the (cos, sin) table per token, both halves unrolled over dense vectors.
void schedule_rope_half_rows(ops::RopeAngles& angles, Halide::Func y, Halide::Expr half,
                             const Halide::Target& target);

}  // namespace npukit::schedules::cpu
