// Rotary position embedding as a pure Halide algorithm, in two pieces so that the
// attention operator can rotate q and k inside its own pipeline without copying code:
// rope_angles() makes the (cos, sin) table of a positions Func, apply_rope() rotates any
// fp32 Func of (dim, head, token) with it.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// Which dims form pair i: interleaved (2i, 2i+1), GPT-J / Meta Llama; half
// (i, i + rotary_dim/2), GPT-NeoX / Hugging Face Llama.
enum class RopeStyle { interleaved, half };

struct RopeAngles {
  Halide::Var i{"i"}, t{"t"};
  Halide::Func inv_freq{"inv_freq"};  // (i): theta^(-2i/rotary_dim), fp64
  Halide::Func cos_sin{"cos_sin"};    // (i, t): Tuple(cos, sin) of positions(t)·inv_freq(i), fp32
};

// `positions(t)` is any integer Func. Defined for every i ≥ 0 (pairs past rotary_dim/2
// are harmless numbers), so that vector loads of the table need no clamp.
RopeAngles rope_angles(Halide::Func positions, Halide::Expr theta, Halide::Expr rotary_dim);

struct Rope {
  Halide::Var d{"d"}, h{"h"}, t{"t"};
  Halide::RDom r;                 // the half style's pairs, [0, rotary_dim/2)
  Halide::Func out{"rope"};       // (d, h, t), fp32
};

// The half style when rotary_dim = head_dim, on a view of each row as two halves:
// x(i, j, h, t) = row[j·half + i]. Pairs (i, i + half) become (x(i, 0), x(i, 1)): dense
// vectors, no copy or update pass. rotary_dim is 2·half.
Halide::Func apply_rope_half_rows(Halide::Func x, const RopeAngles& angles);

// Rotates `x(d, h, t)` (fp32) in pairs for d < rotary_dim and copies the rest. The
// interleaved style needs an even head_dim (it reads x in whole pairs up to head_dim).
Rope apply_rope(Halide::Func x, const RopeAngles& angles, RopeStyle style, Halide::Expr rotary_dim);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/rope.cpp, schedules/gpu/rope.cpp);
// the Generator (ops/rope_generator.cpp) applies the one of its target.
namespace npukit::schedules::cpu {
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Halide::Func x_f32, bool widened,
                   Halide::Func y, ops::RopeStyle style, Halide::Expr head_dim, const Halide::Target& target);
void schedule_rope_half_rows(ops::RopeAngles& angles, Halide::Func y, Halide::Expr half,
                             const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Halide::Func x_f32, bool widened,
                   Halide::Func y, ops::RopeStyle style, Halide::Expr head_dim, const Halide::Target& target);
void schedule_rope_half_rows(ops::RopeAngles& angles, Halide::Func y, Halide::Expr half,
                             const Halide::Target& target);
}  // namespace npukit::schedules::gpu
