#include "schedules/gpu/int8_gemm.h"

namespace npukit::schedules::gpu {

using namespace Halide;

namespace {
constexpr int kLanes = 16;    // channels per packed block (layouts::PackedInt8Weights)
constexpr int kSlices = 16;   // decode: K slices per block → 256 threads
constexpr int kTileN = 64, kTileM = 32;  // prefill: block tile
constexpr int kRegN = 4, kRegM = 4;      // prefill: accumulators per thread
constexpr int kChunk = 8;                // prefill: groups of 4 k per staged chunk (32 k)
}  // namespace

bool use_dp4a(const Target& target) {
  return target.has_feature(Target::CUDA) && target.get_cuda_capability_lower_bound() >= 61;
}

// The 4 k of one group: dp4a where there is one, else unrolled products.
static void group_of_four(Stage s, RVar kx, const Target& target) {
  if (use_dp4a(target)) {
    s.atomic().vectorize(kx);
  } else {
    s.unroll(kx);
  }
}

void schedule_int8_gemm_acc(ops::Int8GemmAcc& g, GemmShape shape, const Target& target) {
  Var n = g.n, m = g.m, no("no"), ni("ni"), mo("mo"), mi("mi"), u("u");
  RVar kx = g.k.x, ky = g.k.y, kyo("kyo"), kyi("kyi");
  const TailStrategy guard = TailStrategy::GuardWithIf;
  if (shape == GemmShape::decode) {
    g.acc.split(n, no, ni, kLanes, guard).reorder(ni, no, m).gpu_blocks(no, m).gpu_threads(ni);
    // Slice u of the block takes groups kyo · kSlices + u: neighbouring threads read
    // neighbouring 64-byte groups.
    Func part = g.dot.update().split(ky, kyo, kyi, kSlices, guard).rfactor(kyi, u);
    // Whole channel blocks (the packed weights are padded to them): constant-size shared
    // arrays.
    part.compute_at(g.acc, no).bound_extent(n, kLanes).store_in(MemoryType::GPUShared).gpu_threads(n, u);
    Stage pu = part.update();
    pu.reorder(kx, kyo, n, u).gpu_threads(n, u);
    group_of_four(pu, kx, target);
    // kSlices adds per channel: small next to the K / 4 / kSlices dot steps before it.
    g.dot.compute_at(g.acc, no).bound_extent(n, kLanes).store_in(MemoryType::GPUShared).gpu_threads(n);
    g.dot.update().gpu_threads(n);
    return;
  }
  Var nt("nt"), mt("mt"), nr("nr"), mr("mr");
  g.acc.tile(n, m, no, mo, ni, mi, kTileN, kTileM, guard)
      .tile(ni, mi, nt, mt, nr, mr, kRegN, kRegM, guard)
      .reorder(nr, mr, nt, mt, no, mo)
      .gpu_blocks(no, mo)
      .gpu_threads(nt, mt)
      .unroll(nr)
      .unroll(mr);
  // Computed at the block (the K chunks' staging is shared by its threads), each thread
  // accumulating its own 4 × 4 slice. In shared memory: Halide 14 does not slice a
  // block-level MemoryType::Register allocation per thread here (the PTX kept all 64 × 32
  // int32 in local memory, 8 KB per thread).
  g.dot.compute_at(g.acc, no)
      .bound_extent(n, kTileN)
      .bound_extent(m, kTileM)
      .store_in(MemoryType::GPUShared)
      .split(n, nt, nr, kRegN)
      .split(m, mt, mr, kRegM)
      .reorder(nr, mr, nt, mt)
      .gpu_threads(nt, mt)
      .unroll(nr)
      .unroll(mr);
  Stage du = g.dot.update();
  du.split(ky, kyo, kyi, kChunk, guard)
      .split(n, nt, nr, kRegN)
      .split(m, mt, mr, kRegM)
      .reorder(kx, nr, mr, kyi, nt, mt, kyo)
      .gpu_threads(nt, mt)
      .unroll(nr)
      .unroll(mr);
  group_of_four(du, kx, target);
  // The chunk's tiles in shared memory, loaded by the block's threads in 4-byte words:
  // a: 32 k × 32 rows, w: 4 k × 16 lanes × 8 groups × 4 channel blocks.
  Var ak = g.a.args()[0], am = g.a.args()[1], ako("ako"), aki("aki"), ams("ams"), amt("amt");
  g.a.in(g.dot)
      .compute_at(g.dot, kyo)
      .store_in(MemoryType::GPUShared)
      .split(ak, ako, aki, 4)
      .split(am, ams, amt, kTileM / kRegM)
      .reorder(aki, ams, ako, amt)
      .vectorize(aki)
      .gpu_threads(ako, amt);
  std::vector<Var> wv = g.w_packed.args();
  g.w_packed.in(g.dot)
      .compute_at(g.dot, kyo)
      .store_in(MemoryType::GPUShared)
      .reorder(wv[0], wv[3], wv[1], wv[2])
      .vectorize(wv[0])
      .gpu_threads(wv[1], wv[2]);
}

void schedule_int8_epilogue(Func out, const Target& target) {
  Var n = out.args()[0], m = out.args()[1], no("no"), mo("mo"), ni("ni"), mi("mi");
  out.gpu_tile(n, m, no, mo, ni, mi, 64, 4, TailStrategy::GuardWithIf);
  (void)target;
}

}  // namespace npukit::schedules::gpu
