#include "schedules/cpu/qkv_attention.h"

namespace npukit::schedules::cpu {

using namespace Halide;

namespace {
// Rows per block for T tokens: 8 independent accumulators cover the FMA latency (4
// cycles, 2 per cycle) and 8 weight streams keep the prefetchers busy (fp16 GEMV K = N =
// 4096 on Zen 4, one thread, with the accumulators in registers: 16 rows 0.61-0.70 of read
// bandwidth, 4 rows 0.52, 8 rows 0.74-0.77).
constexpr int kRows = 8;
// One token with fp16 weights widened by F16C: row after row, so that a task's weights
// are one contiguous stream instead of 8 rows' streams restarting every row. qkv_attention
// decode, fp16 weights, Zen 4, one thread, of read bandwidth: avx512 0.82-0.83 -> 0.96-1.03
// with 32 partial sums per row (two zmm chains; 48 the same, 64 0.90-0.98, one chain 0.88),
// avx2 0.72 -> 0.98 with 64 (48 0.92, 32 0.81, 128 0.72-0.85). fp32 weights keep the
// blocks (one row: avx2 0.90 -> 0.85, sse41 0.82 -> 0.66, avx512 the same within the
// noise), as do fp16 weights without F16C (their widening bounds them). 16 rows per
// parallel task: tasks of one row lost half the speed on two threads.
constexpr int kOneTokenTaskRows = 16;
// One token's rows are computed in blocks (one_token_block_rows), their partial sums in
// registers, in one of two orders of the same arithmetic (so the same bits): one row after
// the other (one contiguous stream, above: Zen 4's measurements were of one row per block),
// or the rows together, each K vector of the block's rows in turn (`row_streams`: one
// weight stream per row, in separate pages, which the Intel Xeon with AMX's L2 streamer
// follows at once). qkv_attention decode, fp16 weights, S = 512, that Xeon,
// alternating rounds, of read bandwidth, one / two threads: one row per block 0.77 / 0.73;
// rows together, 2 rows 0.85 / 0.91, 4 rows 0.89–0.91 / 0.92–0.96, 8 rows 0.88 / 0.92; 4
// rows one after the other 0.86 on one thread (session 37). The runtime picks the order
// per CPU (runtime/ops/weight_streams.h). AVX-512: 4 rows, 8 of the 32 zmm in sums; AVX2
// keeps one row, whose 64 sums already take 8 of its 16 ymm.
int one_token_block_rows(const Target& target) { return target.natural_vector_size<float>() >= 16 ? 4 : 1; }

// T > 1: blocks of rows × tokens, one vector of partial sums each, so that each weight
// vector (widened once, for fp16) serves `tokens` FMAs and each x value `rows`: 24
// accumulators of AVX-512's 32 registers, 12 of AVX2's and SSE's 16. qkv_attention
// chunk64 at S = 2048 on Zen 4, one thread, fp16 weights: avx512 8 × 2 104-106 ms, 4 × 4
// 89-92, 4 × 6 85-88 (4 × 5, 4 × 7, 2 × 8 and 4 × 8 slower); avx2 8 × 1 189 ms, 4 × 2 and
// 2 × 4 128-135, 2 × 6 112-119 (3 × 4, 2 × 7, 1 × 8 slower). fp32 weights, avx512: 8 × 2
// 117-138 -> 4 × 6 102-107 ms.
struct PrefillBlock {
  int rows, tokens;
};
PrefillBlock prefill_block(const Target& target) {
  return target.natural_vector_size<float>() >= 16 ? PrefillBlock{4, 6} : PrefillBlock{2, 6};
}

// One token with fp16 weights widened by F16C runs one row at a time with several vectors
// of partial sums; else the blocks of kRows rows, one vector each.
bool one_token_by_row(const Target& target, const Type& weights) {
  return weights == Float(16) && target.has_feature(Target::F16C);
}

// A block of `rows` rows × `tokens` tokens of `lin` computed at `at`, its partial sums in
// registers: MemoryType::Register needs every access at a constant index, so all of a
// block's rows and tokens are computed (bound_extent) and unrolled in every stage. As a
// stack buffer, each FMA loaded and stored its accumulator (the heavier loop kept fewer
// weight loads in flight: 0.68 of read bandwidth against 0.74, M = 1, K = N = 4096, fp16
// weights, one thread on Zen 4).
// `row_streams` (one token only): whether the block's rows are read together (see
// one_token_block_rows) where it holds; else each row's reduction runs after the last's.
void schedule_block(ops::Linear& lin, const LoopLevel& at, int rows, int tokens, Expr row_streams = Expr()) {
  lin.out.compute_at(at).bound_extent(lin.n, rows).bound_extent(lin.t, tokens).unroll(lin.n).unroll(lin.t);
  lin.out.update(0).atomic().vectorize(lin.rl).unroll(lin.n).unroll(lin.t);
  lin.out.update(1).unroll(lin.n).unroll(lin.t);
  lin.part.compute_at(at)
      .store_in(MemoryType::Register)
      .bound_extent(lin.n, rows)
      .bound_extent(lin.t, tokens)
      .unroll(lin.n)
      .unroll(lin.t)
      .vectorize(lin.l);
  Stage sums = lin.part.update();
  if (row_streams.defined()) {
    sums.specialize(!row_streams).reorder(lin.l, lin.rk, lin.n, lin.t).unroll(lin.n).unroll(lin.t).vectorize(lin.l);
  }
  sums.reorder(lin.l, lin.n, lin.t, lin.rk).unroll(lin.n).unroll(lin.t).vectorize(lin.l);
}
}  // namespace

int linear_lanes(const Target& target) { return target.natural_vector_size<float>(); }

int linear_one_token_lanes(const Target& target, const Type& weights) {
  const int vec = target.natural_vector_size<float>();
  if (!one_token_by_row(target, weights)) return vec;
  return vec >= 16 ? 32 : 64;
}

Expr linear_clamp(Expr i, Expr n) { return min(i, n - 1); }

void schedule_linear(ops::LinearForTokens& lin, Func wrapper, const Type& weights, const Target& target,
                     Expr row_streams) {
  Var n = wrapper.args()[0], t = wrapper.args()[1], no("no"), ni("ni"), nb("nb"), nq("nq"), nr("nr"), tt("tt"),
      ti("ti");
  // Both versions have the loops no (parallel tasks) > nb (blocks) and tt (token blocks),
  // ti (one token) and nr (rows): each Linear is computed at tt (tokens) or ti (one_token)
  // in either version, and Halide skips the one the select does not take. Its bounds still
  // hold in the version that skips it: tokens' block (prefill rows × tokens) must cover
  // what tt spans there, and one_token's (rows × 1) what ti spans. GuardWithIf, not
  // ShiftInwards: a shifted last block would recompute rows of its neighbour's in a
  // different unrolled position, whose code (FMA contraction) need not give the same bits,
  // and the two parallel blocks' stores then race: `npukit gate --repeat` saw k_cache rows
  // change between runs on 2 threads (avx2, 20 rows). Each row has one owner now.
  const TailStrategy guard = TailStrategy::GuardWithIf;
  const bool by_row = one_token_by_row(target, weights);
  const int task = by_row ? kOneTokenTaskRows : kRows, rows = by_row ? one_token_block_rows(target) : kRows;
  const PrefillBlock prefill = prefill_block(target);
  // T = 1: tasks of `task` rows, blocks of `rows`; one_token at ti spans the block. Where
  // the block has more rows than a prefill block, tt sits inside a further split of it
  // (nq), so that it spans no more rows than tokens' block.
  Stage one = wrapper.specialize(lin.T == 1);
  one.split(n, no, ni, task, guard).split(ni, nb, nr, rows, guard).split(t, tt, ti, 1, guard);
  if (rows > prefill.rows) {
    one.split(nr, nq, nr, prefill.rows, guard).reorder(nr, tt, nq, ti, nb, no);
  } else {
    one.reorder(nr, ti, tt, nb, no);
  }
  one.parallel(no);
  // T > 1: tasks of kRows rows, blocks of prefill rows × tokens at tt; ti (one token of
  // the block) spans the block's rows, within one_token's.
  wrapper.split(n, no, ni, kRows, guard)
      .split(ni, nb, nr, prefill.rows, guard)
      .split(t, tt, ti, prefill.tokens, guard)
      .reorder(nr, ti, tt, nb, no)
      .parallel(no);
  schedule_block(lin.tokens, LoopLevel(wrapper, tt), prefill.rows, prefill.tokens);
  // A block of one row at nr: in the T > 1 version ti spans a prefill block's rows.
  schedule_block(lin.one_token, LoopLevel(wrapper, rows == 1 ? nr : ti), rows, 1, by_row ? row_streams : Expr());
}

void schedule_qkv_rope(ops::QkvRope& a, Func q, Func k_new, Func v_new, const Type& weights, const Target& target,
                       Expr row_streams) {
  a.rows.compute_root();
  schedule_linear(a.proj, a.rows, weights, target, row_streams);
  schedule_rope_outputs(a, q, k_new, v_new, target);
}

void schedule_qkv_rope_of_rows(ops::QkvRope& a, Func q, Func k_new, Func v_new, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  a.rows.compute_root().vectorize(a.rows.args()[0], vec, TailStrategy::GuardWithIf);
  schedule_rope_outputs(a, q, k_new, v_new, target);
}

void schedule_rope_outputs(ops::QkvRope& a, Func q, Func k_new, Func v_new, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  a.angles.inv_freq.compute_root();
  a.angles.cos_sin.compute_root();
  for (ops::Rope* r : {&a.q_half, &a.k_half, &a.q_interleaved, &a.k_interleaved}) {
    r->out.compute_root().vectorize(r->d, vec, TailStrategy::GuardWithIf);
  }
  for (ops::Rope* r : {&a.q_half, &a.k_half}) {
    r->out.update(0).vectorize(r->r, vec, TailStrategy::GuardWithIf);
    r->out.update(1).vectorize(r->r, vec, TailStrategy::GuardWithIf);
  }
  for (Func f : {q, k_new, v_new}) f.vectorize(f.args()[0], vec, TailStrategy::GuardWithIf);
}

}  // namespace npukit::schedules::cpu
