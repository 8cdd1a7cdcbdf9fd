#include "ops/qkv_attention.h"

namespace npukit::ops {

using namespace Halide;

Linear define_linear(Func x, Func w, Expr K, int lanes) {
  Linear a;
  a.lanes = lanes;
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

QkvRope define_qkv_rope(Func x, Func w, Expr D, Expr heads, Expr kv_heads, Expr head_dim, Expr pos,
                        Expr theta, Expr interleaved, int lanes) {
  QkvRope a;
  a.proj = define_linear(x, w, D, lanes);
  a.rows(a.proj.n, a.proj.t) = a.proj.out(a.proj.n, a.proj.t);
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
