#include "schedules/cpu/int8_gemm.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void schedule_int8_gemm_acc(ops::Int8GemmAcc& g, GemmShape shape, const Target& target) {
  Var n = g.n, m = g.m, no{"no"}, ni{"ni"}, mo{"mo"}, mi{"mi"};
  const int lanes = 16;  // int32 lanes of one zmm; the packed layout's channel block
  (void)target;
  if (shape == GemmShape::decode) {
    g.acc.split(n, no, ni, 2 * lanes, TailStrategy::GuardWithIf).vectorize(ni, lanes).parallel(no);
    g.dot.compute_at(g.acc, no).vectorize(n, lanes);
    g.dot.update()
        .reorder(g.k.x, n, g.k.y, m)
        .atomic()
        .vectorize(g.k.x)
        .vectorize(n, lanes)
        .unroll(n);
  } else {
    // Rows inside the channel tile: each 32-channel weight block (K·32 bytes) streams from
    // DRAM once and then serves every row tile from L2, while 8 rows × 32 channels of
    // int32 stay in 16 zmm. 0.95–1.0 of oneDNN from M = 16 to 512 on one thread; tiles of
    // 4 rows × 64 channels with channel tiles inside rows reached 0.57–0.67.
    g.acc.split(n, no, ni, 2 * lanes, TailStrategy::GuardWithIf)
        .split(m, mo, mi, 8, TailStrategy::GuardWithIf)
        .reorder(ni, mi, mo, no)
        .vectorize(ni, lanes)
        .parallel(no);
    // Registers, not a stack array: otherwise LLVM loads and stores every accumulator
    // around each vpdpbusd (it cannot prove the tile's addresses apart).
    // The padded weights and rows make whole tiles always readable.
    g.dot.compute_at(g.acc, mo)
        .bound_extent(n, 2 * lanes)
        .bound_extent(m, 8)
        .store_in(MemoryType::Register)
        .vectorize(n, lanes)
        .unroll(m);
    g.dot.update()
        .reorder(g.k.x, n, m, g.k.y)
        .atomic()
        .vectorize(g.k.x)
        .vectorize(n, lanes)
        .unroll(n)
        .unroll(m);
  }
}

}  // namespace npukit::schedules::cpu
