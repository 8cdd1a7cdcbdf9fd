#include "ops/int4_gemm.h"

namespace npukit::schedules::cpu {

using namespace Halide;

// Tasks of a channel tile over every row: a tile's packed weights (K/2 bytes per channel)
// stream from DRAM once for the first row and serve the others from L2. Within a row the
// tile's fp32 sums stay in registers over the groups, and each group's sums are built in
// registers from 64-byte loads of the packed bytes (16 channels × 8 k): the nibbles are
// split with a mask and a shift, never widened in memory.
void schedule_int4_gemm(ops::Int4Gemm& op, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  const int lanes = ops::kInt4Lanes;
  // int8: two channel blocks per tile (their int16 sums take 4 ymm on avx2, the fp32 ones 4
  // more). float: one, whose 4 lane sums per channel already take 8 ymm.
  const int blocks = op.int8 ? 2 : 1;
  Var no{"no"}, ni{"ni"};
  Var c = op.c, nb = op.nb, j = op.j, m = op.m;
  op.out.split(op.n, no, ni, lanes * blocks, TailStrategy::GuardWithIf)
      .reorder(ni, m, no)
      .vectorize(ni, vec)
      .parallel(no);
  // A tile's values of `f` in registers at `at`: its channels' lanes (and `j` pairs or lanes
  // of k, when given, vectorized with them), its blocks unrolled.
  auto in_registers = [&](Func f, const Func& consumer, const RVar& at, int j_extent) {
    f.compute_at(consumer, at).bound_extent(c, lanes).bound_extent(nb, blocks).store_in(MemoryType::Register);
    if (j_extent > 0) {
      f.bound_extent(j, j_extent).vectorize(j).vectorize(c).unroll(nb);
    } else {
      f.vectorize(c, vec).unroll(c).unroll(nb);
    }
  };
  op.acc.compute_at(op.out, m)
      .bound_extent(c, lanes)
      .bound_extent(nb, blocks)
      .store_in(MemoryType::Register)
      .vectorize(c, vec)
      .unroll(c)
      .unroll(nb);
  op.acc.update().reorder(c, nb, op.groups.x).vectorize(c, vec).unroll(c).unroll(nb);
  if (op.dot4) {
    // Each 64-byte load of a block (16 channels × 4 bytes) gives two vpdpbusd, its low and
    // its high nibbles against a broadcast 4 bytes of a.
    op.a_sums.compute_root();
    in_registers(op.group_sums, op.acc, op.groups.x, 0);
    op.group_sums.update()
        .reorder(op.r.x, c, nb, op.r.y, op.r.z)
        .atomic()
        .vectorize(op.r.x)
        .vectorize(c)
        .unroll(nb)
        .unroll(op.r.y);
  } else if (op.int8) {
    op.a_sums.compute_root();
    in_registers(op.group_sums, op.acc, op.groups.x, 0);
    op.group_sums.update().reorder(c, nb, op.subs.x).vectorize(c, vec).unroll(c).unroll(nb);
    // The pair element innermost and atomic: the vector reduction pmaddubsw computes.
    in_registers(op.sub_sums, op.group_sums, op.subs.x, 2);
    op.sub_sums.update()
        .reorder(op.r.x, j, c, nb, op.r.y, op.r.z)
        .atomic(true)  // saturating_add is not one Halide 14 proves associative; it never saturates here
        .vectorize(op.r.x)
        .vectorize(j)
        .vectorize(c)
        .unroll(nb)
        .unroll(op.r.y)
        .unroll(op.r.z);
  } else {
    in_registers(op.lane_sums, op.acc, op.groups.x, 4);
    op.lane_sums.update().reorder(j, c, nb, op.r.x, op.r.y).vectorize(j).vectorize(c).unroll(nb).unroll(op.r.x);
  }
}

}  // namespace npukit::schedules::cpu
