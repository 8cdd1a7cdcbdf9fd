#include "ops/int8_gemm.h"

#include "ops/round_even.h"

namespace npukit::ops {

using namespace Halide;

Int8GemmAcc define_int8_gemm_acc(Func a, Func w_packed, Func w_sums, Expr k_pad, Expr a_zero_point, bool pairwise) {
  Int8GemmAcc g;
  g.a = a;
  g.w_packed = w_packed;
  g.pairwise = pairwise;
  Var n = g.n, m = g.m, j = g.j, c = g.c, nb = g.nb, kv = g.kv;
  // k in whole groups of 4: no remainder loop exists for LLVM to auto-vectorize with
  // instructions outside the kernel's tier (it did: VEX vpdpwssd on ymm).
  g.k = RDom(0, pairwise ? 2 : 4, 0, k_pad / 4, "k");
  Expr k = pairwise ? g.k.x + 2 * j + 4 * g.k.y : g.k.x + 4 * g.k.y;
  // a + 128 as u8 is a with its sign bit flipped. vpdpbusd multiplies u8 by s8 only, so
  // the signed activations are shifted and the shift comes back out through Σ_k w.
  auto a_u8 = [&](const Expr& at) { return reinterpret<uint8_t>(a(at, m)) ^ cast<uint8_t>(128); };
  if (pairwise) {
    g.a_wide(kv, m) = cast<int16_t>(a_u8(kv));
    g.pairs(j, c, nb, m) = 0;
    g.pairs(j, c, nb, m) += cast<int32_t>(g.a_wide(k, m)) * cast<int32_t>(w_packed(2 * j + g.k.x, c, g.k.y, nb));
    g.dot(n, m) = g.pairs(0, n % 16, n / 16, m) + g.pairs(1, n % 16, n / 16, m);
  } else {
    g.dot(n, m) = 0;
    g.dot(n, m) += cast<int32_t>(a_u8(k)) * cast<int32_t>(w_packed(k % 4, n % 16, k / 4, n / 16));
  }
  g.acc(n, m) = g.dot(n, m) - (128 + a_zero_point) * w_sums(n);
  return g;
}

Expr saturating_rounding_doubling_high_mul(Expr a, Expr b) {
  Expr ab = cast<int64_t>(a) * cast<int64_t>(b);
  Expr nudge = select(ab >= 0, Expr(int64_t(1) << 30), Expr(int64_t(1) - (int64_t(1) << 30)));
  // C's division truncates toward zero; Halide's rounds toward −inf: correct for it.
  Expr num = ab + nudge;
  Expr q = num / Expr(int64_t(1) << 31);
  Expr truncated = select(num < 0 && q * Expr(int64_t(1) << 31) != num, q + 1, q);
  Expr overflow = a == b && a == Int(32).min();
  return select(overflow, Int(32).max(), cast<int32_t>(truncated));
}

Expr rounding_divide_by_pot(Expr x, Expr exponent) {
  // In int64: 1 << 31 would overflow int32, and Halide treats signed overflow as undefined.
  Expr mask = cast<int32_t>((cast<int64_t>(1) << cast<int64_t>(exponent)) - 1);
  Expr remainder = x & mask;
  Expr threshold = (mask >> 1) + select(x < 0, 1, 0);
  return (x >> exponent) + select(remainder > threshold, 1, 0);
}

Expr requantize_fixed_point(Expr acc, Expr multiplier, Expr shift, Expr out_zero_point) {
  Expr left = max(shift, 0), right = max(-shift, 0);
  // acc · 2^left, saturated to int32 (C would overflow; the contract saturates).
  Expr shifted = cast<int32_t>(clamp(cast<int64_t>(acc) << cast<int64_t>(left), cast<int64_t>(Int(32).min()),
                                     cast<int64_t>(Int(32).max())));
  Expr x = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right);
  return cast<int8_t>(clamp(cast<int64_t>(x) + out_zero_point, -128, 127));
}

Expr requantize_float(Expr acc, Expr m, Expr out_zero_point) {
  // strict_float: the contract is fp32 round-to-nearest-even, not whatever fast-math fuses.
  Expr v = strict_float(cast<float>(acc) * m);
  Expr r = strict_float(round_half_even(v));
  Expr q = strict_float(clamp(r + cast<float>(out_zero_point), -128.0f, 127.0f));
  return cast<int8_t>(q);
}

}  // namespace npukit::ops
