// The attention-core Generators (op `attention`): npukit_attention for any number of
// tokens, npukit_attention_decode split for decode (the runtime calls it when T = 1).
// Storage types from `q.type`, `k.type`, `v.type` and `o.type`.
#include <algorithm>

#include "Halide.h"
#include "ops/attention.h"
#include "ops/float_convert.h"
#include "ops/prefetch.h"
#include "schedules/gpu/attention.h"

namespace npukit {
namespace {

class AttentionGenerator : public Halide::Generator<AttentionGenerator> {
 public:
  Input<Halide::Buffer<void, 3>> q{"q"};              // (Dh, Hq, T)
  Input<Halide::Buffer<void, 3>> k{"k"};              // (Dh, S_max, Hkv)
  Input<Halide::Buffer<void, 3>> v{"v"};              // (Dh, S_max, Hkv)
  Input<Halide::Buffer<int32_t, 1>> positions{"positions"};
  Input<Halide::Buffer<float, 2>> mask{"mask"};       // (S_max, T)
  Output<Halide::Buffer<void, 3>> o{"o"};             // (Dh, Hq, T)

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    const Target target = get_target();
    Var a, b, c;
    Func qf("qf"), kf("kf"), vf("vf");
    qf(a, b, c) = ops::widen_to_f32(q(a, b, c), target);
    kf(a, b, c) = ops::widen_to_f32(k(a, b, c), target);
    vf(a, b, c) = ops::widen_to_f32(v(a, b, c), target);
    ops::Attention att = ops::define_attention(qf, kf, vf, positions, mask, q.dim(1).extent(), k.dim(2).extent(),
                                               q.dim(0).extent(), k.dim(1).extent());
    Func out("attention_out");
    out(att.d, att.h, att.t) = ops::narrow_from_f32(att.out(att.d, att.h, att.t), o.type(), target);
    o = out;
    if (target.has_gpu_feature()) {
      schedules::gpu::schedule_attention(att, out, target);
      return;
    }

    // One (head, token) per task: its scores in L1/L2, the max, the exp sums.
    const int vec = target.natural_vector_size<float>();
    Var ht("ht");
    out.fuse(att.h, att.t, ht).parallel(ht);
    out.vectorize(att.d, vec, TailStrategy::GuardWithIf);
    // Each score is a dot product along the contiguous head_dim: vectors over d, then a
    // horizontal sum (vectors over s would gather k with a stride of head_dim).
    att.score.compute_at(out, ht);
    att.dot.compute_at(att.score, att.s);
    att.dot.update().atomic().vectorize(att.rd, vec, TailStrategy::GuardWithIf);
    att.stats.compute_at(out, ht);
    att.weight.compute_at(out, ht).vectorize(att.s, vec, TailStrategy::GuardWithIf);
    att.den.compute_at(out, ht);
    att.num.compute_at(out, ht).vectorize(att.d, vec, TailStrategy::GuardWithIf);
    att.num.update().vectorize(att.d, vec, TailStrategy::GuardWithIf);
  }
};

// Positions per vector in the per-position softmax work (the split's stats, the weights):
// the heads' scores of vec / kHeadBlock positions fill one vector.
int softmax_positions(const Halide::Target& target) {
  return std::max(1, target.natural_vector_size<float>() / ops::AttentionDecode::kHeadBlock);
}

// v rows per block of Σ weight · v: the block's 4 KB of fp16 v (Dh = 128) is swept once
// per tile of v columns, so DRAM still sees nearly one sequential stream, and the tile's
// accumulators go back to num once per block. (16 measured 5% faster than 8 with the
// cache in L3, the same from DRAM; 32 no better.)
constexpr int kVRows = 16;

// The decode schedule. Stage 1 runs one task per (split, kv head): it reads each k and v
// row of its split once, from DRAM, for all the group's query heads. Stage 2 (the combine)
// reads only the partials, Hq · (Dh + 4) values per split.
void schedule_decode(ops::AttentionDecode& a, Halide::Func out, const Halide::Target& target,
                     const Halide::ImageParam& k, const Halide::ImageParam& v, Halide::Expr head_dim,
                     bool masked) {
  using namespace Halide;
  const int vec = target.natural_vector_size<float>();
  const int hb = ops::AttentionDecode::kHeadBlock;
  // Positions whose scores are computed together: 4 × 4 heads = 16 vector accumulators
  // with AVX-512's 32 registers, 2 × 4 = 8 with AVX2's and SSE's 16.
  const int score_positions = vec >= 16 ? 4 : 2;
  const int softmax_positions = npukit::softmax_positions(target);
  // The d columns one sweep of a block of v rows accumulates: 4 vectors × 4 heads = 16
  // accumulators with AVX-512's 32 registers, 2 × 4 = 8 with AVX2's 16.
  const int v_columns = (vec >= 16 ? 4 : 2) * vec;
  const TailStrategy guard = TailStrategy::GuardWithIf;

  Var task("task");
  a.partial.compute_root().bound(a.ri, 0, hb).fuse(a.c, a.g, task).parallel(task).vectorize(a.d, vec, guard);
  // The common head dims with constant trip counts: LLVM then keeps the inner
  // accumulators in registers without zeroing their stack copies first (a memset call per
  // block of positions), and schedules the unrolled loops. 15% faster with the cache in
  // L3, 5–7% from DRAM, at Dh = 128.
  a.partial.specialize(head_dim == 128);
  a.partial.specialize(head_dim == 64);
  a.qg.compute_at(a.partial, task);
  // Scalar: split values per task, little next to the per-head work (vectorized, with
  // its clamp on a vector of positions, the gate failed; not investigated further).
  if (masked) a.mask_c.compute_at(a.partial, task);

  // Scores, for a block of score_positions positions × the kHeadBlock heads at once:
  // vector accumulators along head_dim (an rfactor over the lanes), one per (position,
  // head), each k vector widened once for the 4 heads; then one reduction of all the
  // block's lanes together (a transposed tree: 16 vectors into one vector of 16 sums)
  // instead of a tree per position. The scores are stored heads-innermost with a constant
  // row stride (kHeadBlock), so the tree's result is one dense store. The block is whole
  // (align_bounds; the k rows past the position are clamped to it and never used).
  Var so("so"), si("si"), u("u");
  RVar rdo("rdo"), rdi("rdi");
  a.dot.compute_at(a.partial, task).align_bounds(a.s, score_positions).reorder_storage(a.ri, a.s, a.ro, a.g);
  a.dot.vectorize(a.ri);
  Func lanes = a.dot.update().split(a.rd.x, rdo, rdi, vec).rfactor(rdi, u);
  a.dot.update()
      .split(a.s, so, si, score_positions, TailStrategy::RoundUp)
      .reorder(rdi, a.ri, si, so, a.ro)
      .atomic()
      .vectorize(rdi)
      .vectorize(a.ri)
      .vectorize(si);
  // k rows prefetched 8 blocks (32 rows, 8 KB of fp16 at Dh = 128) ahead, v rows 2 blocks
  // of 16 rows ahead (below): one core's hardware prefetchers alone left it stalled on
  // most lines it read (cold, one thread: 22 GB/s without, 26 with; 4 KB or 16 KB ahead
  // measured slower than 8 KB). Past the cache's end a prefetch does nothing (NonFaulting
  // leaves out the clamps).
  const int k_blocks_ahead = 8, v_blocks_ahead = 2;
  a.dot.update().prefetch(k, so, so, k_blocks_ahead, PrefetchBoundStrategy::NonFaulting);
  lanes.compute_at(a.dot, so).reorder_storage(u, a.ri, a.s, a.ro, a.g).vectorize(u).unroll(a.ri).unroll(a.s);
  lanes.update().reorder(u, a.ri, a.s, rdo).vectorize(u).unroll(a.ri).unroll(a.s);

  // The split's max and flags: softmax_positions interleaved accumulators (an rfactor
  // over positions), each a vector of the heads, so that one vector covers
  // softmax_positions positions × the heads.
  a.stats.compute_at(a.partial, task).vectorize(a.ri);
  Var j("j");
  Func stats_lanes = a.stats.update().rfactor(a.rs_all.x, j);
  a.stats.update().reorder(a.ri, a.rs_all.x, a.ro).vectorize(a.ri);
  stats_lanes.compute_at(a.partial, task)
      .reorder_storage(a.ri, j, a.ro, a.c, a.g)
      .vectorize(a.ri)
      .vectorize(j);
  stats_lanes.update().reorder(a.ri, j, a.rs_all.y, a.ro).vectorize(a.ri).vectorize(j);
  // The weights of softmax_positions positions × the heads per vector.
  a.weight.compute_at(a.partial, task).align_bounds(a.s, softmax_positions).reorder_storage(a.ri, a.s, a.ro, a.c, a.g);
  if (softmax_positions > 1) {
    a.weight.split(a.s, so, si, softmax_positions, TailStrategy::RoundUp)
        .reorder(a.ri, si, so, a.ro)
        .vectorize(a.ri)
        .vectorize(si);
  } else {
    a.weight.reorder(a.ri, a.s, a.ro).vectorize(a.ri);
  }
  // Σ weight likewise: softmax_positions independent vector sums (no chain of dependent
  // adds per position), added up once per split.
  a.den.compute_at(a.partial, task).vectorize(a.ri);
  Func den_lanes = a.den.update().rfactor(a.rb.x, j);
  a.den.update().reorder(a.ri, a.rb.x, a.ro).vectorize(a.ri);
  den_lanes.compute_at(a.partial, task).reorder_storage(a.ri, j, a.ro, a.c, a.g).vectorize(a.ri).vectorize(j);
  den_lanes.update().reorder(a.ri, j, a.rb.y, a.ro).vectorize(a.ri).vectorize(j);

  // Σ weight · v, per block of kVRows positions and tile of v_columns × kHeadBlock heads:
  // the block's sum is an rfactor with its own constant-size stack storage and the heads
  // unrolled, which LLVM keeps in registers (accumulating straight into num, it reloads
  // and stores them per row: it cannot tell the heads' rows of num apart); the tile is
  // added to num once per block. v (0 where masked) is widened inline, each vector once
  // for all heads: staging the block's rows in fp32 first cost 13% with the cache in L3
  // and gained nothing from DRAM. (Unrolling the rows gained 2–3% before the causal
  // predicate; with it, its guards cost 20%.)
  Var dd("dd"), dv("dv"), blk("blk");
  RVar rso = a.rv.y, rsi = a.rv.x;
  a.num.compute_at(a.partial, task).align_bounds(a.d, v_columns).vectorize(a.d, vec, guard);
  Func block = a.num.update().rfactor(rso, blk);
  a.num.update()
      .split(a.d, dd, dv, v_columns, guard)
      .reorder(dv, a.ri, a.ro, dd, rso)
      .vectorize(dv, vec)
      .unroll(a.ri);
  // Placed in the tile loop (dd, inside the test of rv's predicate), so issued once per
  // tile (twice per block at Dh = 128, the second time for lines already requested); at
  // the block loop it sat before that test, which kept the block loop running, empty but
  // prefetching, over the whole split past the position (at S = 16, 80% of the call).
  // Only where a tile is wide (AVX-512's 64 columns): the prefetch covers the whole block,
  // so it is issued head_dim / v_columns times per block, and with AVX2's 16-column tiles
  // those 8 sweeps at Dh = 128 cost more than the prefetch gains. Zen 3 (avx2, one thread)
  // without it: S = 2048 from L3 1000 -> 800 us, S = 8192 from DRAM 4.14 -> 3.78 ms.
  if (v_columns >= 64) a.num.update().prefetch(v, dd, rso, v_blocks_ahead, PrefetchBoundStrategy::NonFaulting);
  block.compute_at(a.num, a.ro)
      .store_in(MemoryType::Stack)
      .bound_storage(a.d, v_columns)
      .bound_storage(a.ri, hb)
      .vectorize(a.d, vec, guard)
      .unroll(a.ri);
  block.update().reorder(a.d, a.ri, rsi).vectorize(a.d, v_columns, guard).unroll(a.ri);

  // The combine: small (Hq · Dh per split), once for all heads.
  a.combined.compute_root();
  a.scale.compute_root();
  a.total_den.compute_root();
  a.total_num.compute_root().vectorize(a.d, vec, guard);
  a.total_num.update().vectorize(a.d, vec, guard);
  out.vectorize(a.d, vec, guard);
}

// One token (T = 1): q and o of (Dh, Hq, 1), the mask of (S_max, 1) and the token's position
// as a scalar, so that bounds inference can clamp each split to it.
class AttentionDecodeGenerator : public Halide::Generator<AttentionDecodeGenerator> {
 public:
  // Cache positions per split: enough that a task's k and v (2 · split · Dh · 2 bytes)
  // dwarf its partials (Hq/Hkv · (Dh + 4) values) and its fixed costs, few enough that
  // short caches still give every thread tasks (Hkv tasks per split). 2048 measured 3–5%
  // faster than 1024 at S >= 2048 on one thread and the same at S = 512 (a split does no
  // work past the position); earlier, 1024 ~5% faster than 512 at S = 8192, 256 ~10%
  // slower.
  GeneratorParam<int> split{"split", 2048};
  // false: the kernel for calls without a mask, which never reads `mask` (every causal
  // position live): no mask test per v row and per score, 3–5% faster.
  GeneratorParam<bool> masked{"masked", true};

  Input<Halide::Buffer<void, 3>> q{"q"};              // (Dh, Hq, 1)
  Input<Halide::Buffer<void, 3>> k{"k"};              // (Dh, S_max, Hkv)
  Input<Halide::Buffer<void, 3>> v{"v"};              // (Dh, S_max, Hkv)
  Input<int32_t> position{"position"};                // in [0, S_max)
  Input<Halide::Buffer<float, 2>> mask{"mask"};       // (S_max, 1)
  Output<Halide::Buffer<void, 3>> o{"o"};             // (Dh, Hq, 1)

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    _halide_user_assert(k.type() == v.type())
        << "npukit_attention_decode: k.type " << k.type() << " and v.type " << v.type()
        << " must match (one prefetch width per kernel)\n";
    ops::add_prefetch_bitcode(*get_externs_map(), get_target(), k.type().bytes());
    const Target target = get_target();
    Var a, b, c;
    Func qf("qf"), kf("kf"), vf("vf"), mf("mf");
    qf(a, b) = ops::widen_to_f32(q(a, b, 0), target);
    kf(a, b, c) = ops::widen_to_f32(k(a, b, c), target);
    vf(a, b, c) = ops::widen_to_f32(v(a, b, c), target);
    mf(a) = mask(a, 0);
    // The split's stats take the heads' scores of this many positions per vector. A GPU
    // wants many more, smaller splits (one block each) and one stats partial per thread:
    // its own structure (schedules/gpu/attention.h), whatever `split` says.
    const bool gpu = target.has_gpu_feature();
    const int stats_block = gpu ? schedules::gpu::kDecodeStatsBlock : softmax_positions(target);
    const int split_positions = gpu ? schedules::gpu::kDecodeSplit : int(split);
    const int v_block = gpu ? schedules::gpu::kDecodeVBlock : kVRows;
    ops::AttentionDecode att = ops::define_attention_decode(qf, kf, vf, position, mf, q.dim(1).extent(),
                                                            k.dim(2).extent(), q.dim(0).extent(),
                                                            k.dim(1).extent(), split_positions, stats_block,
                                                            v_block, masked);
    Func out("attention_out");
    Var d = att.d, h = att.h, t("t");
    out(d, h, t) = ops::narrow_from_f32(att.out(d, h), o.type(), target);
    o = out;
    q.dim(2).set_bounds(0, 1);
    mask.dim(1).set_bounds(0, 1);
    o.dim(2).set_bounds(0, 1);
    if (gpu) {
      schedules::gpu::schedule_attention_decode(att, out, masked, target);
      return;
    }
    schedule_decode(att, out, target, Halide::ImageParam(k), Halide::ImageParam(v), q.dim(0).extent(), masked);
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::AttentionGenerator, npukit_attention)
HALIDE_REGISTER_GENERATOR(npukit::AttentionDecodeGenerator, npukit_attention_decode)
