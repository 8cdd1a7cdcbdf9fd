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
// heads of its group at once (query head h = g·G + r, G = heads / kv_heads), the split's
// partial softmax: its max m_c, Σ exp(score − m_c) and Σ exp(score − m_c) · v over its live
// positions, so that each k and v row is read once. A combine stage rescales the partials
// by exp(m_c − max_c m_c) and sums them; the NaN and any-live flags are ORed.
struct AttentionDecode {
  Halide::Var d{"d"}, r{"r"}, s{"s"}, c{"c"}, g{"g"}, h{"h"};
  Halide::RDom rd;                    // over head_dim
  Halide::RDom rs;                    // over the positions of one split
  Halide::RDom rc;                    // over the splits
  Halide::Func qg{"qg"};              // (d, r, g): the query heads of group g, fp32
  Halide::Func dot{"qk"};             // (s, r, g): q·k, fp32
  Halide::Func stats{"split_stats"};  // (r, c, g): Tuple(max live score, any NaN/+Inf, any live)
  Halide::Func weight{"weight"};      // (s, r, c, g): exp(score − the split's reference), 0 if not live
  Halide::Func v_live{"v_live"};      // (d, s, g): v, 0 if not live
  Halide::Func den{"split_den"};      // (r, c, g): Σ weight
  Halide::Func num{"split_num"};      // (d, r, c, g): Σ weight · v
  Halide::Func partial{"partial"};    // (d, r, c, g): Tuple(num, max, den, flags): what a task leaves
  Halide::Func combined{"combined"};  // (r, g): Tuple(global max, any NaN/+Inf, any live)
  Halide::Func scale{"split_scale"};  // (r, c, g): exp(m_c − global max)
  Halide::Func total_den{"total_den"};  // (r, g)
  Halide::Func total_num{"total_num"};  // (d, r, g)
  Halide::Func out{"attention"};      // (d, h), fp32
};

// q(d, h), k(d, s, g), v(d, s, g) in fp32; position: the token's position (in [0, s_max));
// mask(s) fp32. `split` is the number of cache positions per split.
AttentionDecode define_attention_decode(Halide::Func q, Halide::Func k, Halide::Func v, Halide::Expr position,
                                        Halide::Func mask, Halide::Expr heads, Halide::Expr kv_heads,
                                        Halide::Expr head_dim, Halide::Expr s_max, int split);

// exp(x) for x <= 0 (or NaN), vectorizable: Halide's fast_exp (about 1.5 ulp) with
// underflow flushed to 0, −inf giving 0 and NaN kept NaN. Halide's exp() calls libm expf
// once per lane, which costs more than reading the cache.
Halide::Expr exp_nonpositive(Halide::Expr x);

}  // namespace npukit::ops
