#include "ops/attention.h"

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
  // vector of row indices per row read, cost 10%). On v's scalar row index it gained
  // nothing measurable.
  a.dot(at({s, ri, ro}, {g})) += a.qg(at({a.rd, ri, ro}, {g})) * in.k(a.rd, min(likely(s), bound_end), g);
  Expr inv_sqrt_dh = 1.0f / sqrt(cast<float>(head_dim));
  auto score = [&](Expr pos) {
    Expr logit = a.dot(at({pos, ri, ro}, {g})) * inv_sqrt_dh;
    return masked ? logit + a.mask_c(at({pos}, {})) : logit;
  };

  // The split's max over live scores (NaN excluded), whether a live score is NaN or +Inf
  // (either makes the head's output NaN: +Inf − +Inf in the exponent), and whether any
  // position is live.
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
  Expr live_p = live(p_all);
  const std::vector<Expr> st = at({ri, ro}, {c, g});
  a.stats(st) = Tuple(neg_inf, cast<bool>(false), cast<bool>(false));
  a.stats(st) = Tuple(max(a.stats(st)[0], select(live_p && strict_float(!is_nan(sc)), sc, neg_inf)),
                      a.stats(st)[1] || (live_p && strict_float(is_nan(sc) || sc == pos_inf)),
                      a.stats(st)[2] || live_p);
  // The split's reference for its exponents: its max, or 0 when that is −inf (no live
  // position, or all live scores −inf): then every weight is exp(−inf) = 0 and the split
  // adds 0 (or 0 · v, NaN where v is NaN or Inf, as the unsplit formula gives).
  Expr m_c = a.stats(st)[0];
  Expr ref = select(strict_float(m_c == neg_inf), 0.0f, m_c);
  a.weight(at({s, ri, ro}, {c, g})) = select(live(s), exp_nonpositive(score(s) - ref), 0.0f);
  // d is clamped for the same reason as the heads in qg: a schedule may compute whole
  // blocks of d. v is zeroed where not live for the token (a prefill's tokens each have
  // their own), so that a v that is never read cannot reach the output as 0 · NaN.
  a.v_live(at({d, s}, {g})) = select(live(s), in.v(min(d, head_dim - 1), clamp_to_bound(s), g), 0.0f);
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
  a.partial(nm) = Tuple(a.num(nm), m_c, a.den(st), a.stats(st)[1], a.stats(st)[2]);

  // Combine, over the splits up to the bound: the global max, the flags ORed, each split
  // rescaled by exp(m_c − max). A split with m_c = −inf gets scale 0 (exp(−inf)); when the
  // global max is −inf too, every scale is NaN (−inf − −inf) and so is the output, as the
  // unsplit formula gives for all-−inf live scores. (A prefill token's splits past its own
  // position have no live position: max −inf, flags false, Σ 0, so they add nothing.)
  a.rc = RDom(0, bound_end / split + 1, "rc");
  auto part = [&](Expr dd, Expr cc, int i) { return a.partial(at({dd, ri, ro}, {cc, g}))[i]; };
  const std::vector<Expr> cb = at({ri, ro}, {g});
  a.combined(cb) = Tuple(neg_inf, cast<bool>(false), cast<bool>(false));
  a.combined(cb) = Tuple(strict_float(max(a.combined(cb)[0], part(0, a.rc, 1))), a.combined(cb)[1] || part(0, a.rc, 3),
                         a.combined(cb)[2] || part(0, a.rc, 4));
  a.scale(at({ri, ro}, {c, g})) = exp_nonpositive(part(0, c, 1) - a.combined(cb)[0]);
  a.total_den(cb) = 0.0f;
  a.total_den(cb) += a.scale(at({ri, ro}, {a.rc, g})) * part(0, a.rc, 2);
  a.total_num(at({d, ri, ro}, {g})) = 0.0f;
  a.total_num(at({d, ri, ro}, {g})) += a.scale(at({ri, ro}, {a.rc, g})) * part(d, a.rc, 0);

  Expr hr = h % group, hi = hr % hb, ho = hr / hb, hg = h / group;
  const std::vector<Expr> ch = at({hi, ho}, {hg});
  Expr any_bad = a.combined(ch)[1], any_live = a.combined(ch)[2];
  const float nan = std::numeric_limits<float>::quiet_NaN();
  a.out(at({d, h}, {})) = select(any_bad, nan, !any_live, 0.0f, a.total_num(at({d, hi, ho}, {hg})) / a.total_den(ch));
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
