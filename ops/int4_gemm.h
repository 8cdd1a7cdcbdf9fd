// INT4-weight GEMM as a pure Halide algorithm (docs/ops/int4_gemm.md): y = a · w'ᵀ with w' =
// s · (q − zp) per group of k, the weights in the blocked layout of layouts/int4_group.h.
// int8 activations sum each group exactly in integers; float ones in fp32. No scheduling
// here; schedules/<target>/int4_gemm.cpp does that.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// Channels per block of the packed weights, scales and zero points (layouts/int4_group.h).
inline constexpr int kInt4Lanes = 16;
// k per int16 sub-sum of the int8 path: 32 products of at most 15 · 128 in each pair of
// int16 lanes (16 per lane, |sum| ≤ 30720 < 2^15); G is a multiple of it.
inline constexpr int kInt4SubGroup = 32;

struct Int4Gemm {
  Halide::Var j{"j"}, c{"c"}, nb{"nb"}, g{"g"}, t{"t"}, m{"m"}, n{"n"};
  bool int8 = true;
  // int8: the (pair element, nibble half, k block) of one 32-k sub-group. float: (nibble
  // half, k block) of one group.
  Halide::RDom r;
  Halide::RDom groups;  // (g): the groups of K, in k order
  Halide::RDom subs;    // int8: the 32-k sub-groups of a group
  // int8: (g, m) Σ_{k in g} a, for the zero points' share.
  Halide::Func a_sums{"a_group_sums"};
  // int8: (j, c, nb, t, m) int16 sums of a · u over sub-group t, u the unsigned nibble, for
  // k ≡ 2j, 2j + 1 (mod 4) of the 4-byte lanes (two int16 lanes per channel).
  Halide::Func sub_sums{"sub_sums"};
  // float: (j, c, nb, g, m) fp32 sums of a · (q − zp) over group g for k ≡ j (mod 4).
  Halide::Func lane_sums{"lane_sums"};
  // (c, nb, g, m): group g's sum of a · (q − zp) for channel 16·nb + c: exact int32 (int8),
  // fp32 (float).
  Halide::Func group_sums{"group_sums"};
  Halide::Func acc{"acc"};      // (c, nb, m): Σ_g s · group_sums in fp32, groups in order
  Halide::Func out{"int4_gemm"};  // (n, m): acc (times a_scales[m] for int8), in the output type
};

// `a(k, m)`: activations (int8, or any float type), readable for k < groups · group (zero past
// K); `w(j, c, kb, nb)`: packed bytes, byte j of channel 16·nb + c in k block kb holds
// k = 8·kb + j in its low nibble and 8·kb + 4 + j in its high one; `scales(c, g, nb)` fp32;
// `zero_points(c, g, nb)` uint8; `a_scales(m)` fp32 (int8 only). `nibble_xor` is applied to
// each byte first: 0x88 turns two's complement nibbles into q + 8, which with zero points of 8
// is the symmetric case. `group` is a multiple of kInt4SubGroup; `n_groups` groups in all.
Int4Gemm define_int4_gemm(Halide::Func a, Halide::Type a_type, Halide::Func w, Halide::Func scales,
                          Halide::Func zero_points, Halide::Func a_scales, Halide::Expr nibble_xor, Halide::Expr group,
                          Halide::Expr n_groups, Halide::Type out_type, const Halide::Target& target);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/int4_gemm.cpp,
// schedules/gpu/int4_gemm.cpp); the Generator (ops/int4_gemm_generator.cpp) applies the one
// of its target.
namespace npukit::schedules::cpu {
void schedule_int4_gemm(ops::Int4Gemm& op, const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_int4_gemm(ops::Int4Gemm& op, const Halide::Target& target);
}  // namespace npukit::schedules::gpu
