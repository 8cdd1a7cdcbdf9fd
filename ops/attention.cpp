#include "ops/attention.h"

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
  mx(h, t) = Tuple(strict_float(max(mx(h, t)[0], select(is_nan(sc), neg_inf, sc))),
                   mx(h, t)[1] || strict_float(is_nan(sc)), cast<bool>(true));
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
