// The projections of the fused `qkv_attention` op as pure Halide algorithms: a linear layer
// (y = x · wᵀ with fp32 partial sums over lanes) and, on top of it, the QKV projection with
// RoPE of q and k. The attention core between them is ops/attention.h; the runtime chains
// the kernels (runtime/ops/qkv_attention.cpp).
#pragma once

#include <string>

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
  Halide::Func part;  // (l, n, t): `name`_part
  Halide::Func out;   // (n, t): `name`
  int lanes = 0;
};

// x(k, t) and w(k, n) are fp32 Funcs (widened from storage by the caller); K their length.
// `name` names the Funcs (unique within a pipeline).
Linear define_linear(Halide::Func x, Halide::Func w, Halide::Expr K, int lanes, const std::string& name = "linear");

// The linear layer as a kernel runs it: `tokens` for any number of tokens T and, where the
// target's schedule sums a single token's rows its own way, `one_token` (with lanes of its
// own; one_token.lanes == 0 where not) for T = 1. out(n, t) selects between the two on
// T == 1, so a consumer specialized on T == 1 computes only the one selected (Halide skips
// the other's stages); without one_token, out is tokens.out.
struct LinearForTokens {
  Linear tokens, one_token;
  Halide::Expr T;
  Halide::Func out{"linear_for_tokens"};  // (n, t)
};

LinearForTokens define_linear_for_tokens(Halide::Func x, Halide::Func w, Halide::Expr K, Halide::Expr T, int lanes,
                                         int one_token_lanes);

// qkv = x · w_qkvᵀ, split by rows into q (Hq heads), k and v (Hkv heads each) of head_dim,
// q and k rotated by RoPE (rotary_dim = head_dim) at positions pos + t, in the style that the
// runtime flag `interleaved` picks (both are defined; rotating T·(Hq + Hkv)·Dh values twice
// costs nothing next to the weights, and one kernel serves both styles). v is not rotated.
struct QkvRope {
  LinearForTokens proj;       // (row, t), rows of w_qkv
  Halide::Func rows{"qkv_rows"};        // (row, t): proj.out, where the schedule materialises it
  Halide::Func positions{"positions"};  // (t): pos + t
  RopeAngles angles;
  Rope q_half, k_half, q_interleaved, k_interleaved;  // both styles, (d, h, t) / (d, g, t), fp32
  Halide::Func q{"q_rot"}, k{"k_rot"};  // the style `interleaved` picks, fp32
  Halide::Func v{"v_new"};    // (d, g, t), fp32
};

// q, k and v read the projection `proj` (of w_qkv) through `rows`, a pure Func the schedule
// can compute once in blocks of rows.
QkvRope define_qkv_rope(const LinearForTokens& proj, Halide::Expr heads, Halide::Expr kv_heads,
                        Halide::Expr head_dim, Halide::Expr pos, Halide::Expr theta, Halide::Expr interleaved);

// The same split and rotation over rows(row, t) projected elsewhere (the int8 path's
// dequantized accumulators, ops/per_token_quant.h); `proj` is left undefined.
QkvRope define_qkv_rope_of_rows(Halide::Func rows, Halide::Expr heads, Halide::Expr kv_heads,
                                Halide::Expr head_dim, Halide::Expr pos, Halide::Expr theta,
                                Halide::Expr interleaved);

}  // namespace npukit::ops

// ---- Section NPUKIT_ALGORITHM_qkv_attention: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_qkv_attention

namespace npukit::ops {

using namespace Halide;

Linear define_linear(Func x, Func w, Expr K, int lanes, const std::string& name) {
  Linear a;
  a.lanes = lanes;
  a.part = Func(name + "_part");
  a.out = Func(name);
  Var l = a.l, n = a.n, t = a.t;
  Expr groups = K / lanes;
  a.rk = RDom(0, groups, "rk");
  a.rl = RDom(0, lanes, "rl");
  a.rtail = RDom(groups * lanes, K - groups * lanes, "rtail");
  a.part(l, n, t) = 0.0f;
  Expr k = a.rk * lanes + l;
  a.part(l, n, t) += x(k, t) * w(k, n);
  a.out(n, t) = 0.0f;
  a.out(n, t) += a.part(a.rl, n, t);
  a.out(n, t) += x(a.rtail, t) * w(a.rtail, n);
  return a;
}

LinearForTokens define_linear_for_tokens(Func x, Func w, Expr K, Expr T, int lanes, int one_token_lanes) {
  LinearForTokens a;
  a.tokens = define_linear(x, w, K, lanes);
  a.T = T;
  Var n = a.tokens.n, t = a.tokens.t;
  if (one_token_lanes > 0) {
    a.one_token = define_linear(x, w, K, one_token_lanes, "linear_one_token");
    a.out(n, t) = select(T == 1, a.one_token.out(n, t), a.tokens.out(n, t));
  } else {
    a.out(n, t) = a.tokens.out(n, t);
  }
  return a;
}

namespace {

// Splits a.rows (row, t) into q, k and v and rotates q and k: the part of the QKV step that
// does not depend on how the rows were projected.
void split_and_rotate(QkvRope& a, Expr heads, Expr kv_heads, Expr head_dim, Expr pos, Expr theta, Expr interleaved) {
  Var d("d"), h("h"), t("t");
  Func proj_rows = a.rows;
  a.positions(t) = pos + t;
  a.angles = rope_angles(a.positions, theta, head_dim);
  Func q_raw("q_raw"), k_raw("k_raw");
  q_raw(d, h, t) = proj_rows(h * head_dim + d, t);
  k_raw(d, h, t) = proj_rows((heads + h) * head_dim + d, t);
  a.v(d, h, t) = proj_rows((heads + kv_heads + h) * head_dim + d, t);
  a.q_half = apply_rope(q_raw, a.angles, RopeStyle::half, head_dim);
  a.k_half = apply_rope(k_raw, a.angles, RopeStyle::half, head_dim);
  a.q_interleaved = apply_rope(q_raw, a.angles, RopeStyle::interleaved, head_dim);
  a.k_interleaved = apply_rope(k_raw, a.angles, RopeStyle::interleaved, head_dim);
  a.q(d, h, t) = select(interleaved, a.q_interleaved.out(d, h, t), a.q_half.out(d, h, t));
  a.k(d, h, t) = select(interleaved, a.k_interleaved.out(d, h, t), a.k_half.out(d, h, t));
}

}  // namespace

QkvRope define_qkv_rope(const LinearForTokens& proj, Expr heads, Expr kv_heads, Expr head_dim, Expr pos, Expr theta,
                        Expr interleaved) {
  QkvRope a;
  a.proj = proj;
  Var n("n"), t("t");
  a.rows(n, t) = a.proj.out(n, t);
  split_and_rotate(a, heads, kv_heads, head_dim, pos, theta, interleaved);
  return a;
}

QkvRope define_qkv_rope_of_rows(Func rows, Expr heads, Expr kv_heads, Expr head_dim, Expr pos, Expr theta,
                                Expr interleaved) {
  QkvRope a;
  Var n("n"), t("t");
  a.rows(n, t) = rows(n, t);
  split_and_rotate(a, heads, kv_heads, head_dim, pos, theta, interleaved);
  return a;
}

}  // namespace npukit::ops

// The Generators of the fused qkv_attention op's projections: `npukit_qkv_rope` (x · w_qkvᵀ,
// RoPE of q and k, k and v written into the cache) and `npukit_linear` (the output
// projection), and for int8 weights `npukit_qkv_rope_dequant` (the same from int32
// accumulators). Storage types come from the `*.type` generator params.
#include <tuple>

#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/per_token_quant.h"
#include "schedules/cpu/qkv_attention.h"
#include "schedules/gpu/qkv_attention.h"

namespace npukit {
namespace {

// The rotated q, and k and v as the cache rows they overwrite ((d, t, h), narrowed to the
// cache's type), bound to generator `g`'s outputs q, k_new and v_new.
template <class Gen>
std::tuple<Halide::Func, Halide::Func, Halide::Func> bind_rope_outputs(Gen& g, const ops::QkvRope& a,
                                                                       const Halide::Target& target) {
  using namespace Halide;
  Var d, h, t;
  Func qo("q_out"), ko("k_out"), vo("v_out");
  qo(d, h, t) = a.q(d, h, t);
  ko(d, t, h) = ops::narrow_from_f32(a.k(d, h, t), g.k_new.type(), target);
  vo(d, t, h) = ops::narrow_from_f32(a.v(d, h, t), g.v_new.type(), target);
  g.q = qo;
  g.k_new = ko;
  g.v_new = vo;
  ops::set_mins_to_zero(g.q, g.k_new, g.v_new);
  return {qo, ko, vo};
}

// x · wᵀ of Generator `g`'s inputs x (K, T) and w (K, N), widened to fp32, with the
// partial-sum lanes of the target's schedules (a CPU may sum one token's rows its own way).
// On a CPU schedule_linear computes whole blocks of rows and tokens: the rows (tokens) past
// the last read the last (linear_clamp) and are never stored.
template <class Gen>
ops::LinearForTokens define_linear_of_inputs(Gen& g, const Halide::Target& target) {
  using namespace Halide;
  Var c, r, t;
  Func xf("xf"), wf("wf");
  const bool gpu = target.has_gpu_feature();
  Expr token = gpu ? Expr(t) : schedules::cpu::linear_clamp(t, g.x.dim(1).extent());
  Expr row = gpu ? Expr(r) : schedules::cpu::linear_clamp(r, g.w.dim(1).extent());
  xf(c, t) = ops::widen_to_f32(g.x(c, token), target);
  wf(c, r) = ops::widen_to_f32(g.w(c, row), target);
  const int lanes = gpu ? schedules::gpu::linear_lanes(target) : schedules::cpu::linear_lanes(target);
  const int one_token_lanes = gpu ? 0 : schedules::cpu::linear_one_token_lanes(target, g.w.type());
  return ops::define_linear_for_tokens(xf, wf, g.x.dim(0).extent(), g.x.dim(1).extent(), lanes, one_token_lanes);
}

class QkvRopeGenerator : public Halide::Generator<QkvRopeGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};  // (D, T)
  Input<Halide::Buffer<void, 2>> w{"w"};  // (D, (Hq + 2·Hkv)·Dh)
  Input<int32_t> heads{"heads"};
  Input<int32_t> head_dim{"head_dim"};
  Input<int32_t> kv_heads{"kv_heads"};
  Input<int32_t> pos{"pos"};
  Input<double> theta{"theta"};
  Input<bool> interleaved{"interleaved"};  // RoPE pairs (2i, 2i+1); else (i, i + Dh/2)
  // Whether a CPU reads one token's weight rows in several streams at once (the runtime
  // decides per CPU: runtime/ops/weight_streams.h; schedules/cpu/qkv_attention.cpp).
  Input<bool> row_streams{"row_streams"};
  Output<Halide::Buffer<float, 3>> q{"q"};      // (Dh, Hq, T), rotated
  // (Dh, T, Hkv): views of the caches at positions pos ... pos+T−1 (strided: S_max·Dh
  // between kv heads), so the new rows are stored in place.
  Output<Halide::Buffer<void, 3>> k_new{"k_new"};
  Output<Halide::Buffer<void, 3>> v_new{"v_new"};

  void generate() {
    using namespace Halide;
    const Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(x, w);
    ops::QkvRope a = ops::define_qkv_rope(define_linear_of_inputs(*this, target), heads, kv_heads, head_dim, pos,
                                          theta, interleaved);
    auto [qo, ko, vo] = bind_rope_outputs(*this, a, target);
    if (target.has_gpu_feature()) {
      schedules::gpu::schedule_qkv_rope(a, qo, ko, vo, w.dim(1).extent(), target);
    } else {
      schedules::cpu::schedule_qkv_rope(a, qo, ko, vo, w.type(), target, row_streams);
    }
  }
};

// The int8-weight QKV step: the int32 accumulators of x_q · w_qkvᵀ (runtime/int8_gemm.h)
// dequantized with the token's and the channel's scales (ops/per_token_quant.h), then the
// same RoPE and cache stores as QkvRopeGenerator.
class QkvRopeDequantGenerator : public Halide::Generator<QkvRopeDequantGenerator> {
 public:
  Input<Halide::Buffer<int32_t, 2>> acc{"acc"};        // ((Hq + 2·Hkv)·Dh, T)
  Input<Halide::Buffer<float, 1>> x_scale{"x_scale"};  // (T): per-token scales of x
  Input<Halide::Buffer<float, 1>> w_scale{"w_scale"};  // ((Hq + 2·Hkv)·Dh): per channel
  Input<int32_t> heads{"heads"};
  Input<int32_t> head_dim{"head_dim"};
  Input<int32_t> kv_heads{"kv_heads"};
  Input<int32_t> pos{"pos"};
  Input<double> theta{"theta"};
  Input<bool> interleaved{"interleaved"};
  Output<Halide::Buffer<float, 3>> q{"q"};
  Output<Halide::Buffer<void, 3>> k_new{"k_new"};
  Output<Halide::Buffer<void, 3>> v_new{"v_new"};

  void generate() {
    using namespace Halide;
    const Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(acc, x_scale, w_scale);
    Var r, t;
    Func rows("dequantized_rows");
    rows(r, t) = ops::dequantize(acc(r, t), x_scale(t), w_scale(r));
    ops::QkvRope a = ops::define_qkv_rope_of_rows(rows, heads, kv_heads, head_dim, pos, theta, interleaved);
    auto [qo, ko, vo] = bind_rope_outputs(*this, a, target);
    if (target.has_gpu_feature()) {
      schedules::gpu::schedule_qkv_rope_of_rows(a, qo, ko, vo, target);
    } else {
      schedules::cpu::schedule_qkv_rope_of_rows(a, qo, ko, vo, target);
    }
  }
};

class LinearGenerator : public Halide::Generator<LinearGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};   // (K, T)
  Input<Halide::Buffer<void, 2>> w{"w"};   // (K, N)
  Input<bool> row_streams{"row_streams"};  // as QkvRopeGenerator's
  Output<Halide::Buffer<void, 2>> y{"y"};  // (N, T)

  void generate() {
    using namespace Halide;
    const Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(x, w);
    ops::LinearForTokens lin = define_linear_of_inputs(*this, target);
    Var n, t;
    Func out("linear_out");
    out(n, t) = ops::narrow_from_f32(lin.out(n, t), y.type(), target);
    y = out;
    ops::set_mins_to_zero(y);
    if (target.has_gpu_feature()) {
      schedules::gpu::schedule_linear(lin.tokens, out, w.dim(1).extent(), target);
    } else {
      schedules::cpu::schedule_linear(lin, out, w.type(), target, row_streams);
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::QkvRopeGenerator, npukit_qkv_rope)
HALIDE_REGISTER_GENERATOR(npukit::LinearGenerator, npukit_linear)
HALIDE_REGISTER_GENERATOR(npukit::QkvRopeDequantGenerator, npukit_qkv_rope_dequant)

#endif  // NPUKIT_ALGORITHM_qkv_attention
