#include "schedules/cpu/int8_gemm_amx.h"

#include "ops/amx_fuse_k.h"
#include "ops/amx_jam.h"
#include "ops/amx_prefetch_next.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void schedule_int8_gemm_acc_amx(ops::Int8GemmAccAmx& g, Pipeline pipeline, const std::string& weights,
                                const Expr& threads) {
  const int rows = kAmxTileRows, lanes = 16;  // 16 channels of int32: one 64-byte tile row
  const int steps = 16;                       // K = 4 steps fused into one 64-byte step
  const int kAmxRowBlock = 256;               // 1 MiB of activations at K = 4096: half of L2
  const int tiles_per_task = 2;               // channel tiles per task (AmxJam zips the pair)
  Var n = g.n, m = g.m, no{"no"}, ni{"ni"};
  // acc: one task per block of two 16-channel tiles (their weights, 2·K·16 bytes, stay in L2
  // for every row tile); it subtracts the zero point's share from the stored tiles.
  g.acc.split(n, no, ni, tiles_per_task * lanes, TailStrategy::GuardWithIf)
      .reorder(ni, m, no)
      .vectorize(ni, lanes)
      .parallel(no);
  // Rows in blocks of kAmxRowBlock, each block over every channel block before the next: a
  // block's activations (row_block · K bytes) then stay in L2 across the channel blocks,
  // where a task over all of a tall `a` would stream it from L3 once per 32 channels.
  const Expr m_total = g.acc.output_buffer().dim(1).extent();
  Var mo{"mo"}, mi{"mi"};
  g.acc.specialize(m_total > kAmxRowBlock)
      .split(m, mo, mi, kAmxRowBlock, TailStrategy::ShiftInwards)
      .reorder(mi, no, mo);
  // The tiles in memory, every row of the block's 32 channels: ExtractTileOperations takes
  // only a plain copy out of the AMX register (tile_store), into rows that are not dense
  // (32 channels apart, a 2-D ramp), and the row tiles round up to 16 (the runtime pads the
  // rows of `a`; the weights' channels are padded to 64), so that no tail of acc reaches
  // the tile loops.
  Func tile = g.dot.in();
  Var tn{"tn"}, tm{"tm"}, tni{"tni"}, tmi{"tmi"}, tmo{"tmo"}, tmp{"tmp"};
  tile.compute_at(g.acc, no)
      .bound_extent(n, tiles_per_task * lanes)
      .tile(n, m, tn, tm, tni, tmi, lanes, rows, TailStrategy::RoundUp)
      .reorder(tni, tmi, tn, tm)
      .vectorize(tni)
      .vectorize(tmi);
  // Two row tiles at a time where there are two: ops::AmxJam zips the loops of the two
  // channel tiles (tn) and of the two row tiles (tmp) into one K loop with four accumulators.
  // An odd last row tile is computed twice (ShiftInwards): the tiles are plain stores.
  tile.specialize(m_total > rows)
      .split(tm, tmo, tmp, 2, TailStrategy::ShiftInwards)
      .reorder(tni, tmi, tn, tmp, tmo);
  Var zn{"zn"}, zm{"zm"};
  g.dot.compute_at(tile, tn)
      .store_in(MemoryType::AMXTile)
      .tile(n, m, zn, zm, lanes, rows, TailStrategy::RoundUp)
      .vectorize(zn)
      .vectorize(zm);
  // K = 4 bytes per instruction as Halide 14 matches it, 16 of them unrolled for AmxFuseK;
  // k_pad is a whole number of 64-byte steps (the generator requires it), so no K tail.
  RVar kg{"kg"}, kk{"kk"}, kgo{"kgo"}, kgi{"kgi"};
  Var un{"un"}, um{"um"};
  g.dot.update()
      .tile(n, m, un, um, lanes, rows, TailStrategy::GuardWithIf)
      .split(g.k.x, kg, kk, 4)
      .split(kg, kgo, kgi, steps, TailStrategy::GuardWithIf)
      .reorder(kk, un, um, kgi, kgo, n, m)
      .atomic()
      .vectorize(kk)
      .vectorize(un)
      .vectorize(um)
      .unroll(kgi);
  pipeline.add_custom_lowering_pass(new ops::AmxFuseK());
  pipeline.add_custom_lowering_pass(new ops::AmxJam());
  // The weights of the block `threads` tasks on: the next one this thread takes when the
  // threads take tasks in turn. Fixed distances measured on the Xeon with AMX (alternating
  // rounds): 1 beat 2 on one thread by 4-10% (M = 128 and 512, K = 4096 and 11008), 2 beat 1
  // on two threads by 3-18% at three of those four shapes. `threads` is the caller's: a
  // value out of [1, 256] is clamped, and a wrong one costs only useless prefetches (x86's
  // never fault).
  const Expr ahead = clamp(threads, 1, 256);
  pipeline.add_custom_lowering_pass(new ops::AmxPrefetchNext(weights, tiles_per_task, ahead));
}

}  // namespace npukit::schedules::cpu
