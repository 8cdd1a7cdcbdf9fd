// CPU schedules of the fused qkv_attention op's projections (ops/qkv_attention.h).
#pragma once

#include "Halide.h"
#include "ops/qkv_attention.h"

namespace npukit::schedules::cpu {

// The number of fp32 partial sums per row for T tokens: one native vector.
int linear_lanes(const Halide::Target& target);

// The same for one token (LinearForTokens::one_token) over `weights` (their storage
// type): several vectors for fp16 weights widened by F16C, which one token reads one row
// at a time (so that one row's FMA chains cover the FMA latency), else one.
int linear_one_token_lanes(const Halide::Target& target, const Halide::Type& weights);

// The linear layer computed inside `wrapper(n, t)`, a pure Func of lin.out (the kernel's
// output, or a root copy), its partial sums in registers. One token (decode) runs
// lin.one_token: for fp16 weights widened by F16C in blocks of 4 rows (AVX-512; one row on
// AVX2), 16 rows per parallel task, so that each weight is read exactly once, the block's
// rows one after the other (one contiguous stream per task) or, where `row_streams` holds,
// together (4 streams); else
// blocks of 8 rows, one task each, the rows unrolled. T > 1 runs lin.tokens in blocks of 4
// rows × 6 tokens (AVX-512; 2 rows × 6 tokens on AVX2 and SSE), one task per 8 rows: the
// task's weights (8 · K elements) stay in L1/L2 while every token passes over them, each
// weight vector serves the block's tokens and each x value its rows. Every block computes
// all its rows and tokens
// (the last block, fewer rows than a block and an odd T too): w and x must be read at
// linear_clamp, and the wrapper stores only the rows and tokens that exist.
void schedule_linear(ops::LinearForTokens& lin, Halide::Func wrapper, const Halide::Type& weights,
                     const Halide::Target& target, Halide::Expr row_streams);

// The weight row (or token of x) that index `i` of a schedule_linear block reads: i, or the
// last of `n` for the rows (tokens) past it that a partial block computes and never stores.
Halide::Expr linear_clamp(Halide::Expr i, Halide::Expr n);

// The QKV projection (schedule_linear on the whole w_qkv), then the (cos, sin) table and the
// rotations, small next to the weights; the three outputs vectorized along head_dim.
void schedule_qkv_rope(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new,
                       const Halide::Type& weights, const Halide::Target& target, Halide::Expr row_streams);

// The int8 path's QKV step: the dequantized rows (ops::define_qkv_rope_of_rows) computed
// once, vectorized, then the same rotations and stores.
void schedule_qkv_rope_of_rows(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new,
                               const Halide::Target& target);

// What both share: the (cos, sin) table, the rotations and the three outputs.
void schedule_rope_outputs(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new,
                           const Halide::Target& target);

}  // namespace npukit::schedules::cpu
