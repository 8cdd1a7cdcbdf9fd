// The projections of the fused `qkv_attention` op as pure Halide algorithms: a linear layer
// (y = x · wᵀ with fp32 partial sums over lanes) and, on top of it, the QKV projection with
// RoPE of q and k. The attention core between them is ops/attention.h; the runtime chains
// the kernels (runtime/ops/qkv_attention.cpp).
#pragma once

#include "Halide.h"
#include "ops/rope.h"

namespace npukit::ops {

// y(n, t) = Σ_k x(k, t) · w(k, n) in fp32. The sum keeps `lanes` partial sums
// part(l, n, t) = Σ_j x(j·lanes + l, t) · w(j·lanes + l, n) over whole lane groups, then
// adds them (l in order) and the K % lanes tail: the order a vectorized dot product has, so
// that the schedule can keep one vector of partial sums per row in a register.
struct Linear {
  Halide::Var l{"l"}, n{"n"}, t{"t"};
  Halide::RDom rk;     // lane groups, [0, K / lanes)
  Halide::RDom rl;     // lanes, [0, lanes)
  Halide::RDom rtail;  // [K / lanes · lanes, K)
  Halide::Func part{"linear_part"};  // (l, n, t)
  Halide::Func out{"linear"};        // (n, t)
  int lanes = 0;
};

// x(k, t) and w(k, n) are fp32 Funcs (widened from storage by the caller); K their length.
Linear define_linear(Halide::Func x, Halide::Func w, Halide::Expr K, int lanes);

// qkv = x · w_qkvᵀ, split by rows into q (Hq heads), k and v (Hkv heads each) of head_dim,
// q and k rotated by RoPE (rotary_dim = head_dim) at positions pos + t, in the style that the
// runtime flag `interleaved` picks (both are defined; rotating T·(Hq + Hkv)·Dh values twice
// costs nothing next to the weights, and one kernel serves both styles). v is not rotated.
struct QkvRope {
  Linear proj;                // (row, t), rows of w_qkv
  Halide::Func rows{"qkv_rows"};        // (row, t): proj.out, where the schedule materialises it
  Halide::Func positions{"positions"};  // (t): pos + t
  RopeAngles angles;
  Rope q_half, k_half, q_interleaved, k_interleaved;  // both styles, (d, h, t) / (d, g, t), fp32
  Halide::Func q{"q_rot"}, k{"k_rot"};  // the style `interleaved` picks, fp32
  Halide::Func v{"v_new"};    // (d, g, t), fp32
};

// q, k and v read the projection through `rows`, a pure Func the schedule can compute once
// in blocks of rows.
QkvRope define_qkv_rope(Halide::Func x, Halide::Func w, Halide::Expr D, Halide::Expr heads,
                        Halide::Expr kv_heads, Halide::Expr head_dim, Halide::Expr pos, Halide::Expr theta,
                        Halide::Expr interleaved, int lanes);

// The same split and rotation over rows(row, t) projected elsewhere (the int8 path's
// dequantized accumulators, ops/per_token_quant.h); `proj` is left undefined.
QkvRope define_qkv_rope_of_rows(Halide::Func rows, Halide::Expr heads, Halide::Expr kv_heads,
                                Halide::Expr head_dim, Halide::Expr pos, Halide::Expr theta,
                                Halide::Expr interleaved);

}  // namespace npukit::ops
