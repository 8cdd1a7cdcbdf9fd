#include "schedules/cpu/int8_gemm_amx.h"

#include "ops/amx_fuse_k.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void schedule_int8_gemm_acc_amx(ops::Int8GemmAccAmx& g, Pipeline pipeline) {
  const int rows = kAmxTileRows, lanes = 16;  // 16 channels of int32: one 64-byte tile row
  const int steps = 16;                       // K = 4 steps fused into one 64-byte step
  Var n = g.n, m = g.m, no{"no"}, ni{"ni"};
  // acc: one task per block of two 16-channel tiles (their weights, 2·K·16 bytes, stay in L2
  // for every row tile); it subtracts the zero point's share from the stored tiles.
  g.acc.split(n, no, ni, 2 * lanes, TailStrategy::GuardWithIf).reorder(ni, m, no).vectorize(ni, lanes).parallel(no);
  // The tiles in memory, every row of the block's 32 channels: ExtractTileOperations takes
  // only a plain copy out of the AMX register (tile_store), into rows that are not dense
  // (32 channels apart, a 2-D ramp), and the row tiles round up to 16 (the runtime pads the
  // rows of `a`; the weights' channels are padded to 64), so that no tail of acc reaches
  // the tile loops.
  Func tile = g.dot.in();
  Var tn{"tn"}, tm{"tm"}, tni{"tni"}, tmi{"tmi"};
  tile.compute_at(g.acc, no)
      .bound_extent(n, 2 * lanes)
      .tile(n, m, tn, tm, tni, tmi, lanes, rows, TailStrategy::RoundUp)
      .reorder(tni, tmi, tn, tm)
      .vectorize(tni)
      .vectorize(tmi);
  Var zn{"zn"}, zm{"zm"};
  g.dot.compute_at(tile, tn)
      .store_in(MemoryType::AMXTile)
      .tile(n, m, zn, zm, lanes, rows, TailStrategy::RoundUp)
      .vectorize(zn)
      .vectorize(zm);
  // K = 4 bytes per instruction as Halide 14 matches it, 16 of them unrolled for AmxFuseK;
  // a K tail that is not a whole 64 bytes stays in 4-byte steps (GuardWithIf).
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
}

}  // namespace npukit::schedules::cpu
