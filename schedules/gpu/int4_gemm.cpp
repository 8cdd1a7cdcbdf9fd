#include "ops/int4_gemm.h"

namespace npukit::schedules::gpu {

using namespace Halide;

namespace {
// Output channels per block: four of the packed layout's 16-channel blocks. A thread's
// 4-byte word of a k block sits beside its neighbours', so a block's loads of one k block are
// four runs of 64 bytes.
constexpr int kBlockChannels = 64;
}  // namespace

// One thread per output element, its fp32 sums, group sums and int16 sub-sums in its own
// registers over the whole of K (the CPU kernels' arithmetic and order, per thread); a row
// of channels per block. The activations' group sums (int8) are a kernel of their own, one
// thread per group and row. Decode (M = 1, N = 4096) gives 4096 threads: enough for PoCL
// and the gate, far from filling a large GPU (no K split yet: docs/ops/int4_gemm.md).
void schedule_int4_gemm(ops::Int4Gemm& op, const Target&) {
  Var no("no"), ni("ni");
  const TailStrategy guard = TailStrategy::GuardWithIf;
  // A GPU runs the row version only, from the packed bytes (the Generator's choices).
  _halide_user_assert(op.block_rows == 1 && !op.words) << "int4_gemm's GPU schedule: one row at a time, from bytes\n";
  ops::Int4Sums& s = op.row;
  op.out.split(op.n, no, ni, kBlockChannels, guard).reorder(ni, no, op.m).gpu_blocks(no, op.m).gpu_threads(ni);
  s.acc.compute_at(op.out, ni);
  if (op.int8()) {
    Var go("go"), gi("gi");
    op.a_sums.compute_root().split(op.g, go, gi, 16, guard).gpu_blocks(go, op.m).gpu_threads(gi);
    op.a_sums.update().split(op.g, go, gi, 16, guard).gpu_blocks(go, op.m).gpu_threads(gi);
    s.group_sums.compute_at(s.acc, op.groups.x);
    s.sub_sums.compute_at(s.group_sums, s.subs.x).bound_extent(op.j, 2).unroll(op.j);
    s.sub_sums.update().reorder(s.r.x, op.j, op.c, op.nb, s.r.y, s.r.z).unroll(s.r.x).unroll(op.j).unroll(s.r.y);
  } else {
    s.lane_sums.compute_at(s.acc, op.groups.x).bound_extent(op.j, 4).unroll(op.j);
    s.lane_sums.update().reorder(op.j, op.c, op.nb, s.r.x, s.r.y).unroll(op.j).unroll(s.r.x);
  }
}

}  // namespace npukit::schedules::gpu
