#include "schedules/cpu/int8_gemm_amx.h"

#include "ops/amx_fuse_k.h"
#include "ops/amx_jam.h"
#include "ops/amx_prefetch_next.h"
#include "ops/amx_zero_apart.h"

namespace npukit::schedules::cpu {

using namespace Halide;

namespace {

constexpr int kRows = kAmxTileRows, kLanes = 16;  // 16 channels of int32: one 64-byte tile row
constexpr int kSteps = 16;                        // K = 4 steps fused into one 64-byte step
constexpr int kAmxRowBlock = 256;                 // 1 MiB of activations at K = 4096: half of L2
constexpr int kTilesPerTask = kAmxTaskChannels / kLanes;  // AmxJam zips the pair

// The 16 × 16 tiles of `out` (n, m) at its loop `tn`, in an AMX register each; K in 64-byte
// steps, 16 of Halide 14's 4-byte ones unrolled for AmxFuseK. k_pad is a whole number of
// 64-byte steps (the generator requires it), so no K tail.
void schedule_dot(ops::Int8GemmAccAmx& g, Func out, const Var& tn) {
  const Var n = g.n, m = g.m;
  Var zn{"zn"}, zm{"zm"};
  g.dot.compute_at(out, tn)
      .store_in(MemoryType::AMXTile)
      .tile(n, m, zn, zm, kLanes, kRows, TailStrategy::RoundUp)
      .vectorize(zn)
      .vectorize(zm);
  RVar kg{"kg"}, kk{"kk"}, kgo{"kgo"}, kgi{"kgi"};
  Var un{"un"}, um{"um"};
  g.dot.update()
      .tile(n, m, un, um, kLanes, kRows, TailStrategy::GuardWithIf)
      .split(g.k.x, kg, kk, 4)
      .split(kg, kgo, kgi, kSteps, TailStrategy::GuardWithIf)
      .reorder(kk, un, um, kgi, kgo, n, m)
      .atomic()
      .vectorize(kk)
      .vectorize(un)
      .vectorize(um)
      .unroll(kgi);
}

// Splits acc's loop over channel blocks `no` into `slabs` parallel tasks (`ns`), each a
// contiguous run of blocks (`nw`), so that the next block a thread reaches is the next in
// memory (whose weights AmxPrefetchNext fetches); a short or empty last slab is guarded.
void parallel_slabs(Func acc, const Var& no, const Var& ns, const Var& nw, const Expr& slabs) {
  const Expr blocks = (acc.output_buffer().dim(0).extent() + kAmxTaskChannels - 1) / kAmxTaskChannels;
  acc.split(no, ns, nw, max((blocks + slabs - 1) / slabs, 1), TailStrategy::GuardWithIf).parallel(ns);
}

// The zero-point pass's schedule: acc, per block of two channel tiles, subtracts the zero
// point's share from the block's tiles stored in a buffer. Channel blocks in `slabs`.
void schedule_through_buffer(ops::Int8GemmAccAmx& g, const Expr& slabs) {
  const Var n = g.n, m = g.m;
  Var no{"no"}, ni{"ni"}, ns{"ns"}, nw{"nw"};
  // acc: blocks of two 16-channel tiles (their weights, 2·K·16 bytes, stay in L2 for every
  // row tile); it subtracts the zero point's share from the stored tiles.
  g.acc.split(n, no, ni, kAmxTaskChannels, TailStrategy::GuardWithIf).reorder(ni, m, no).vectorize(ni, kLanes);
  parallel_slabs(g.acc, no, ns, nw, slabs);
  // Rows in blocks of kAmxRowBlock, each block over every channel block before the next: a
  // block's activations (row_block · K bytes) then stay in L2 across the channel blocks,
  // where a task over all of a tall `a` would stream it from L3 once per 32 channels.
  const Expr m_total = g.acc.output_buffer().dim(1).extent();
  Var mo{"mo"}, mi{"mi"};
  g.acc.specialize(m_total > kAmxRowBlock)
      .split(m, mo, mi, kAmxRowBlock, TailStrategy::ShiftInwards)
      .reorder(mi, nw, ns, mo);
  // The tiles in memory, every row of the block's 32 channels: ExtractTileOperations takes
  // only a plain copy out of the AMX register (tile_store), into rows that are not dense
  // (32 channels apart, a 2-D ramp), and the row tiles round up to 16 (the runtime pads the
  // rows of `a`; the weights' channels are padded to 64), so that no tail of acc reaches
  // the tile loops.
  Func tile = g.dot.in();
  Var tn{"tn"}, tm{"tm"}, tni{"tni"}, tmi{"tmi"}, tmo{"tmo"}, tmp{"tmp"};
  tile.compute_at(g.acc, nw)
      .bound_extent(n, kAmxTaskChannels)
      .tile(n, m, tn, tm, tni, tmi, kLanes, kRows, TailStrategy::RoundUp)
      .reorder(tni, tmi, tn, tm)
      .vectorize(tni)
      .vectorize(tmi);
  // Two row tiles at a time where there are two: ops::AmxJam zips the loops of the two
  // channel tiles (tn) and of the two row tiles (tmp) into one K loop with four accumulators.
  // An odd last row tile is computed twice (ShiftInwards): the tiles are plain stores.
  tile.specialize(m_total > kRows)
      .split(tm, tmo, tmp, 2, TailStrategy::ShiftInwards)
      .reorder(tni, tmi, tn, tmp, tmo);
  schedule_dot(g, tile, tn);
}

// The direct schedule (acc is dot): the same channel blocks, row blocks and tile pairs,
// with each tile stored straight into acc, whose channels are whole blocks (the generator
// constrains them) and whose rows are at least one tile. A last row tile, tile pair or row
// block shifted inwards stores the same values twice. Channel blocks in `slabs` (as the
// buffer schedule).
void schedule_direct(ops::Int8GemmAccAmx& g, const Expr& slabs) {
  const Var n = g.n, m = g.m;
  Var no{"no"}, ni{"ni"}, tn{"tn"}, tm{"tm"}, tni{"tni"}, tmi{"tmi"}, ns{"ns"}, nw{"nw"};
  g.acc.split(n, no, ni, kAmxTaskChannels, TailStrategy::RoundUp)
      .split(ni, tn, tni, kLanes)
      .split(m, tm, tmi, kRows, TailStrategy::ShiftInwards)
      .reorder(tni, tmi, tn, tm, no)
      .vectorize(tni)
      .vectorize(tmi);
  parallel_slabs(g.acc, no, ns, nw, slabs);
  const Expr m_total = g.acc.output_buffer().dim(1).extent();
  Var tmb{"tmb"}, tmr{"tmr"}, tmo{"tmo"}, tmp{"tmp"};
  g.acc.specialize(m_total > kAmxRowBlock)
      .split(tm, tmb, tmr, kAmxRowBlock / kRows, TailStrategy::ShiftInwards)
      .split(tmr, tmo, tmp, 2)
      .reorder(tni, tmi, tn, tmp, tmo, nw, ns, tmb);
  g.acc.specialize(m_total > kRows)
      .split(tm, tmo, tmp, 2, TailStrategy::ShiftInwards)
      .reorder(tni, tmi, tn, tmp, tmo, nw, ns);
  schedule_dot(g, g.acc, tn);
}

}  // namespace

void schedule_int8_gemm_acc_amx(ops::Int8GemmAccAmx& g, Pipeline pipeline, const std::string& weights,
                                const Expr& threads, bool direct) {
  // `threads` is the caller's: a value out of [1, 256] is clamped, and a wrong one costs
  // only balance.
  const Expr pool = clamp(threads, 1, 256);
  // Both kernels give each thread one slab of channel blocks instead of dealing the blocks
  // out in turn: on two threads of the Xeon with AMX the direct kernel 1.1-1.8x faster at
  // M = 128 and 512 (most at short K; session 35), the buffer kernel 1.04-1.4x (session 36);
  // one thread unchanged (docs/performance.md).
  if (direct) {
    schedule_direct(g, pool);
  } else {
    schedule_through_buffer(g, pool);
  }
  pipeline.add_custom_lowering_pass(new ops::AmxFuseK());
  pipeline.add_custom_lowering_pass(new ops::AmxJam());
  // The weights of the block this task reaches next: in a slab, the next block. (When the
  // threads took blocks in turn it was `threads` blocks on: on the Xeon with AMX 1 beat 2
  // on one thread by 4-10%, 2 beat 1 on two threads by 3-18%.)
  const Expr ahead = 1;
  pipeline.add_custom_lowering_pass(new ops::AmxPrefetchNext(weights, kTilesPerTask, ahead));
  pipeline.add_custom_lowering_pass(new ops::AmxZeroApart());
}

}  // namespace npukit::schedules::cpu
