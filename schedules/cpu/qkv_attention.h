// CPU schedules of the fused qkv_attention op's projections (ops/qkv_attention.h).
#pragma once

#include "Halide.h"
#include "ops/qkv_attention.h"

namespace npukit::schedules::cpu {

// The number of fp32 partial sums per row for T tokens: one native vector.
int linear_lanes(const Halide::Target& target);

// The same for one token (LinearForTokens::one_token) over `weights` (their storage
// type): several vectors, so that one row's FMA chains cover the FMA latency; 0 where one
// token runs the blocks of T tokens too.
int linear_one_token_lanes(const Halide::Target& target, const Halide::Type& weights);

// The linear layer computed inside `wrapper(n, t)`, a pure Func of lin.out (the kernel's
// output, or a root copy), its partial sums in registers. One token (decode), where
// lin.one_token is defined, runs it one row at a time, 16 rows per parallel task, so that
// each weight is read exactly once, in one contiguous stream per task. Otherwise (and
// T > 1) lin.tokens runs in blocks of 8
// rows, one task each, per token one vector of partial sums per row, the rows unrolled: the
// block's weights (8 · K elements) stay in L1/L2 while every token passes over them. Every
// block computes all its rows (the last block and fewer rows than a block too): the weights
// must be read at linear_weight_row, and the wrapper stores only the rows that exist.
void schedule_linear(ops::LinearForTokens& lin, Halide::Func wrapper, const Halide::Target& target);

// The weight row that output row `r` of schedule_linear reads: r, or the last of `n_rows`
// for the rows past it that a partial block computes and never stores.
Halide::Expr linear_weight_row(Halide::Expr r, Halide::Expr n_rows);

// The QKV projection (schedule_linear on the whole w_qkv), then the (cos, sin) table and the
// rotations, small next to the weights; the three outputs vectorized along head_dim.
void schedule_qkv_rope(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new,
                       const Halide::Target& target);

// The int8 path's QKV step: the dequantized rows (ops::define_qkv_rope_of_rows) computed
// once, vectorized, then the same rotations and stores.
void schedule_qkv_rope_of_rows(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new,
                               const Halide::Target& target);

// What both share: the (cos, sin) table, the rotations and the three outputs.
void schedule_rope_outputs(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new,
                           const Halide::Target& target);

}  // namespace npukit::schedules::cpu
