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

}  // namespace npukit::ops
