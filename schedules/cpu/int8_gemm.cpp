#include "schedules/cpu/int8_gemm.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void schedule_int8_gemm_acc(ops::Int8GemmAcc& g, GemmShape shape, const Target& target) {
  Var n = g.n, m = g.m, no{"no"}, ni{"ni"}, mo{"mo"}, mi{"mi"};
  const int lanes = 16;  // int32 lanes of one zmm; the packed layout's channel block
  (void)target;
  if (shape == GemmShape::decode) {
    g.acc.split(n, no, ni, 2 * lanes, TailStrategy::GuardWithIf).vectorize(ni, lanes).parallel(no);
    g.dot.compute_at(g.acc, no).vectorize(n, lanes);
    g.dot.update()
        .reorder(g.k.x, n, g.k.y, m)
        .atomic()
        .vectorize(g.k.x)
        .vectorize(n, lanes)
        .unroll(n);
  } else {
    g.acc.split(n, no, ni, 4 * lanes, TailStrategy::GuardWithIf)
        .split(m, mo, mi, 4, TailStrategy::GuardWithIf)
        .reorder(ni, mi, mo, no)
        .vectorize(ni, lanes)
        .parallel(no);
    g.dot.compute_at(g.acc, no).vectorize(n, lanes).unroll(m);
    g.dot.update()
        .reorder(g.k.x, n, m, g.k.y)
        .atomic()
        .vectorize(g.k.x)
        .vectorize(n, lanes)
        .unroll(n)
        .unroll(m);
  }
}

}  // namespace npukit::schedules::cpu
