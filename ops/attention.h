// The attention core as a pure Halide algorithm: every query head attends over the cache
// positions 0 … its token's position (causal) that the additive mask leaves live,
// grouped-query (head h reads kv head h / (Hq / Hkv)), scale 1/√Dh, softmax with max
// subtraction. Positions that are not live are never read, so whatever they hold cannot
// reach the output.
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct Attention {
  Halide::Var d{"d"}, h{"h"}, t{"t"}, s{"s"};
  Halide::RDom rd;              // over head_dim
  Halide::Func dot{"qk"};       // (s, h, t): q·k, fp32
  Halide::Func score{"score"};  // (s, h, t): q·k / √Dh + mask, fp32
  Halide::Func stats{"stats"};  // (h, t): Tuple(max live score, any live score NaN, any live)
  Halide::Func weight{"weight"};  // (s, h, t): exp(score − max), used at live s only
  Halide::Func den{"den"};      // (h, t): Σ exp(score − max)
  Halide::Func num{"num"};      // (d, h, t): Σ exp(score − max) · v
  Halide::Func out{"attention"};  // (d, h, t), fp32
};

// q(d, h, t), k(d, s, g), v(d, s, g) in fp32; positions(t) int; mask(s, t) fp32 (0 or
// −inf, or finite biases). s_max bounds the cache; head_dim scales the logits.
Attention define_attention(Halide::Func q, Halide::Func k, Halide::Func v, Halide::Func positions,
                           Halide::Func mask, Halide::Expr heads, Halide::Expr kv_heads,
                           Halide::Expr head_dim, Halide::Expr s_max);

// The same attention for one token (decode), split (flash decoding): the cache is cut into
// splits of `split` positions, and one (split c, kv head g) computes, for all the query
// heads of its group at once, the split's partial softmax: its max m_c,
// Σ exp(score − m_c) and Σ exp(score − m_c) · v over its live positions, so that each k
// and v row is read once. A combine stage rescales the partials by exp(m_c − max_c m_c) and
// sums them; the NaN and any-live flags are ORed.
//
// The group's query heads come in fixed blocks of kHeadBlock: query head h = g·G + r with
// G = heads / kv_heads and r = ro · kHeadBlock + ri, ri in [0, kHeadBlock). Every Func
// below has ri as a dimension of constant extent, so that a schedule can store scores
// heads-innermost with a constant row stride and vectorize across heads and positions
// together. Heads past the group's last (when G is not a multiple of the block) repeat
// its last head and are never read by the output.
struct AttentionDecode {
  static constexpr int kHeadBlock = 4;
  // A partial's row: head_dim columns of Σ weight · v, then these scalars at head_dim + i.
  static constexpr int kMax = 0, kDen = 1, kBad = 2, kLive = 3, kScalars = 4;
  Halide::Var d{"d"}, ri{"ri"}, ro{"ro"}, s{"s"}, c{"c"}, g{"g"}, h{"h"};
  Halide::Var t{"t"};                 // the query token (define_attention_split_tokens only)
  Halide::RDom rd;                    // over head_dim
  Halide::RDom rs_all;                // (position in block, block) over one split, for its stats
  Halide::RDom rb;                    // (position in block, block) up to the position's block, for den
  Halide::RDom rv;                    // (position in block, block) up to the position's block, for num
  Halide::RDom rc;                    // over the splits
  Halide::Func mask_c{"mask_c"};      // (s): the mask at s clamped to the position
  Halide::Func qg{"qg"};              // (d, ri, ro, g): the query heads of group g, fp32
  Halide::Func dot{"qk"};             // (s, ri, ro, g): q·k, fp32 (k rows clamped to the position)
  Halide::Func stats{"split_stats"};  // (ri, ro, c, g): max live score key (+Inf: a NaN/+Inf, −Inf: none live)
  Halide::Func weight{"weight"};      // (s, ri, ro, c, g): exp(score − the split's reference), 0 if not live
  Halide::Func v_live{"v_live"};      // (d, s, g): v, 0 if not live
  Halide::Func den{"split_den"};      // (ri, ro, c, g): Σ weight
  Halide::Func num{"split_num"};      // (d, ri, ro, c, g): Σ weight · v
  Halide::Func partial{"partial"};    // (d, ri, ro, c, g): num for d < head_dim, then the scalars below
  Halide::Func combined{"combined"};  // (ri, ro, g): Tuple(global max, any NaN/+Inf, any live)
  Halide::Func scale{"split_scale"};  // (ri, ro, c, g): exp(m_c − global max)
  Halide::Func total_den{"total_den"};  // (ri, ro, g)
  Halide::Func total_num{"total_num"};  // (d, ri, ro, g)
  Halide::Func out{"attention"};      // (d, h), fp32
  // The output from split 0's partial alone (d, h), `out`'s values when the bound lies in
  // split 0 (`one_split`): its scale is exp(0) = 1 exactly (only the sign of a zero sum,
  // 0 + −0 in the combine, can differ). A consumer that selects it under one_split lets
  // Halide skip the combine's stages (SkipStages), whose fixed cost dominates a short cache.
  // It multiplies split 0's Σ weight · v by single_scale, one factor per head: NaN where a
  // live score or v was NaN, 0 where no position is live (Σ weight · v is 0 there), else
  // 1 / Σ weight (≥ 1 wherever a position is live: the max's own exp(0)). A division per
  // column and the flags' tests per vector were 16% of a hot call at S = 16 (Intel Xeon,
  // AVX-512). So it may differ from `out` in the last bit of fp32 and the sign of a zero.
  Halide::Func single{"single_split"};
  Halide::Func single_scale{"single_scale"};  // (h)
  Halide::Expr one_split;
};

// q(d, h), k(d, s, g), v(d, s, g) in fp32; position: the token's position (in [0, s_max));
// mask(s) fp32. `split` is the number of cache positions per split; the split's stats run
// over blocks of `stats_block` positions and its Σ weight · v over blocks of `v_block`
// (both divisors of split), so that a schedule can vectorize the stats across the
// positions of a block and keep a block's v tile in registers. split and v_block may be
// scalar parameters (the NPU schedule's runtime knobs: one lowering serves every choice). `masked` = false: every
// causal position is live and `mask` is never read (the kernel for calls without one).
AttentionDecode define_attention_decode(Halide::Func q, Halide::Func k, Halide::Func v, Halide::Expr position,
                                        Halide::Func mask, Halide::Expr heads, Halide::Expr kv_heads,
                                        Halide::Expr head_dim, Halide::Expr s_max, Halide::Expr split,
                                        int stats_block, Halide::Expr v_block, bool masked);

// The same split algorithm for a block of query tokens (prefill on the NPU): q(d, h, t),
// positions(t) int, mask(s, t); every Func above gains the token t after ro (out is
// (d, h, t), qg (d, ri, ro, t, g), mask_c and v_live (s, t) and (d, s, t, g)). Loops run
// to max_position (>= every token's position, < s_max: a scalar, so that a nest's loop
// bounds need no tensor data); positions past a token's own position are not live for it
// (weight 0, v_live 0), so the tokens of a block can share every k and v row read.
AttentionDecode define_attention_split_tokens(Halide::Func q, Halide::Func k, Halide::Func v, Halide::Func positions,
                                              Halide::Expr max_position, Halide::Func mask, Halide::Expr heads,
                                              Halide::Expr kv_heads, Halide::Expr head_dim, Halide::Expr s_max,
                                              Halide::Expr split, int stats_block, Halide::Expr v_block,
                                              bool masked);

// exp(x) for x <= 0 (or NaN), vectorizable: Halide's fast_exp (about 1.5 ulp) with
// underflow flushed to 0, −inf giving 0 and NaN kept NaN. Halide's exp() calls libm expf
// once per lane, which costs more than reading the cache.
Halide::Expr exp_nonpositive(Halide::Expr x);

}  // namespace npukit::ops

// ---- Section NPUKIT_ALGORITHM_attention: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_attention

#include <functional>
#include <vector>

namespace npukit::ops {

using namespace Halide;

Attention define_attention(Func q, Func k, Func v, Func positions, Func mask, Expr heads, Expr kv_heads,
                           Expr head_dim, Expr s_max) {
  Attention a;
  Var d = a.d, h = a.h, t = a.t, s = a.s;
  Expr g = h / (heads / kv_heads);
  a.rd = RDom(0, head_dim, "rd");
  a.dot(s, h, t) = 0.0f;
  a.dot(s, h, t) += q(a.rd, h, t) * k(a.rd, s, g);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  a.score(s, h, t) = a.dot(s, h, t) / sqrt(cast<float>(head_dim)) + mask(s, t);

  // Live: causal and not masked out. The reductions below read only live positions.
  RDom rs(0, s_max, "rs");
  // strict_float: fast-math may assume no infinities and fold the comparison away.
  Expr live = rs <= positions(t) && strict_float(mask(rs, t) != neg_inf);
  rs.where(live);
  Expr sc = a.score(rs, h, t);
  // Pass 1: the max and whether any live score is NaN (then the head's output is NaN).
  Func mx("score_max");
  mx(h, t) = Tuple(neg_inf, cast<bool>(false), cast<bool>(false));
  // "any live" ORs the predicate (true wherever the update runs) rather than setting true:
  // an OR is commutative, so a schedule can rfactor the reduction over interleaved or
  // contiguous runs of positions and merge the runs' flags (a plain "= true" merges as
  // "the last run's flag").
  mx(h, t) = Tuple(strict_float(max(mx(h, t)[0], select(is_nan(sc), neg_inf, sc))),
                   mx(h, t)[1] || strict_float(is_nan(sc)), mx(h, t)[2] || live);
  // Pass 2: Σ exp(score − max) and Σ exp(score − max) · v.
  Expr m = mx(h, t)[0];
  a.weight(s, h, t) = exp(a.score(s, h, t) - m);
  Func den("softmax_den");
  den(h, t) = 0.0f;
  den(h, t) += a.weight(rs, h, t);
  Func num("softmax_num");
  num(d, h, t) = 0.0f;
  num(d, h, t) += a.weight(rs, h, t) * v(d, rs, g);

  Expr any_nan = mx(h, t)[1], any_live = mx(h, t)[2];
  const float nan = std::numeric_limits<float>::quiet_NaN();
  a.out(d, h, t) = select(any_nan, nan, !any_live, 0.0f, num(d, h, t) / den(h, t));
  a.stats = mx;
  a.den = den;
  a.num = num;
  return a;
}

}  // namespace npukit::ops

namespace npukit::ops {

using namespace Halide;

Expr exp_nonpositive(Expr x) {
  // The clamp keeps fast_exp's float-to-int conversion in range (−inf and garbage scores
  // at positions that are computed but not live); e^-100 is below fp32's smallest normal,
  // and fast_exp flushes it to 0.
  Expr e = fast_exp(clamp(x, -100.0f, 0.0f));
  // strict_float: fast-math may assume no NaNs and fold the test away.
  return select(strict_float(is_nan(x)), x, e);
}

namespace {

// The split algorithm, for one token (decode: `tokens` empty, position and mask(s) as
// given) or a block of them (`tokens` = {t}: every Func gains t after ro, the position
// and the mask row are the token's). `bound` is what loops run to: the position (decode)
// or a bound on every token's (prefill); liveness uses the token's own.
struct SplitInputs {
  Func q, k, v, mask;
  Expr heads, kv_heads, head_dim, s_max;
  std::function<Expr(Expr t)> position;  // of token t (decode: t is ignored)
  Expr bound;
  Expr split;
  int stats_block;
  Expr v_block;
  bool masked;
};

AttentionDecode define_split(const SplitInputs& in, bool per_token) {
  AttentionDecode a;
  Var d = a.d, ri = a.ri, ro = a.ro, s = a.s, c = a.c, g = a.g, h = a.h, t = a.t;
  const std::vector<Expr> tok = per_token ? std::vector<Expr>{t} : std::vector<Expr>{};
  // Args: `head`, then the token (prefill), then `tail`.
  auto at = [&](std::vector<Expr> head, const std::vector<Expr>& tail) {
    head.insert(head.end(), tok.begin(), tok.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const int hb = AttentionDecode::kHeadBlock;
  const Expr split = in.split, v_block = in.v_block;
  const int stats_block = in.stats_block;
  const bool masked = in.masked;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const float pos_inf = std::numeric_limits<float>::infinity();
  Expr group = in.heads / in.kv_heads;
  Expr s_max = in.s_max, head_dim = in.head_dim;

  // Position p of split c is live for a token when causal (p <= its position), inside the
  // cache and not masked out (mask = −inf). The causal bound is the RDoms' predicate
  // (below), which lowering turns into loop bounds (up to `bound`, which a prefill's tokens
  // share); the token's own position and the mask are selects, so that the inner loops
  // have no branches: positions not live get weight 0 and a v of 0, and nothing read for
  // them reaches the output. Every read of the cache or the mask goes through
  // clamp_to_bound: bounds inference does not narrow a box by a predicate, and the clamp
  // keeps the boxes inside the computed range (never a row past the bound or past the
  // cache), also when a schedule computes whole blocks of positions. Splits that start
  // past the bound are not computed at all (see rc below).
  Expr bound_end = min(in.bound, s_max - 1);
  Expr causal_end = min(in.position(t), s_max - 1);  // the token's (decode: = bound_end)
  auto clamp_to_bound = [&](Expr pos) { return min(pos, bound_end); };
  // The mask read at positions clamped to the bound: a Func that a schedule computes once
  // per split, so that the per-head work reads scores and mask at unclamped (dense)
  // positions, whole blocks of them (the positions past the bound are not live).
  a.mask_c(at({s}, {})) = per_token ? in.mask(clamp_to_bound(s), t) : in.mask(clamp_to_bound(s));
  // Without a mask every causal position is live, and the mask is never read.
  auto live = [&](Expr pos) {
    // A token's bound is tensor data. Written as pos <= causal_end, Halide's loop
    // partitioning splits a loop over positions at it (a copy loop, then a zero loop, with
    // extents read from positions[t]); as the sign bit of the difference, reinterpreted
    // (which the simplifier does not turn back into a comparison), no loop bound depends
    // on tensor data, and the simulator can evaluate every bound of the nest.
    Expr causal = per_token ? (reinterpret<uint32_t>(causal_end - pos) >> 31) == 0 : pos <= bound_end;
    return masked ? causal && strict_float(a.mask_c(at({pos}, {})) != neg_inf) : causal;
  };

  // The head index is clamped to the group: the extra heads of the last block repeat its
  // last head. Reading no other heads than the group's keeps a NaN in one group's q out of
  // the rest.
  Expr qh = g * group + min(ro * hb + ri, group - 1);
  a.qg(at({d, ri, ro}, {g})) = per_token ? in.q(d, qh, t) : in.q(d, qh);
  a.rd = RDom(0, head_dim, "rd");
  a.dot(at({s, ri, ro}, {g})) = 0.0f;
  // likely(): Halide partitions the scores' loop around the clamp, so that every block of
  // positions but the last reads its k rows at unclamped addresses (the clamp, a min on a
  // vector of row indices per row read, cost 10%). v's rows likewise (v_live below).
  a.dot(at({s, ri, ro}, {g})) += a.qg(at({a.rd, ri, ro}, {g})) * in.k(a.rd, min(likely(s), bound_end), g);
  Expr inv_sqrt_dh = 1.0f / sqrt(cast<float>(head_dim));
  auto score = [&](Expr pos) {
    Expr logit = a.dot(at({pos, ri, ro}, {g})) * inv_sqrt_dh;
    return masked ? logit + a.mask_c(at({pos}, {})) : logit;
  };

  // The split's stats, one value per head: the max over its live positions of a key of
  // the score (NaN as +Inf, −Inf as −FLT_MAX), −Inf where none is live. So +Inf says a live
  // score is NaN or +Inf (the head's output is NaN: +Inf − +Inf in the exponent), −Inf
  // that no position is live, and any other value is the max of the live scores, −FLT_MAX
  // standing in for −Inf: as the exponents' reference it gives the same weights
  // (exp(−Inf − ref) = 0 for either, exp(0) = 1 for a live −FLT_MAX). One float max per
  // score, where a Tuple of the max and two flags cost 38 instructions per vector.
  // The stats run over whole blocks of stats_block positions up to the bound's block
  // (live() holds the causal bound for the positions past it), so that a schedule can
  // vectorize them across a block. The predicate is on the block only, and makes the loop
  // stop at the bound's block; the min keeps bounds inference (which ignores predicates)
  // from asking for scores past that block.
  a.rs_all = RDom(0, stats_block, 0, split / stats_block, "rs_all");
  Expr last_block = max(bound_end - c * split, 0) / stats_block;
  a.rs_all.where(a.rs_all.y <= last_block);
  Expr p_all = c * split + min(a.rs_all.y, last_block) * stats_block + a.rs_all.x;
  // Past the bound (not live) the scores of the last block read dot there, whose k rows
  // are clamped to the bound.
  Expr sc = score(p_all);
  // (strict: Halide's simplifier moves the max through the scores' scaling, where
  // −FLT_MAX / scale overflows to −Inf.)
  Expr key = strict_float(select(is_nan(sc), pos_inf, max(sc, -std::numeric_limits<float>::max())));
  const std::vector<Expr> st = at({ri, ro}, {c, g});
  a.stats(st) = neg_inf;
  a.stats(st) = max(a.stats(st), select(live(p_all), key, neg_inf));
  // The split's max is its exponents' reference (with none live every weight is 0 by the
  // select below; with a live NaN or +Inf the output is NaN whatever the weights).
  Expr m_c = a.stats(st);
  a.weight(at({s, ri, ro}, {c, g})) = select(live(s), exp_nonpositive(score(s) - m_c), 0.0f);
  // d is clamped for the same reason as the heads in qg: a schedule may compute whole
  // blocks of d. v is zeroed where not live for the token (a prefill's tokens each have
  // their own), so that a v that is never read cannot reach the output as 0 · NaN.
  // likely(): Halide partitions the loop over a block's v rows around the clamp, so that
  // every block but the last runs without it (and without the select): on AVX2, whose
  // tiles of 16 columns run the row loop 8 times per row, that was 10% of a call (Zen 3,
  // one thread, hot S = 512 and 2048; docs/performance.md, session 40).
  a.v_live(at({d, s}, {g})) = select(live(s), in.v(min(d, head_dim - 1), clamp_to_bound(likely(s)), g), 0.0f);
  // Σ weight over whole blocks of stats_block positions up to the bound's block (the
  // positions past a token's position have weight 0), so that a schedule can vectorize
  // the sum across a block.
  a.rb = RDom(0, stats_block, 0, split / stats_block, "rb");
  a.rb.where(a.rb.y <= last_block);
  a.den(st) = 0.0f;
  // (The min, a no-op where the predicate holds, keeps the weights' bounds at that block.)
  a.den(st) += a.weight(at({c * split + min(a.rb.y, last_block) * stats_block + a.rb.x, ri, ro}, {c, g}));
  // Σ weight · v likewise over whole blocks of v_block positions, up to the bound's block;
  // the positions past a token's position add 0 · 0 (weight and v_live are 0 there).
  a.rv = RDom(0, v_block, 0, split / v_block, "rv");
  Expr last_v_block = max(bound_end - c * split, 0) / v_block;
  a.rv.where(a.rv.y <= last_v_block);
  Expr p_n = c * split + min(a.rv.y, last_v_block) * v_block + a.rv.x;
  const std::vector<Expr> nm = at({d, ri, ro}, {c, g});
  a.num(nm) = 0.0f;
  a.num(nm) += a.weight(at({p_n, ri, ro}, {c, g})) * a.v_live(at({d, p_n}, {g}));
  // What a task leaves, one row of head_dim + 4 values per head: Σ weight · v,
  // then the split's max, Σ weight and the two flags (1 or 0), each stored once. (As a
  // Tuple they repeated across the columns; their stores cost two threads about 20% of a
  // hot call at S = 64 on Zen 4.) likely() lets a schedule's loop over whole vectors of d
  // drop the selects (Halide partitions it there); num's column is clamped so that the
  // scalars' columns do not widen num's box, and where num is computed per column (a GPU
  // thread's), Halide skips it for those columns (the select's condition guards it).
  // A flag stored as 1 or 0, and read back.
  auto flag = [](Expr b) { return select(b, 1.0f, 0.0f); };
  auto is_set = [](Expr f) { return strict_float(f != 0.0f); };
  Expr dc = min(d, head_dim - 1);
  a.partial(nm) = select(likely(d < head_dim), a.num(at({dc, ri, ro}, {c, g})),  //
                         d == head_dim + AttentionDecode::kMax, m_c,                //
                         d == head_dim + AttentionDecode::kDen, a.den(st),          //
                         d == head_dim + AttentionDecode::kBad, flag(strict_float(m_c == pos_inf)),  //
                         flag(strict_float(m_c != neg_inf)));

  // Combine, over the splits up to the bound: the global max, the flags ORed, each split
  // rescaled by exp(m_c − max). A split with no live position (m_c = −inf) gets scale 0
  // (exp(−inf)). Where every live score is −inf the max is −FLT_MAX, every Σ weight 0 and
  // the output 0 / 0 = NaN, as the unsplit formula gives. (A prefill token's splits past
  // its own position have no live position: max −inf, flags false, Σ 0, so they add
  // nothing.)
  a.rc = RDom(0, bound_end / split + 1, "rc");
  // Split cc's scalar i (AttentionDecode::kMax ...).
  auto part = [&](Expr cc, int i) { return a.partial(at({head_dim + i, ri, ro}, {cc, g})); };
  const std::vector<Expr> cb = at({ri, ro}, {g});
  a.combined(cb) = Tuple(neg_inf, cast<bool>(false), cast<bool>(false));
  a.combined(cb) = Tuple(strict_float(max(a.combined(cb)[0], part(a.rc, AttentionDecode::kMax))),
                         a.combined(cb)[1] || is_set(part(a.rc, AttentionDecode::kBad)),
                         a.combined(cb)[2] || is_set(part(a.rc, AttentionDecode::kLive)));
  a.scale(at({ri, ro}, {c, g})) = exp_nonpositive(part(c, AttentionDecode::kMax) - a.combined(cb)[0]);
  a.total_den(cb) = 0.0f;
  a.total_den(cb) += a.scale(at({ri, ro}, {a.rc, g})) * part(a.rc, AttentionDecode::kDen);
  a.total_num(at({d, ri, ro}, {g})) = 0.0f;
  a.total_num(at({d, ri, ro}, {g})) += a.scale(at({ri, ro}, {a.rc, g})) * a.partial(at({d, ri, ro}, {a.rc, g}));

  Expr hr = h % group, hi = hr % hb, ho = hr / hb, hg = h / group;
  const std::vector<Expr> ch = at({hi, ho}, {hg});
  Expr any_bad = a.combined(ch)[1], any_live = a.combined(ch)[2];
  const float nan = std::numeric_limits<float>::quiet_NaN();
  a.out(at({d, h}, {})) = select(any_bad, nan, !any_live, 0.0f, a.total_num(at({d, hi, ho}, {hg})) / a.total_den(ch));
  auto part0 = [&](Expr dd) { return a.partial(at({dd, hi, ho}, {0, hg})); };
  a.single_scale(at({h}, {})) = select(is_set(part0(head_dim + AttentionDecode::kBad)), nan,
                                       !is_set(part0(head_dim + AttentionDecode::kLive)), 0.0f,
                                       1.0f / part0(head_dim + AttentionDecode::kDen));
  a.single(at({d, h}, {})) = part0(d) * a.single_scale(at({h}, {}));
  a.one_split = bound_end < split;
  return a;
}

}  // namespace

AttentionDecode define_attention_decode(Func q, Func k, Func v, Expr position, Func mask, Expr heads,
                                        Expr kv_heads, Expr head_dim, Expr s_max, Expr split,
                                        int stats_block, Expr v_block, bool masked) {
  SplitInputs in{q, k, v, mask, heads, kv_heads, head_dim, s_max, [position](Expr) { return position; }, position,
                 split, stats_block, v_block, masked};
  return define_split(in, false);
}

AttentionDecode define_attention_split_tokens(Func q, Func k, Func v, Func positions, Expr max_position, Func mask,
                                              Expr heads, Expr kv_heads, Expr head_dim, Expr s_max, Expr split,
                                              int stats_block, Expr v_block, bool masked) {
  SplitInputs in{q, k, v, mask, heads, kv_heads, head_dim, s_max, [positions](Expr t) { return positions(t); },
                 max_position, split, stats_block, v_block, masked};
  return define_split(in, true);
}

}  // namespace npukit::ops

// The attention-core Generators (op `attention`): npukit_attention_decode, split, for one
// token (a CPU calls it for every token in turn, a GPU when T = 1), and npukit_attention
// for any number of tokens on a GPU.
// Storage types from `q.type`, `k.type`, `v.type` and `o.type`.
#include <algorithm>

#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/horizontal_sums.h"
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
    // A CPU runs the split kernel below for every token instead (runtime/ops/attention.cpp:
    // 7x faster at T = 64 than this algorithm's task per query head and token).
    _halide_user_assert(target.has_gpu_feature())
        << "npukit_attention: GPU targets only; CPU tiers run npukit_attention_decode per token\n";
    schedules::gpu::schedule_attention(att, out, target);
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

// Positions below which a decode call's tasks prefetch their whole k and v rows as they
// start: the prefetches ahead (32 rows on the avx512 tier) would find no block there.
constexpr int kShortCachePositions = 32;

// Runs of a split's live positions whose blocks of scores the version without software
// prefetches takes in turn (block 0 of each run, then block 1 of each, ...): two k streams
// in two pages, each of which the L2 streamer follows, keep more lines in flight than one,
// where the arithmetic between loads leaves few demand misses outstanding. Intel Xeon with
// AMX, one thread, cold, S = 2048 … 32768, share of read: 1 run 0.79–0.82, 2 runs
// 0.88–0.90, 3 0.87, 4 0.82–0.86, 6 0.80, 8 0.79 (alternating rounds); two threads the
// same with 2 and 4 runs (0.84–0.90). v's blocks in 4 runs measured slower (0.83 -> 0.79).
constexpr int kScoreStreams = 2;
// Below kShortRunsBelow positions (a task's k under 256 KB at Dh = 128), three runs: one
// thread, cold S = 512, alternating rounds: 2 runs 187–189 us, 3 runs 179–184 (0.77 ->
// 0.80 of read), 4 runs 190 (session 37).
constexpr int kShortCacheScoreStreams = 3;
constexpr int kShortRunsBelow = 1024;

// The d columns one sweep of a block of v rows accumulates: 4 vectors × 4 heads = 16
// accumulators with AVX-512's 32 registers, 2 × 4 = 8 with AVX2's 16.
int decode_v_columns(const Halide::Target& target) {
  const int vec = target.natural_vector_size<float>();
  return (vec >= 16 ? 4 : 2) * vec;
}

// Whether the decode schedule prefetches v rows as well as k rows (see the block schedule),
// and so where the prefetched lines go: k rows alone (8 KB ahead) into L1; k and v rows
// together into L2, since 16 KB of lines not yet read in a 32 KB L1 evicted the task's
// own data. Zen 4, avx512 tier, cold: L1 → L2 made S = 2048 586 → 492 µs on one thread
// and 404 → 289–335 µs on two (S = 32768: 9.1–10.6 → 7.7–8.2 ms, 5.1–6.0 → 4.3–4.7 ms);
// its avx2 tier, k rows only, measured 2% slower into L2 on one thread.
bool decode_prefetches_v(const Halide::Target& target) { return decode_v_columns(target) >= 64; }

// The decode schedule. Stage 1 runs one task per (split, kv head): it reads each k and v
// row of its split once, from DRAM, for all the group's query heads. Stage 2 (the combine)
// reads only the partials, Hq · (Dh + 4) values per split.
void schedule_decode(ops::AttentionDecode& a, Halide::Func out, const Halide::Target& target,
                     const Halide::ImageParam& k, const Halide::ImageParam& v, Halide::Expr head_dim,
                     Halide::Expr position, Halide::Expr prefetch, int split, bool masked) {
  using namespace Halide;
  const int vec = target.natural_vector_size<float>();
  const int hb = ops::AttentionDecode::kHeadBlock;
  // Positions whose scores are computed together: 4 × 4 heads = 16 vector accumulators
  // with AVX-512's 32 registers, 2 × 4 = 8 with AVX2's and SSE's 16.
  const int score_positions = vec >= 16 ? 4 : 2;
  const int softmax_positions = npukit::softmax_positions(target);
  const int v_columns = decode_v_columns(target);
  const TailStrategy guard = TailStrategy::GuardWithIf;

  Var task("task");
  // d bounded to its row (Σ weight · v, then the scalars): otherwise its extent, and so
  // num's tiles of d and the box of v, were run-time values even where head_dim is a
  // constant (the specializations below), and Halide split the v loops around them into
  // three copies and prefetched v per row in a loop of run-time length. Xeon with AMX, one
  // thread, cold: S = 16 11.1 -> 9.9 us, S = 512 233 -> 222 us, S = 8192 0.83 -> 0.89 of
  // read (docs/performance.md, session 39).
  a.partial.compute_root()
      .bound(a.ri, 0, hb)
      .bound(a.d, 0, head_dim + ops::AttentionDecode::kScalars)
      .fuse(a.c, a.g, task)
      .vectorize(a.d, vec, guard);
  // A short cache's tasks, whose k and v rows (8 KB at S = 16, Dh = 128) lie within the
  // first blocks, which the prefetches ahead (below, left out of this version) never
  // reach: each task prefetches them all as it starts instead, so that DRAM serves them at
  // once rather than one stalled row after another (Zen 4, one thread, cold S = 16:
  // 11.4 -> 8.8 us). Fetching further ahead measured slower (cold S = 16, 7.6 us here): the
  // next task's rows, one task ahead, 9.1-9.4 us; a pair's or four tasks' rows at once,
  // 9.2 and 10.1 us. (At the fused task loop an offset of 1 gives this task's box, as its
  // c and g are lets the offset does not reach; a split of that loop, prefetched at the
  // outer loop, gives the next one.)
  // Its tasks run in parallel too: once the partials' scalars were stored once per head,
  // a second thread paid for its wake-up even at S = 16 (Zen 4, against the serial loop:
  // two threads hot 6.7 -> 5.0 us, cold 8.2 -> 6.8 us; one thread hot 6.7 -> 6.0, cold
  // 8.1 -> 7.8 us). Before that, the parallel version had lost: 15.6 against 9.3 us hot.
  // The common head dims with constant trip counts: LLVM then keeps the inner
  // accumulators in registers without zeroing their stack copies first (a memset call per
  // block of positions), and schedules the unrolled loops. 15% faster with the cache in
  // L3, 5–7% from DRAM, at Dh = 128.
  const Expr short_cache = position < kShortCachePositions;
  Stage short_version = a.partial.specialize(short_cache);
  short_version.prefetch(k, task, task, 0, PrefetchBoundStrategy::NonFaulting);
  short_version.prefetch(v, task, task, 0, PrefetchBoundStrategy::NonFaulting);
  // (A specialization copies the schedule when it is made: each version is scheduled.)
  for (Stage version : {short_version, Stage(a.partial)}) {
    version.parallel(task);
    version.specialize(head_dim == 128);
    version.specialize(head_dim == 64);
  }
  // A task's small buffers, sized by the group's heads (its q rows, the split's stats and
  // sums, Σ weight · v), go on the stack (Halide's alloca up to 16 KB a buffer; beyond that,
  // one heap block per task): from the heap they were 12 allocations a task, 9% of a call
  // at S = 16 (Zen 4, hot: 7.5 -> 6.9 us).
  const MemoryType small = MemoryType::Stack;
  // Vectorized: widened one fp16 value at a time, q was 40% of a task at S = 16 (Zen 4).
  a.qg.compute_at(a.partial, task).store_in(small).vectorize(a.d, vec, guard);
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
  // Four versions: prefetching (below), in runs taken in turn (no prefetch, a cache past
  // the short one: kShortCacheScoreStreams runs below kShortRunsBelow, else kScoreStreams)
  // and plain (a short cache). Each names its innermost loop over blocks `so`, where lanes
  // is computed.
  Stage scores = a.dot.update();
  scores.atomic();
  const int k_blocks_ahead = 8, v_blocks_ahead = 2;
  const Expr prefetch_ahead = !short_cache && prefetch;
  Stage scores_prefetched = scores.specialize(prefetch_ahead);
  Stage scores_in_runs = scores.specialize(!short_cache);
  for (Stage version : {scores_prefetched, scores}) {
    version.split(a.s, so, si, score_positions, TailStrategy::RoundUp).reorder(rdi, a.ri, si, so, a.ro);
  }
  // Blocks per run, from split 0's live positions (the task's split when the cache ends
  // in it; a later, shorter last split just fills fewer runs). The guard drops the blocks
  // past the box.
  Var blocks("blocks"), in_run("in_run");
  auto take_in_runs = [&](Stage version, int streams) {
    Expr run_blocks = (min(split, position + 1) + score_positions * streams - 1) / (score_positions * streams);
    version.split(a.s, blocks, si, score_positions, TailStrategy::RoundUp)
        .split(blocks, so, in_run, run_blocks, TailStrategy::GuardWithIf)
        .reorder(rdi, a.ri, si, so, in_run, a.ro);
  };
  Stage scores_in_short_runs = scores_in_runs.specialize(position < kShortRunsBelow);
  take_in_runs(scores_in_short_runs, kShortCacheScoreStreams);
  take_in_runs(scores_in_runs, kScoreStreams);
  for (Stage version : {scores_prefetched, scores_in_short_runs, scores_in_runs, scores}) {
    version.vectorize(rdi).vectorize(a.ri).vectorize(si);
  }
  // k rows prefetched 8 blocks (32 rows, 8 KB of fp16 at Dh = 128) ahead, v rows 2 blocks
  // of 16 rows ahead (below): one Zen 4 core's hardware prefetchers alone left it stalled
  // on most lines it read (cold, one thread: 22 GB/s without, 26 with; 4 KB or 16 KB ahead
  // measured slower than 8 KB). Past the cache's end a prefetch does nothing (NonFaulting
  // leaves out the clamps). Where the runtime says `prefetch` = false (an Intel Xeon with
  // AMX, whose hardware prefetchers do better alone: runtime/ops/split_attention.h), the
  // version without them runs, its scores in runs (kScoreStreams).
  // (A short cache has no block that far ahead: there the prefetch would fetch the
  // clamped last row again and again, so its version leaves it out.)
  scores_prefetched.prefetch(k, so, so, k_blocks_ahead, PrefetchBoundStrategy::NonFaulting);
  lanes.compute_at(a.dot, so).reorder_storage(u, a.ri, a.s, a.ro, a.g).vectorize(u).unroll(a.ri).unroll(a.s);
  lanes.update().reorder(u, a.ri, a.s, rdo).vectorize(u).unroll(a.ri).unroll(a.s);

  // The split's max and flags: softmax_positions interleaved accumulators (an rfactor
  // over positions), each a vector of the heads, so that one vector covers
  // softmax_positions positions × the heads.
  a.stats.compute_at(a.partial, task).store_in(small).vectorize(a.ri);
  Var j("j");
  Func stats_lanes = a.stats.update().rfactor(a.rs_all.x, j);
  a.stats.update().reorder(a.ri, a.rs_all.x, a.ro).vectorize(a.ri);
  stats_lanes.compute_at(a.partial, task)
      .store_in(small)
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
  a.den.compute_at(a.partial, task).store_in(small).vectorize(a.ri);
  Func den_lanes = a.den.update().rfactor(a.rb.x, j);
  a.den.update().reorder(a.ri, a.rb.x, a.ro).vectorize(a.ri);
  den_lanes.compute_at(a.partial, task)
      .store_in(small)
      .reorder_storage(a.ri, j, a.ro, a.c, a.g)
      .vectorize(a.ri)
      .vectorize(j);
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
  a.num.compute_at(a.partial, task).store_in(small).align_bounds(a.d, v_columns).vectorize(a.d, vec, guard);
  Func block = a.num.update().rfactor(rso, blk);
  a.num.update()
      .split(a.d, dd, dv, v_columns, guard)
      .reorder(dv, a.ri, a.ro, dd, rso)
      .vectorize(dv, vec)
      .unroll(a.ri);
  block.compute_at(a.num, a.ro)
      .store_in(MemoryType::Stack)
      .bound_storage(a.d, v_columns)
      .bound_storage(a.ri, hb)
      .vectorize(a.d, vec, guard)
      .unroll(a.ri);
  block.update().reorder(a.d, a.ri, rsi).vectorize(a.d, v_columns, guard).unroll(a.ri);
  // v's rows prefetched 2 blocks ahead from the block's row loop: each row's tile fetches
  // the same tile of the row 32 rows on, so the requests are spread over the rows, only for
  // blocks the predicate lets run, and never for a short cache. (From the tile loop, every
  // tile fetched the whole box of the block two ahead at its start, a burst of 128 requests:
  // Zen 4, avx512, one thread, cold S = 2048 511–522 -> 454–514 us, S = 8192 1.96–2.12 ->
  // 1.78–2.02 ms, hot S = 2048 517–572 -> 433–467 us. At the block loop, outside the
  // predicate's test, it ran over the whole split past the position.)
  // Only where a tile is wide (AVX-512's 64 columns): AVX2's 16-column tiles, a quarter of a
  // line per row, fetch each line four times, and cost more than the prefetch gains (Zen 4
  // forced to avx2, one thread: hot S = 2048 580–622 -> 728–841 us, cold S = 2048 660–674 ->
  // 796–800 us; Zen 3 with the tile loop's version: S = 2048 from L3 800 -> 1000 us).
  if (decode_prefetches_v(target)) {
    block.update().specialize(prefetch_ahead).prefetch(v, rsi, rsi, v_blocks_ahead * kVRows,
                                                       PrefetchBoundStrategy::NonFaulting);
  }

  // The combine: small (Hq · Dh per split), once for all heads.
  a.combined.compute_root();
  a.scale.compute_root();
  a.total_den.compute_root();
  a.total_num.compute_root().vectorize(a.d, vec, guard);
  a.total_num.update().vectorize(a.d, vec, guard);
  // Once per head, in a register (from the heap it was one more allocation a call).
  a.single_scale.compute_at(out, a.h);
  out.vectorize(a.d, vec, guard);
  // Its own loop for one split, which reads split 0's partial alone (and so only one of
  // the output's two selects' arms).
  out.specialize(a.one_split);
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
  // Whether the CPU schedule prefetches k and v rows ahead (the runtime decides per CPU:
  // runtime/ops/split_attention.h); the version without runs on the hardware prefetchers.
  Input<bool> prefetch{"prefetch"};
  Output<Halide::Buffer<void, 3>> o{"o"};             // (Dh, Hq, 1)

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    _halide_user_assert(k.type() == v.type())
        << "npukit_attention_decode: k.type " << k.type() << " and v.type " << v.type()
        << " must match\n";
    ops::add_prefetch_bitcode(*get_externs_map(), get_target(),
                              decode_prefetches_v(get_target()) ? ops::PrefetchLevel::l2 : ops::PrefetchLevel::l1);
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
    // On a CPU a cache within one split (every S up to `split`) takes split 0's output
    // directly, and the combine's stages are skipped.
    Expr value = gpu ? att.out(d, h) : select(att.one_split, att.single(d, h), att.out(d, h));
    out(d, h, t) = ops::narrow_from_f32(value, o.type(), target);
    o = out;
    q.dim(2).set_bounds(0, 1);
    mask.dim(1).set_bounds(0, 1);
    o.dim(2).set_bounds(0, 1);
    if (gpu) {
      schedules::gpu::schedule_attention_decode(att, out, masked, target);
      return;
    }
    schedule_decode(att, out, target, Halide::ImageParam(k), Halide::ImageParam(v), q.dim(0).extent(), position,
                    prefetch, split_positions, masked);
  }

  void schedule() {
    ops::add_prefetch_line_steps(get_pipeline());
    ops::add_horizontal_sums(get_pipeline(), get_target());
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::AttentionGenerator, npukit_attention)
HALIDE_REGISTER_GENERATOR(npukit::AttentionDecodeGenerator, npukit_attention_decode)

#endif  // NPUKIT_ALGORITHM_attention
