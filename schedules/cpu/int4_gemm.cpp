#include "ops/int4_gemm.h"

namespace npukit::schedules::cpu {

using namespace Halide;

namespace {

// Channel blocks of 16 per task: int8 two (their int16 sums take 4 ymm on avx2, the fp32
// ones 4 more); float one, whose 4 lane sums per channel take 8 ymm (on AVX-512 two blocks
// measured slower: Zen 4, fp16 a, M = 1 766 -> 818 us, M = 128 43 -> 87 ms).
int channel_blocks(const ops::Int4Gemm& op) { return op.int8() ? 2 : 1; }

// One version's sums for `rows` rows at `at`: a tile's fp32 totals in registers over the
// groups, each group's sums built in registers from 64-byte loads of the packed bytes (16
// channels × 8 k), the nibbles split with a mask and a shift, never widened in memory.
// MemoryType::Register needs every access at a constant index, so a block's rows are all
// computed (bound_extent) and unrolled in every stage; the rows' copies of one unpacked
// vector are one value to LLVM, so each unpacking serves every row of the block.
void schedule_sums(const ops::Int4Gemm& op, ops::Int4Sums& s, const LoopLevel& at, int rows,
                   const Target& target) {
  const int vec = target.natural_vector_size<float>();
  const int lanes = ops::kInt4Lanes, blocks = channel_blocks(op);
  Var c = op.c, nb = op.nb, j = op.j, m = op.m;
  // A tile's values of `f` in registers at `f_at`: its channels' lanes (and `j` pairs or
  // lanes of k, when given, vectorized with them), its blocks and rows unrolled.
  auto in_registers = [&](Func f, const LoopLevel& f_at, int j_extent) {
    f.compute_at(f_at)
        .bound_extent(c, lanes)
        .bound_extent(nb, blocks)
        .bound_extent(m, rows)
        .store_in(MemoryType::Register)
        .unroll(m);
    if (j_extent > 0) {
      f.bound_extent(j, j_extent).vectorize(j).vectorize(c).unroll(nb);
    } else {
      f.vectorize(c, vec).unroll(c).unroll(nb);
    }
  };
  in_registers(s.acc, at, 0);
  s.acc.update().reorder(c, nb, m, op.groups.x).vectorize(c, vec).unroll(c).unroll(nb).unroll(m);
  if (op.dot4) {
    // Each 64-byte load of a block (16 channels × 4 bytes) gives two vpdpbusd per row, its
    // low and its high nibbles against a broadcast 4 bytes of a.
    in_registers(s.group_sums, LoopLevel(s.acc, op.groups.x), 0);
    s.group_sums.update()
        .reorder(s.r.x, c, nb, m, s.r.y, s.r.z)
        .atomic()
        .vectorize(s.r.x)
        .vectorize(c)
        .unroll(nb)
        .unroll(m)
        .unroll(s.r.y);
  } else if (op.int8()) {
    in_registers(s.group_sums, LoopLevel(s.acc, op.groups.x), 0);
    s.group_sums.update().reorder(c, nb, m, s.subs.x).vectorize(c, vec).unroll(c).unroll(nb).unroll(m);
    // The pair element innermost and atomic: the vector reduction pmaddubsw computes.
    in_registers(s.sub_sums, LoopLevel(s.group_sums, s.subs.x), 2);
    s.sub_sums.update()
        .reorder(s.r.x, j, c, nb, m, s.r.y, s.r.z)
        .atomic(true)  // saturating_add is not one Halide 14 proves associative; it never saturates here
        .vectorize(s.r.x)
        .vectorize(j)
        .vectorize(c)
        .unroll(nb)
        .unroll(m)
        .unroll(s.r.y)
        .unroll(s.r.z);
  } else {
    // Float a, from the packed bytes as words (Int4Gemm::words: the CPU's float kernels take
    // nothing else). Each 64-byte load is 16 channels' words of one k block; its 8 nibbles
    // become 8 vectors of fp32 q − zp (a mask and an OR, one shift for the top three, one
    // subtraction), each into the lane sum of its k mod 4 against a broadcast of a.
    _halide_user_assert(op.words) << "int4_gemm's CPU schedule reads float a's weights as words\n";
    in_registers(s.lane_sums, LoopLevel(s.acc, op.groups.x), 0);
    s.lane_sums.bound_extent(j, 4).reorder_storage(c, j, nb, op.g, m).unroll(j);
    s.lane_sums.update()
        .reorder(c, j, nb, m, s.r.x, s.r.y)
        .vectorize(c, vec)
        .unroll(c)
        .unroll(j)
        .unroll(nb)
        .unroll(m)
        .unroll(s.r.x);
    // The group's five biased zero points, one register each per block.
    Var e = s.zp_biased.args()[0];
    s.zp_biased.compute_at(s.acc, op.groups.x)
        .bound_extent(e, 5)
        .bound_extent(c, lanes)
        .bound_extent(nb, blocks)
        .reorder_storage(c, e, nb, op.g)
        .store_in(MemoryType::Register)
        .vectorize(c)
        .unroll(e)
        .unroll(nb);
  }
}

}  // namespace

// Prefill (M > 1) is compute-bound: one row at a time unpacks every tile's nibbles once per
// row, and with two channel blocks a row's group sums are only two vpdpbusd chains (Zen 4,
// M = 128, one thread: 0.55 of int8_gemm on the same shape). Blocks of 4 rows share each
// unpacking and run one chain per row and block: 0.93 (6 and 8 rows were no faster: 6 hold
// 24 of the 32 zmm in sums and totals, docs/performance.md). AVX2's 16 registers are taken
// by one row.
int int4_block_rows(const Target& target) { return target.natural_vector_size<float>() >= 16 ? 4 : 1; }

// Tasks of a channel tile over every row: a tile's packed weights (K/2 bytes per channel)
// stream from DRAM once for its first row (or block of rows) and serve the others from L2.
void schedule_int4_gemm(ops::Int4Gemm& op, const Target& target, const ImageParam& w) {
  const int vec = target.natural_vector_size<float>();
  const int rows = op.block_rows;
  const TailStrategy guard = TailStrategy::GuardWithIf;
  Var no{"no"}, ni{"ni"}, mo{"mo"}, mi{"mi"};
  op.out.split(op.n, no, ni, ops::kInt4Lanes * channel_blocks(op), guard);
  // The row version is computed at mi and the block version at mo; the default branch
  // splits m by 1 only so that both loops exist in both branches. Under the specialization
  // and its negation Halide simplifies the output's select (the same `use_rows`) and drops
  // the version not taken, whose bounds must still hold: a block past M reads row M − 1.
  if (rows > 1) {
    op.out.specialize(op.use_rows)
        .split(op.m, mo, mi, rows, guard)
        .reorder(ni, mi, mo, no)
        .vectorize(ni, vec)
        .parallel(no);
    schedule_sums(op, op.rows, LoopLevel(op.out, mo), rows, target);
  }
  op.out.split(op.m, mo, mi, 1).reorder(ni, mi, mo, no).vectorize(ni, vec).parallel(no);
  schedule_sums(op, op.row, LoopLevel(op.out, mi), 1, target);
  // Float a, one row at a time (decode): the packed words 4 KB on in the task's channel
  // block (16 channels × 16 words = 1 KB per group at group 128: four groups) prefetched
  // into L2 as each group starts. Each 64-byte line takes some 30 vector instructions to
  // unpack and multiply, so the loads of one task's stream stalled on DRAM: Intel Xeon with
  // AMX, M = 1, K = N = 4096, group 128, of read: one thread 0.41–0.55 -> 0.75–0.82
  // (session 37, two groups on), two 0.47–0.51 -> 0.69–0.70. Once the prefetch bitcode
  // fetched one line per call (it had fetched four from each row's line; session 38), four
  // groups on beat two on two threads, 641–666 -> 602–632 us (of read 0.58–0.64 ->
  // 0.60–0.67; eight groups 632–679 us), one thread the same (0.76–0.80). Not measured on
  // AMD.
  if (op.words) {
    constexpr int kAheadWords = 64;  // per channel along k: 4 KB of a 16-channel block
    const Expr group_words = w.dim(2).extent() / op.groups.x.extent();
    const Expr groups_ahead = max(1, kAheadWords / max(group_words, 1));
    op.row.acc.update().prefetch(w, op.groups.x, op.groups.x, groups_ahead, PrefetchBoundStrategy::NonFaulting);
  }
  if (op.int8()) op.a_sums.compute_root();
  // fp16 a widened once for the call (M · K · 4 bytes): each product's a is then a 4-byte
  // broadcast from memory within its FMA (with the bytes' schedule: widened in the loop,
  // LLVM converted a once per vector of lane sums; staged per k block, it built the
  // broadcasts with shuffles).
  if (op.a_type == Float(16)) {
    op.a_f32.compute_root().vectorize(op.a_f32.args()[0], vec, TailStrategy::GuardWithIf).parallel(op.m);
  }
}

}  // namespace npukit::schedules::cpu
