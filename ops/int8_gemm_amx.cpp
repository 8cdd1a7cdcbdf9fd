#include "ops/int8_gemm_amx.h"

#include "layouts/vnni_int8.h"

namespace npukit::ops {

using namespace Halide;

Int8GemmAccAmx define_int8_gemm_acc_amx(Func a, Func w_packed, Func w_sums, Expr k_pad, Expr a_zero_point,
                                        bool zero_point_zero) {
  Int8GemmAccAmx g;
  Var n = g.n, m = g.m;
  // k_pad as visibly a multiple of the packing's kKAlign (the generator requires it), so that
  // splitting k into 64-byte tile steps needs no tail.
  constexpr int kStep = layouts::PackedInt8Weights::kKAlign;
  g.k = RDom(0, k_pad / kStep * kStep, "k");
  const RVar k = g.k.x;
  g.dot(n, m) = 0;
  g.dot(n, m) += cast<int32_t>(a(k, m)) * cast<int32_t>(w_packed(k % 4, n % 16, k / 4, n / 16));
  if (zero_point_zero) {
    g.acc(n, m) = g.dot(n, m);
  } else {
    g.acc(n, m) = g.dot(n, m) - a_zero_point * w_sums(n);
  }
  return g;
}

}  // namespace npukit::ops
