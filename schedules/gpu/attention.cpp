#include "schedules/gpu/attention.h"

namespace npukit::schedules::gpu {

using namespace Halide;

namespace {
constexpr int kColumns = 32;     // threads over head_dim (a warp)
constexpr int kPositions = 64;   // threads over cache positions
const TailStrategy kGuard = TailStrategy::GuardWithIf;

// The first reduction variable of `s` (the RDoms that define_attention keeps local, ops/attention.h).
RVar first_rvar(Stage s) { return RVar(s.get_schedule().rvars()[0].var); }

}  // namespace

void schedule_attention(ops::Attention& a, Func out, const Target& target) {
  (void)target;
  Var d = a.d, h = a.h, t = a.t, s = a.s, so("so"), si("si"), dout("dout"), di("di"), j("j");
  // The scores: each thread one position's dot product along head_dim.
  a.score.compute_root().split(s, so, si, kPositions, kGuard).reorder(si, so, h, t).gpu_blocks(so, h, t).gpu_threads(si);
  a.dot.compute_at(a.score, si);
  // The max (and flags), then Σ exp: thread j takes positions j, j + 32, … (neighbouring
  // threads read neighbouring scores), then one thread combines the 32 partials in order.
  auto two_level = [&](Func f) {
    RVar r = first_rvar(f.update()), ro("ro"), ri("ri");
    Func lanes = f.update().split(r, ro, ri, kColumns, kGuard).rfactor(ri, j);
    f.compute_root().gpu_blocks(h, t);
    f.update().gpu_blocks(h, t);
    lanes.compute_at(f, h).gpu_threads(j);
    lanes.update().reorder(ro, j).gpu_threads(j);
  };
  two_level(a.stats);
  two_level(a.den);
  // Σ exp · v: one thread per column, v rows read coalesced; the weights (exp of the
  // stored scores) inline.
  a.num.compute_root().split(d, dout, di, kColumns, kGuard).reorder(di, dout, h, t).gpu_blocks(dout, h, t).gpu_threads(di);
  a.num.update()
      .split(d, dout, di, kColumns, kGuard)
      .reorder(first_rvar(a.num.update()), di, dout, h, t)
      .gpu_blocks(dout, h, t)
      .gpu_threads(di);
  out.split(d, dout, di, kColumns, kGuard).reorder(di, dout, h, t).gpu_blocks(dout, h, t).gpu_threads(di);
}

void schedule_attention_decode(ops::AttentionDecode& a, Func out, bool masked, const Target& target) {
  (void)target;
  const int hb = ops::AttentionDecode::kHeadBlock;
  Var d = a.d, ri = a.ri, ro = a.ro, s = a.s, c = a.c, g = a.g, h = a.h;
  Var so("so"), si("si"), dout("dout"), di("di"), j("j"), t = out.args()[2];

  // Stage 1: blocks over (split, kv head). The partials' columns in tiles of 32 threads,
  // tile after tile, so that Σ weight · v of one column is computed by its own thread.
  a.partial.compute_root()
      .bound(ri, 0, hb)
      .split(d, dout, di, kColumns, kGuard)
      .reorder(ri, ro, di, dout, c, g)
      .gpu_blocks(c, g)
      .gpu_threads(di)
      .unroll(ri);
  // Shared per block: the group's q, the mask of the split, its scores and its weights.
  a.qg.compute_at(a.partial, c).split(d, dout, di, kColumns, kGuard).reorder(ri, ro, dout, di, g).gpu_threads(di);
  if (masked) a.mask_c.compute_at(a.partial, c).split(s, so, si, kPositions, kGuard).gpu_threads(si);
  // One thread per position, the kHeadBlock heads unrolled: each k element is loaded once
  // for all of them.
  a.dot.compute_at(a.partial, c).split(s, so, si, kPositions, kGuard).reorder(ri, so, ro, si, g).gpu_threads(si);
  a.dot.update()
      .split(s, so, si, kPositions, kGuard)
      .reorder(ri, a.rd, so, ro, si, g)
      .gpu_threads(si)
      .unroll(ri);
  a.weight.compute_at(a.partial, c).split(s, so, si, kPositions, kGuard).reorder(ri, so, ro, si, c, g).gpu_threads(si).unroll(ri);
  // The split's max and flags, and Σ weight: per head, kDecodeStatsBlock strided partials
  // (one thread each), then one thread per head over them.
  auto two_level = [&](Func f, RDom r) {
    Func lanes = f.update().rfactor(r.x, j);
    f.compute_at(a.partial, c).reorder(ro, ri, c, g).gpu_threads(ri);
    f.update().reorder(r.x, ro, ri, c, g).gpu_threads(ri);
    lanes.compute_at(a.partial, c).reorder(ri, ro, j, c, g).gpu_threads(j).unroll(ri);
    lanes.update().reorder(ri, r.y, ro, j, c, g).gpu_threads(j).unroll(ri);
  };
  two_level(a.stats, a.rs_all);
  two_level(a.den, a.rb);
  // Σ weight · v per thread (one column d, one block of heads), in registers. At ro, not
  // di: a per-thread box must have a constant size (the number of head blocks is not),
  // else Halide 14 lowers it to a global buffer of one element that every thread overruns.
  a.num.compute_at(a.partial, ro).unroll(ri);
  a.num.update().reorder(ri, a.rv.x, a.rv.y, ro).unroll(ri);

  // Stage 2, the combine: per kv head, one thread per query head of the block.
  a.combined.compute_root().reorder(ro, ri, g).gpu_blocks(g).gpu_threads(ri);
  a.combined.update().reorder(a.rc, ro, ri, g).gpu_blocks(g).gpu_threads(ri);
  a.scale.compute_root().reorder(ro, ri, c, g).gpu_blocks(c, g).gpu_threads(ri);
  a.total_den.compute_root().reorder(ro, ri, g).gpu_blocks(g).gpu_threads(ri);
  a.total_den.update().reorder(a.rc, ro, ri, g).gpu_blocks(g).gpu_threads(ri);
  a.total_num.compute_root().split(d, dout, di, kColumns, kGuard).reorder(ri, ro, di, dout, g).gpu_blocks(dout, g).gpu_threads(di);
  a.total_num.update()
      .split(d, dout, di, kColumns, kGuard)
      .reorder(a.rc, ri, ro, di, dout, g)
      .gpu_blocks(dout, g)
      .gpu_threads(di);
  out.split(d, dout, di, kColumns, kGuard).reorder(di, dout, h, t).gpu_blocks(dout, h, t).gpu_threads(di);
}

}  // namespace npukit::schedules::gpu
