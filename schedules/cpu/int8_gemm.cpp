#include "schedules/cpu/int8_gemm.h"

#include <algorithm>

namespace npukit::schedules::cpu {

using namespace Halide;

bool sums_in_pairs(GemmShape shape, const Target& target) {
  return shape == GemmShape::prefill && !target.has_feature(Target::AVX512_SapphireRapids);
}

bool prefetches_weights(GemmShape shape) { return shape == GemmShape::prefill; }

namespace {

// The first row tile of a channel tile reads the tile's weight streams from DRAM, the
// others find them in L2; at small M that first pass is most of the call, and the hardware
// prefetchers alone left it stalled. One line of each stream is prefetched 64 groups
// (4 KB) ahead into L2 at every k step (one line per 16-channel block and step). Zen 4, one
// thread, M = 16: avx512_vnni 0.92–0.97 → 1.07–1.13 of oneDNN (2 KB ahead: no gain; 16 KB:
// less), the avx2 tier's kernel run there 4.6 → 4.1 ms, sse41's unchanged; M ≥ 128
// unchanged (the later tiles' prefetches hit L2). The decode GEMV, one row, got slower with
// it at any distance, so it keeps the hardware prefetchers alone. The test is the one the
// Generator links the prefetch bitcode by.
void prefetch_weights_ahead(GemmShape shape, Stage update, const ImageParam& w_packed, const RVar& k_groups) {
  const int groups_ahead = 64;
  if (prefetches_weights(shape)) {
    update.prefetch(w_packed, k_groups, k_groups, groups_ahead, PrefetchBoundStrategy::NonFaulting);
  }
}

// Tiles of R rows × one 16-channel block of the packed weights. Each step (a group of 4 k)
// loads the block's 64 bytes once as int16 vectors, broadcasts each row's 4 widened
// activations once, and does one pmaddwd + vpaddd per accumulator. Eight accumulator
// registers: on avx2, R = 2 (4 ymm per row) reached 135 GOPS on Zen 3 where R = 3 and 4
// spilled (53, 70) and 1 row × 2 blocks gave 124 (the staged a_wide: 90 without it).
void schedule_pairwise_prefill(ops::Int8GemmAcc& g, const Target& target, const ImageParam& w_packed) {
  Var n = g.n, m = g.m, no{"no"}, ni{"ni"}, mo{"mo"}, mi{"mi"};
  const int lanes = target.natural_vector_size<int32_t>();  // (j, c) pairs: lanes / 2 channels
  const int channels = lanes / 2, per_row = 16 / channels;
  const int rows = std::max(1, 8 / per_row);
  g.acc.split(n, no, ni, 16, TailStrategy::GuardWithIf)
      .split(m, mo, mi, rows, TailStrategy::GuardWithIf)
      .reorder(ni, mi, mo, no)
      .vectorize(ni, lanes)
      .parallel(no);
  // Once per call, every row: the per-tile alternative repeats it for every channel block.
  g.a_wide.compute_root().vectorize(g.kv, 16, TailStrategy::GuardWithIf).parallel(g.m);
  g.pairs.compute_at(g.acc, mo)
      .bound_extent(g.j, 2)
      .bound_extent(g.c, 16)
      .bound_extent(g.nb, 1)
      .bound_extent(m, rows)
      .store_in(MemoryType::Register)
      .vectorize(g.j)
      .vectorize(g.c, channels)
      .unroll(g.c)
      .unroll(m);
  g.pairs.update()
      .reorder(g.k.x, g.j, g.c, g.nb, m, g.k.y)
      .atomic()
      .vectorize(g.k.x)
      .vectorize(g.j)
      .vectorize(g.c, channels)
      .unroll(g.c)
      .unroll(g.nb)
      .unroll(m);
  prefetch_weights_ahead(GemmShape::prefill, g.pairs.update(), w_packed, g.k.y);
}

}  // namespace

void schedule_int8_gemm_acc(ops::Int8GemmAcc& g, GemmShape shape, const Target& target, const ImageParam& w_packed) {
  if (g.pairwise) {
    schedule_pairwise_prefill(g, target, w_packed);
    return;
  }
  Var n = g.n, m = g.m, no{"no"}, ni{"ni"}, mo{"mo"}, mi{"mi"};
  const int lanes = 16;  // int32 lanes of one zmm; the packed layout's channel block
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
        .split(m, mo, mi, kVnniTileRows, TailStrategy::GuardWithIf)
        .reorder(ni, mi, mo, no)
        .vectorize(ni, lanes)
        .parallel(no);
    // Registers, not a stack array: otherwise LLVM loads and stores every accumulator
    // around each vpdpbusd (it cannot prove the tile's addresses apart).
    // The padded weights and rows make whole tiles always readable.
    g.dot.compute_at(g.acc, mo)
        .bound_extent(n, 2 * lanes)
        .bound_extent(m, kVnniTileRows)
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
    prefetch_weights_ahead(shape, g.dot.update(), w_packed, g.k.y);
  }
}

}  // namespace npukit::schedules::cpu
