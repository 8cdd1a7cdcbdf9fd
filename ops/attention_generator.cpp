// The attention-core Generators (op `attention`): npukit_attention for any number of
// tokens, npukit_attention_decode split for decode (the runtime calls it when T = 1).
// Storage types from `q.type`, `k.type`, `v.type` and `o.type`.
#include "Halide.h"
#include "ops/attention.h"
#include "ops/float_convert.h"

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

// The decode schedule. Stage 1 runs one task per (split, kv head): it reads each k and v
// row of its split once, from DRAM, for all the group's query heads. Stage 2 (the combine)
// reads only the partials, Hq · (Dh + 4) values per split.
void schedule_decode(ops::AttentionDecode& a, Halide::Func out, const Halide::Target& target) {
  using namespace Halide;
  const int vec = target.natural_vector_size<float>();
  // Query heads per kv head handled together, unrolled so that each k and v vector is
  // loaded and widened once for all of them and their accumulators stay in registers.
  // Every per-task Func computes a multiple of it (align_bounds): the extra heads of a
  // group that is not a multiple repeat its last head (qg clamps) and the combine never
  // reads them, and the unrolled code has no per-head guards.
  const int heads_unrolled = 4;
  // The d columns one sweep of a block of v rows accumulates: 4 vectors × 4 heads = 16
  // accumulators with AVX-512's 32 registers, 2 × 4 = 8 with AVX2's 16.
  const int v_columns = (vec >= 16 ? 4 : 2) * vec;
  // v rows per block of Σ weight · v: the block's 4 KB of fp16 v (Dh = 128) is swept once
  // per tile of v_columns, so DRAM still sees nearly one sequential stream, and the tile's
  // accumulators go back to num once per block. (16 measured 5% faster than 8 with the
  // cache in L3, the same from DRAM; 32 no better.)
  const int v_rows = 16;
  const TailStrategy guard = TailStrategy::GuardWithIf;

  Var task("task");
  a.partial.compute_root()
      .align_bounds(a.r, heads_unrolled)
      .fuse(a.c, a.g, task)
      .parallel(task)
      .vectorize(a.d, vec, guard);
  a.qg.compute_at(a.partial, task).align_bounds(a.r, heads_unrolled);

  // Scores: per position, vector accumulators over head_dim (an rfactor over the lanes),
  // the heads unrolled inside so that each k vector is widened once for all; then one
  // reduction of the heads' lanes together (a tree of shuffles and adds, heads_unrolled
  // sums out of that many vectors) instead of one horizontal sum per head. The scores and
  // weights are stored heads-innermost for it, and the per-position work that follows is
  // vectorized over the heads. (Blocks of 2 or 4 positions with their accumulators and
  // trees interleaved measured slower.)
  a.dot.compute_at(a.partial, task)
      .align_bounds(a.r, heads_unrolled)
      .reorder_storage(a.r, a.s, a.g)
      .reorder(a.r, a.s)
      .vectorize(a.r, heads_unrolled);
  RVar rdo("rdo"), rdi("rdi");
  Var u("u"), ro("ro"), ri("ri");
  Func lanes = a.dot.update().split(a.rd.x, rdo, rdi, vec).rfactor(rdi, u);
  a.dot.update()
      .split(a.r, ro, ri, heads_unrolled, guard)
      .reorder(rdi, ri, ro, a.s)
      .atomic()
      .vectorize(rdi)
      .vectorize(ri);
  // Stored once per task and folded to one position (a per-position allocation of a
  // size known only at run time would be a heap allocation per position).
  lanes.reorder_storage(u, a.r, a.s, a.g)
      .store_at(a.partial, task)
      .compute_at(a.dot, a.s)
      .align_bounds(a.r, heads_unrolled)
      .vectorize(u);
  lanes.update().split(a.r, ro, ri, heads_unrolled, guard).reorder(u, ri, rdo, ro).vectorize(u).unroll(ri);

  a.stats.compute_at(a.partial, task).align_bounds(a.r, heads_unrolled);
  a.stats.update().split(a.r, ro, ri, heads_unrolled, guard).reorder(ri, a.rs, ro).vectorize(ri);
  a.weight.compute_at(a.partial, task)
      .align_bounds(a.r, heads_unrolled)
      .reorder_storage(a.r, a.s, a.c, a.g)
      .split(a.r, ro, ri, heads_unrolled, guard)
      .reorder(ri, a.s, ro)
      .vectorize(ri);
  a.den.compute_at(a.partial, task).align_bounds(a.r, heads_unrolled);
  a.den.update().split(a.r, ro, ri, heads_unrolled, guard).reorder(ri, a.rs, ro).vectorize(ri);

  // Σ weight · v, per block of v_rows positions and tile of v_columns × heads_unrolled:
  // the block's sum is an rfactor with its own constant-size stack storage and the heads
  // unrolled, which LLVM keeps in registers (accumulating straight into num, it reloads
  // and stores them per row: it cannot tell the heads' rows of num apart); the tile is
  // added to num once per block. v (0 where masked) is widened inline, each vector once
  // for all heads: staging the block's rows in fp32 first cost 13% with the cache in L3
  // and gained nothing from DRAM; software prefetch of v or k ahead was slower too.
  // (Unrolling the rows gained 2–3% before the causal predicate; with it, its guards
  // cost 20%.)
  Var dd("dd"), dv("dv"), blk("blk");
  RVar rso("rso"), rsi("rsi");
  a.num.compute_at(a.partial, task)
      .align_bounds(a.r, heads_unrolled)
      .align_bounds(a.d, v_columns)
      .vectorize(a.d, vec, guard);
  Func block = a.num.update().split(a.rs.x, rso, rsi, v_rows).rfactor(rso, blk);
  a.num.update()
      .split(a.d, dd, dv, v_columns, guard)
      .split(a.r, ro, ri, heads_unrolled, guard)
      .reorder(dv, ri, ro, dd, rso)
      .vectorize(dv, vec)
      .unroll(ri);
  block.compute_at(a.num, ro)
      .store_in(MemoryType::Stack)
      .bound_storage(a.d, v_columns)
      .bound_storage(a.r, heads_unrolled)
      .vectorize(a.d, vec, guard)
      .unroll(a.r);
  block.update().reorder(a.d, a.r, rsi).vectorize(a.d, v_columns, guard).unroll(a.r);

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
  // short caches still give every thread tasks (1024 measured ~5% faster than 512 at
  // S = 8192, 256 ~10% slower).
  GeneratorParam<int> split{"split", 1024};

  Input<Halide::Buffer<void, 3>> q{"q"};              // (Dh, Hq, 1)
  Input<Halide::Buffer<void, 3>> k{"k"};              // (Dh, S_max, Hkv)
  Input<Halide::Buffer<void, 3>> v{"v"};              // (Dh, S_max, Hkv)
  Input<int32_t> position{"position"};                // in [0, S_max)
  Input<Halide::Buffer<float, 2>> mask{"mask"};       // (S_max, 1)
  Output<Halide::Buffer<void, 3>> o{"o"};             // (Dh, Hq, 1)

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    const Target target = get_target();
    Var a, b, c;
    Func qf("qf"), kf("kf"), vf("vf"), mf("mf");
    qf(a, b) = ops::widen_to_f32(q(a, b, 0), target);
    kf(a, b, c) = ops::widen_to_f32(k(a, b, c), target);
    vf(a, b, c) = ops::widen_to_f32(v(a, b, c), target);
    mf(a) = mask(a, 0);
    ops::AttentionDecode att = ops::define_attention_decode(qf, kf, vf, position, mf, q.dim(1).extent(),
                                                            k.dim(2).extent(), q.dim(0).extent(),
                                                            k.dim(1).extent(), split);
    Func out("attention_out");
    Var d = att.d, h = att.h, t("t");
    out(d, h, t) = ops::narrow_from_f32(att.out(d, h), o.type(), target);
    o = out;
    q.dim(2).set_bounds(0, 1);
    mask.dim(1).set_bounds(0, 1);
    o.dim(2).set_bounds(0, 1);
    schedule_decode(att, out, target);
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::AttentionGenerator, npukit_attention)
HALIDE_REGISTER_GENERATOR(npukit::AttentionDecodeGenerator, npukit_attention_decode)
