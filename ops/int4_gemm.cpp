#include "ops/int4_gemm.h"

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

Int4Gemm define_int4_gemm(Func a, Type a_type, Func w, Func scales, Func zero_points, Func a_scales, Expr nibble_xor,
                          Expr group, Expr n_groups, Type out_type, const Target& target) {
  Int4Gemm op;
  op.int8 = a_type == Int(8);
  Var j = op.j, c = op.c, nb = op.nb, g = op.g, t = op.t, m = op.m, n = op.n;
  // The unsigned nibble u of byte j, channel c, k block kb: half 0 is the low nibble. With
  // zero points, q − zp = u − zp; without, nibble_xor = 0x88 makes u = q + 8, and zp = 8.
  auto nibble = [&](Expr jj, Expr half, Expr cc, Expr kb, Expr nbb) {
    Expr byte = w(jj, cc, kb, nbb) ^ nibble_xor;
    return select(half == 0, byte & cast<uint8_t>(15), byte >> 4);
  };
  op.groups = RDom(0, n_groups, "groups");
  if (op.int8) {
    RDom rk(0, group, "rk");
    op.a_sums(g, m) = 0;
    op.a_sums(g, m) += cast<int32_t>(a(g * group + rk, m));
    constexpr int kBlocks = kInt4SubGroup / 8;  // k blocks of 8 (4 bytes) per sub-group
    op.r = RDom(0, 2, 0, 2, 0, kBlocks, "r");
    Expr kb = t * kBlocks + op.r.z;
    Expr u = nibble(2 * j + op.r.x, op.r.y, c, kb, nb);
    Expr x = a(8 * kb + 4 * op.r.y + 2 * j + op.r.x, m);
    op.sub_sums(j, c, nb, t, m) = cast<int16_t>(0);
    // saturating_add of u8 × s8 pairs is what Halide 14 lowers to pmaddubsw (pairs summed to
    // int16). Nothing saturates: a pair is at most 2 · 15 · 128 = 3840 in magnitude, and a
    // lane's 16 products of a sub-group at most 30720.
    op.sub_sums(j, c, nb, t, m) = saturating_add(op.sub_sums(j, c, nb, t, m), widening_mul(u, x));
    Expr subs_per_group = group / kInt4SubGroup;
    op.subs = RDom(0, subs_per_group, "subs");
    Expr st = g * subs_per_group + op.subs;
    // P = Σ a · u − zp · Σ a: every term is exact and so is the int32 total (|P| ≤ 245760).
    op.group_sums(c, nb, g, m) = -cast<int32_t>(zero_points(c, g, nb)) * op.a_sums(g, m);
    op.group_sums(c, nb, g, m) +=
        cast<int32_t>(op.sub_sums(0, c, nb, st, m)) + cast<int32_t>(op.sub_sums(1, c, nb, st, m));
  } else {
    // fp32 a · (q − zp), q − zp exact: an infinite a against d = 0 gives NaN, as IEEE says.
    op.r = RDom(0, 2, 0, group / 8, "r");  // (nibble half, k block of the group)
    Expr kb = g * (group / 8) + op.r.y;
    Expr d = cast<int16_t>(nibble(j, op.r.x, c, kb, nb)) - cast<int16_t>(zero_points(c, g, nb));
    op.lane_sums(j, c, nb, g, m) = 0.0f;
    op.lane_sums(j, c, nb, g, m) += widen_to_f32(a(8 * kb + 4 * op.r.x + j, m), target) * cast<float>(d);
    op.group_sums(c, nb, g, m) = (op.lane_sums(0, c, nb, g, m) + op.lane_sums(1, c, nb, g, m)) +
                                 (op.lane_sums(2, c, nb, g, m) + op.lane_sums(3, c, nb, g, m));
  }
  op.acc(c, nb, m) = 0.0f;
  op.acc(c, nb, m) += scales(c, op.groups, nb) * cast<float>(op.group_sums(c, nb, op.groups, m));
  Expr v = op.acc(n % kInt4Lanes, n / kInt4Lanes, m);
  if (op.int8) v = v * a_scales(m);
  op.out(n, m) = narrow_from_f32(v, out_type, target);
  return op;
}

}  // namespace npukit::ops
