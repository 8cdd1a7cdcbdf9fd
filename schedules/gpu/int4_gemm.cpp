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
  op.out.split(op.n, no, ni, kBlockChannels, guard).reorder(ni, no, op.m).gpu_blocks(no, op.m).gpu_threads(ni);
  op.acc.compute_at(op.out, ni);
  if (op.int8) {
    Var go("go"), gi("gi");
    op.a_sums.compute_root().split(op.g, go, gi, 16, guard).gpu_blocks(go, op.m).gpu_threads(gi);
    op.a_sums.update().split(op.g, go, gi, 16, guard).gpu_blocks(go, op.m).gpu_threads(gi);
    op.group_sums.compute_at(op.acc, op.groups.x);
    op.sub_sums.compute_at(op.group_sums, op.subs.x).bound_extent(op.j, 2).unroll(op.j);
    op.sub_sums.update().reorder(op.r.x, op.j, op.c, op.nb, op.r.y, op.r.z).unroll(op.r.x).unroll(op.j).unroll(op.r.y);
  } else {
    op.lane_sums.compute_at(op.acc, op.groups.x).bound_extent(op.j, 4).unroll(op.j);
    op.lane_sums.update().reorder(op.j, op.c, op.nb, op.r.x, op.r.y).unroll(op.j).unroll(op.r.x);
  }
}

}  // namespace npukit::schedules::gpu
