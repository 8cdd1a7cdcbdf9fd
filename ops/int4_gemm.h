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

// One version of the per-group sums and their scaled total, for one row of `a` at a time or
// for a block of rows that shares each unpacked tile of weights (the CPU's prefill).
struct Int4Sums {
  // int8: the (pair element, nibble half, k block) of one 32-k sub-group; dot4: (byte,
  // nibble half, k block) of one group. float: (nibble half, k block) of one group.
  Halide::RDom r;
  Halide::RDom subs;  // int8: the 32-k sub-groups of a group
  // int8: (j, c, nb, t, m) int16 sums of a · u over sub-group t, u the unsigned nibble, for
  // k ≡ 2j, 2j + 1 (mod 4) of the 4-byte lanes (two int16 lanes per channel).
  Halide::Func sub_sums;
  // float: (j, c, nb, g, m) fp32 sums of a · (q − zp) over group g for k ≡ j (mod 4).
  Halide::Func lane_sums;
  // float from bytes (GPU): (j, c, nb, g) channel 16·nb + c's zero point of group g as int8,
  // repeated over the 4 lanes j of k: q − zp is then one int8 subtraction of the bytes.
  Halide::Func zp_lanes;
  // float from words (CPU): (e, c, nb, g) 2^(23 − 4e) + zp in fp32, e = 0 … 4: what takes the
  // exponent's bias out of a nibble that sits at bit 4e under an exponent of 2^(23 − 4e).
  Halide::Func zp_biased;
  // (c, nb, g, m): group g's sum of a · (q − zp) for channel 16·nb + c: exact int32 (int8),
  // fp32 (float).
  Halide::Func group_sums;
  Halide::Func acc;  // (c, nb, m): Σ_g s · group_sums in fp32, groups in order
};

struct Int4Gemm {
  Halide::Var j{"j"}, c{"c"}, nb{"nb"}, g{"g"}, t{"t"}, m{"m"}, n{"n"};
  Halide::Type a_type;
  bool int8() const { return a_type == Halide::Int(8); }
  // int8 on a target with vpdpbusd (Halide 14's sapphirerapids feature): each group's sum
  // is one int32 reduction of 4-k dot products (Int4Sums::r is (byte, nibble half, k block
  // of the group)), no int16 sub-sums: a 32-bit lane's four low (or high) nibbles are four
  // consecutive k, unsigned, against four int8 activations, which is vpdpbusd's u8 × s8.
  bool dot4 = false;
  // float a with the packed weights given as 32-bit words (the CPU's float kernels): each
  // nibble becomes fp32 q − zp with a mask, an OR and one subtraction, no int-to-float
  // conversion; the same sums, in the same order, as from the bytes (GPU).
  bool words = false;
  Halide::RDom groups;  // (g): the groups of K, in k order
  // int8: (g, m) Σ_{k in g} a, for the zero points' share.
  Halide::Func a_sums{"a_group_sums"};
  // float: (k, m) a in fp32 (the CPU widens fp16 a once, not once per k block).
  Halide::Func a_f32{"a_f32"};
  Int4Sums row;  // one row at a time: decode, M < block_rows, and every M where block_rows is 1
  // Where block_rows > 1 (the CPU's prefill): the same sums for block_rows rows at once,
  // taken where `use_rows`; a block past M repeats a's last row and is not stored.
  Int4Sums rows;
  int block_rows = 1;
  // M ≥ block_rows: the one condition the output's select takes and the CPU schedule
  // specializes on (Halide drops the version a branch does not take only when they match).
  Halide::Expr use_rows;
  Halide::Func out{"int4_gemm"};  // (n, m): acc (times a_scales[m] for int8), in the output type
};

// `a(k, m)`: activations (int8, or any float type), readable for k < groups · group (zero past
// K); `w(j, c, kb, nb)`: packed bytes, byte j of channel 16·nb + c in k block kb holds
// k = 8·kb + j in its low nibble and 8·kb + 4 + j in its high one (for float a, `w_words(c,
// kb, nb)` may give the same bytes as little-endian int32 words instead, w then undefined);
// `scales(c, g, nb)` fp32; `zero_points(c, g, nb)` uint8; `a_scales(m)` fp32 (int8 only).
// `nibble_xor` is applied to each byte first: 0x88 turns two's complement nibbles into q + 8,
// which with zero points of 8 is the symmetric case. `group` is a multiple of kInt4SubGroup;
// `n_groups` groups in all. `M` rows; `block_rows` > 1 adds the block version
// (Int4Gemm::rows), and every read of `a` is then clamped to row M − 1.
Int4Gemm define_int4_gemm(Halide::Func a, Halide::Type a_type, Halide::Func w, Halide::Func w_words,
                          Halide::Func scales, Halide::Func zero_points, Halide::Func a_scales,
                          Halide::Expr nibble_xor, Halide::Expr group, Halide::Expr n_groups, Halide::Expr M,
                          int block_rows, Halide::Type out_type, const Halide::Target& target);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/int4_gemm.cpp,
// schedules/gpu/int4_gemm.cpp); the Generator (below) applies the one
// of its target.
namespace npukit::schedules::cpu {
// Rows per block of the prefill version on `target` (1: none).
int int4_block_rows(const Halide::Target& target);
// `w`: the packed weights, which the float kernels' decode version prefetches.
void schedule_int4_gemm(ops::Int4Gemm& op, const Halide::Target& target, const Halide::ImageParam& w);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_int4_gemm(ops::Int4Gemm& op, const Halide::Target& target);
}  // namespace npukit::schedules::gpu

// ---- Section NPUKIT_ALGORITHM_int4_gemm: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_int4_gemm

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

namespace {

// The sums of `op` for the rows `a` gives, their Funcs named with `suffix`.
Int4Sums define_sums(const Int4Gemm& op, Func a, Func w, Func w_words, Func scales, Func zero_points, Expr nibble_xor,
                     Expr group, const std::string& suffix) {
  Int4Sums s;
  s.sub_sums = Func("sub_sums" + suffix);
  s.lane_sums = Func("lane_sums" + suffix);
  s.zp_lanes = Func("zp_lanes" + suffix);
  s.zp_biased = Func("zp_biased" + suffix);
  s.group_sums = Func("group_sums" + suffix);
  s.acc = Func("acc" + suffix);
  Var j = op.j, c = op.c, nb = op.nb, g = op.g, t = op.t, m = op.m;
  // The unsigned nibble u of byte j, channel c, k block kb: half 0 is the low nibble. With
  // zero points, q − zp = u − zp; without, nibble_xor = 0x88 makes u = q + 8, and zp = 8.
  auto nibble = [&](Expr jj, Expr half, Expr cc, Expr kb, Expr nbb) {
    Expr byte = w(jj, cc, kb, nbb) ^ nibble_xor;
    return select(half == 0, byte & cast<uint8_t>(15), byte >> 4);
  };
  if (op.dot4) {
    s.r = RDom(0, 4, 0, 2, 0, group / 8, "r" + suffix);
    Expr kb = g * (group / 8) + s.r.z;
    Expr u = nibble(s.r.x, s.r.y, c, kb, nb);
    Expr x = a(8 * kb + 4 * s.r.y + s.r.x, m);
    // Σ a · u − zp · Σ a, exact in int32 as below.
    s.group_sums(c, nb, g, m) = -cast<int32_t>(zero_points(c, g, nb)) * op.a_sums(g, m);
    s.group_sums(c, nb, g, m) += cast<int32_t>(u) * cast<int32_t>(x);
  } else if (op.int8()) {
    constexpr int kBlocks = kInt4SubGroup / 8;  // k blocks of 8 (4 bytes) per sub-group
    s.r = RDom(0, 2, 0, 2, 0, kBlocks, "r" + suffix);
    Expr kb = t * kBlocks + s.r.z;
    Expr u = nibble(2 * j + s.r.x, s.r.y, c, kb, nb);
    Expr x = a(8 * kb + 4 * s.r.y + 2 * j + s.r.x, m);
    s.sub_sums(j, c, nb, t, m) = cast<int16_t>(0);
    // saturating_add of u8 × s8 pairs is what Halide 14 lowers to pmaddubsw (pairs summed to
    // int16). Nothing saturates: a pair is at most 2 · 15 · 128 = 3840 in magnitude, and a
    // lane's 16 products of a sub-group at most 30720.
    s.sub_sums(j, c, nb, t, m) = saturating_add(s.sub_sums(j, c, nb, t, m), widening_mul(u, x));
    Expr subs_per_group = group / kInt4SubGroup;
    s.subs = RDom(0, subs_per_group, "subs" + suffix);
    Expr st = g * subs_per_group + s.subs;
    // P = Σ a · u − zp · Σ a: every term is exact and so is the int32 total (|P| ≤ 245760).
    s.group_sums(c, nb, g, m) = -cast<int32_t>(zero_points(c, g, nb)) * op.a_sums(g, m);
    s.group_sums(c, nb, g, m) +=
        cast<int32_t>(s.sub_sums(0, c, nb, st, m)) + cast<int32_t>(s.sub_sums(1, c, nb, st, m));
  } else {
    // fp32 a · (q − zp), q − zp exact: an infinite a against d = 0 gives NaN, as IEEE says.
    s.r = RDom(0, 2, 0, group / 8, "r" + suffix);  // (nibble half, k block of the group)
    Expr kb = g * (group / 8) + s.r.y;
    Expr d;
    if (op.words) {
      // Byte j of a channel's word holds k = 8·kb + j at bit 8j and 8·kb + 4 + j at bit
      // 8j + 4. A nibble n at bit b ≤ 16 under the biased exponent 150 − b reads as the fp32
      // 2^(23 − b) + n; subtracting 2^(23 − b) + zp leaves n − zp exactly (integers below
      // 2^24). The nibbles above bit 16 are shifted down by 12 first (one shift for three).
      Var e("e");
      s.zp_biased(e, c, nb, g) = cast<float>(1 << (23 - 4 * e)) + cast<float>(zero_points(c, g, nb));
      Expr word = cast<uint32_t>(w_words(c, kb, nb)) ^ (cast<uint32_t>(nibble_xor) * cast<uint32_t>(0x01010101));
      Expr bit = 8 * j + 4 * s.r.x;
      Expr high = bit > 16;
      Expr from = select(high, word >> 12, word);
      Expr at = select(high, bit - 12, bit);
      Expr x = (from & (cast<uint32_t>(15) << cast<uint32_t>(at))) | (cast<uint32_t>(150 - at) << 23);
      // (The clamp only tells bounds inference what `at` is: j and the half are constants
      // in the schedule's unrolled loops.)
      d = reinterpret<float>(x) - s.zp_biased(clamp(at, 0, 16) / 4, c, nb, g);
    } else {
      // q − zp is in [−15, 15] (zero points above 15 are refused when bound or packed):
      // exact in int8, then in fp32.
      s.zp_lanes(j, c, nb, g) = cast<int8_t>(zero_points(c, g, nb));
      d = cast<float>(cast<int8_t>(nibble(j, s.r.x, c, kb, nb)) - s.zp_lanes(j, c, nb, g));
    }
    s.lane_sums(j, c, nb, g, m) = 0.0f;
    s.lane_sums(j, c, nb, g, m) += op.a_f32(8 * kb + 4 * s.r.x + j, m) * d;
    s.group_sums(c, nb, g, m) = (s.lane_sums(0, c, nb, g, m) + s.lane_sums(1, c, nb, g, m)) +
                                (s.lane_sums(2, c, nb, g, m) + s.lane_sums(3, c, nb, g, m));
  }
  s.acc(c, nb, m) = 0.0f;
  s.acc(c, nb, m) += scales(c, op.groups, nb) * cast<float>(s.group_sums(c, nb, op.groups, m));
  return s;
}

}  // namespace

Int4Gemm define_int4_gemm(Func a, Type a_type, Func w, Func w_words, Func scales, Func zero_points, Func a_scales,
                          Expr nibble_xor, Expr group, Expr n_groups, Expr M, int block_rows, Type out_type,
                          const Target& target) {
  Int4Gemm op;
  op.a_type = a_type;
  op.dot4 = op.int8() && target.has_feature(Target::AVX512_SapphireRapids);
  op.words = !op.int8() && w_words.defined();
  op.block_rows = block_rows;
  op.use_rows = M >= block_rows;
  Var g = op.g, m = op.m, n = op.n, k("k");
  // A block past M reads row M − 1 (its sums are computed and never stored).
  Func a_rows("a_rows");
  if (block_rows > 1) {
    a_rows(k, m) = a(k, min(m, M - 1));
  } else {
    a_rows = a;
  }
  op.groups = RDom(0, n_groups, "groups");
  if (op.int8()) {
    RDom rk(0, group, "rk");
    op.a_sums(g, m) = 0;
    op.a_sums(g, m) += cast<int32_t>(a_rows(g * group + rk, m));
  }
  if (!op.int8()) op.a_f32(k, m) = widen_to_f32(a_rows(k, m), target);
  op.row = define_sums(op, a_rows, w, w_words, scales, zero_points, nibble_xor, group, "");
  Expr v = op.row.acc(n % kInt4Lanes, n / kInt4Lanes, m);
  if (block_rows > 1) {
    op.rows = define_sums(op, a_rows, w, w_words, scales, zero_points, nibble_xor, group, "_rows");
    v = select(op.use_rows, op.rows.acc(n % kInt4Lanes, n / kInt4Lanes, m), v);
  }
  if (op.int8()) v = v * a_scales(m);
  op.out(n, m) = narrow_from_f32(v, out_type, target);
  return op;
}

}  // namespace npukit::ops

// The INT4-weight GEMM Generator (docs/ops/int4_gemm.md): activations of `a.type` (int8,
// float32, float16; OpenCL's fp16 as uint16 bits) against weights, scales and zero points in
// the blocked layout of layouts/int4_group.h, y of `y.type` (float32, float16).
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/prefetch.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class Int4GemmGenerator : public Halide::Generator<Int4GemmGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> a{"a"};                  // (k_pad, M), zero past K; GPU: (K, M)
  // uint8 (4, 16, k_pad / 8, n_pad / 16), or for the CPU's float kernels the same bytes as
  // int32 words (1, 16, k_pad / 8, n_pad / 16) (runtime/operators.cmake says which).
  Input<Halide::Buffer<void, 4>> w{"w"};
  Input<Halide::Buffer<float, 3>> scales{"scales"};       // (16, groups, n_pad / 16)
  Input<Halide::Buffer<uint8_t, 3>> zero_points{"zero_points"};  // (16, groups, n_pad / 16)
  Input<Halide::Buffer<float, 1>> a_scales{"a_scales"};   // (M): int8 a only
  Input<uint8_t> nibble_xor{"nibble_xor"};
  Input<int32_t> group{"group"};
  Output<Halide::Buffer<void, 2>> y{"y"};                 // (N, M)

  void generate() {
    const Halide::Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(a, w, scales, zero_points, a_scales);
    const int lanes = ops::kInt4Lanes;
    const bool words = w.type() == Halide::Int(32);
    _halide_user_assert(words ? !schedules::gpu::is_gpu(target) && a.type() != Halide::Int(8)
                              : w.type() == Halide::UInt(8))
        << "npukit_int4_gemm: w is uint8, or int32 words for the CPU's float kernels (w.type " << w.type() << ")\n";
    w.dim(0).set_extent(words ? 1 : 4);
    w.dim(1).set_extent(lanes).set_stride(words ? 1 : 4);
    scales.dim(0).set_extent(lanes);
    zero_points.dim(0).set_extent(lanes);
    // The CPU kernels read `a` padded with zeros to whole groups by the caller. The GPU
    // kernels take it as the caller holds it (a framework's device tensor, which npukit cannot
    // pad without a copy) and read zeros past K themselves.
    Halide::Func a_in = a;
    if (schedules::gpu::is_gpu(target)) {
      a_in = Halide::BoundaryConditions::constant_exterior(a, Halide::cast(a.type(), 0));
    }
    const int block_rows =
        schedules::gpu::is_gpu(target) ? 1 : schedules::cpu::int4_block_rows(target);
    Halide::Func bytes, w_words;
    if (words) {
      Halide::Var c, kb, nb;
      w_words(c, kb, nb) = w(0, c, kb, nb);
    } else {
      bytes = w;
    }
    ops::Int4Gemm op = ops::define_int4_gemm(a_in, a.type(), bytes, w_words, scales, zero_points, a_scales,
                                             nibble_xor, group, scales.dim(1).extent(), a.dim(1).extent(),
                                             block_rows, y.type(), target);
    y = op.out;
    ops::set_mins_to_zero(y);
    if (schedules::gpu::is_gpu(target)) {
      schedules::gpu::schedule_int4_gemm(op, target);
    } else {
      // The float kernels prefetch their packed words into L2.
      if (words) ops::add_prefetch_bitcode(*get_externs_map(), target, ops::PrefetchLevel::l2);
      schedules::cpu::schedule_int4_gemm(op, target, Halide::ImageParam(w));
    }
  }

  void schedule() { ops::add_prefetch_line_steps(get_pipeline()); }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::Int4GemmGenerator, npukit_int4_gemm)

#endif  // NPUKIT_ALGORITHM_int4_gemm
