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
  Halide::Func stats{"split_stats"};  // (ri, ro, c, g): Tuple(max live score, any NaN/+Inf, any live)
  Halide::Func weight{"weight"};      // (s, ri, ro, c, g): exp(score − the split's reference), 0 if not live
  Halide::Func v_live{"v_live"};      // (d, s, g): v, 0 if not live
  Halide::Func den{"split_den"};      // (ri, ro, c, g): Σ weight
  Halide::Func num{"split_num"};      // (d, ri, ro, c, g): Σ weight · v
  Halide::Func partial{"partial"};    // (d, ri, ro, c, g): Tuple(num, max, den, flags): what a task leaves
  Halide::Func combined{"combined"};  // (ri, ro, g): Tuple(global max, any NaN/+Inf, any live)
  Halide::Func scale{"split_scale"};  // (ri, ro, c, g): exp(m_c − global max)
  Halide::Func total_den{"total_den"};  // (ri, ro, g)
  Halide::Func total_num{"total_num"};  // (d, ri, ro, g)
  Halide::Func out{"attention"};      // (d, h), fp32
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
