// Scalar building blocks of INT8 GEMM's accumulation limit and of its two requantization
// modes, bit-exact as docs/ops/int8_gemm.md defines them (gemmlowp / TFLite fixed point,
// ONNX QLinearMatMul fp32). The kernels must agree with these bit for bit, so each one is
// written out from the doc's definition, not borrowed from a library.
#pragma once

#include <cstdint>
#include <optional>

namespace npukit::golden {

// The largest K for which Σ_k (a − zp)·w cannot leave int32 for any int8 a, w:
//   Pmax = max((127 − zp)·127, (−128 − zp)·(−128)),
//   Nmin = min((127 − zp)·(−128), (−128 − zp)·127),
//   K_limit = min(⌊(2³¹ − 1) / Pmax⌋, ⌊2³¹ / −Nmin⌋).
// 131071 for zp = 0 (a = w = −128 everywhere), 131072 for zp = −1 (where a = 127, w = −128
// reach INT32_MIN exactly), 65793 for zp = −128 and 127. zp outside [−128, 127]:
// std::invalid_argument.
int64_t k_limit(int32_t a_zero_point);

// gemmlowp's SaturatingRoundingDoublingHighMul: the high half of 2·a·b, that is a·b / 2³¹
// rounded to nearest with ties toward +∞ (the nudge is 2³⁰ for a·b >= 0 and 1 − 2³⁰ for
// a·b < 0, then the int64 division truncates toward zero: together ⌊a·b / 2³¹ + ½⌋), so
// +0.5 → 1 but −0.5 → 0 and −1.5 → −1. The one result that does not fit,
// INT32_MIN·INT32_MIN / 2³¹ = 2³¹, saturates to INT32_MAX.
int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b);

// gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded to nearest, ties away from zero:
// (x >> e) + ((x & mask) > threshold), mask = 2^e − 1, threshold = (mask >> 1) + (x < 0),
// with >> arithmetic. exponent must lie in [0, 31], else std::invalid_argument.
int32_t rounding_divide_by_pot(int32_t x, int exponent);

// A real multiplier M as multiplier · 2^(shift − 31), multiplier in [2³⁰, 2³¹).
struct QuantizedMultiplier {
  int32_t multiplier;
  int shift;  // in [−31, 30]
};

// M = q · 2^shift with q in [0.5, 1) (frexp, exact); multiplier = round(q · 2³¹), ties away
// from zero (std::round, as TFLite's QuantizeMultiplier); if that is 2³¹, then 2³⁰ and
// shift + 1. nullopt when M is not finite and > 0 (0, negative, NaN, ±Inf) or when the final
// shift falls outside [−31, 30]: M in [2^−32, 2^30) is accepted, except that M just below
// 2^30 whose multiplier rounds up to 2³¹ is not (its shift becomes 31).
std::optional<QuantizedMultiplier> quantize_multiplier(double real_multiplier);

// acc · M for M = q.multiplier · 2^(q.shift − 31), rounded as the doc's pipeline rounds:
//   x = acc · 2^max(shift, 0), computed exactly and saturated to int32;
//   x = saturating_rounding_doubling_high_mul(x, multiplier);
//   x = rounding_divide_by_pot(x, max(−shift, 0)).
// For shift < 0 that is two roundings (the high mul's, ties toward +∞, then the division's,
// ties away from zero), so the result is the nearest integer to acc · M except when acc · M
// is on a tie or within 2^(shift − 1) of one, where it may be one off: acc = 1, M = 0.3
// gives round(0.6) / 2 = 0.5 → 1, and acc = INT32_MAX, M = 2^−32 gives 1. That is gemmlowp's
// (and the doc's) definition, not an error. For shift >= 0 it is one rounding, ties toward
// +∞. When the left shift saturates, |acc · M| >= 2³⁰ and so does the result's magnitude.
int32_t multiply_by_quantized_multiplier(int32_t acc, QuantizedMultiplier q);

// rounding=fixed_point: clamp(multiply_by_quantized_multiplier(acc, q) + out_zero_point,
// −128, 127), the sum taken in int64 so it cannot wrap.
int8_t requantize_fixed_point(int32_t acc, QuantizedMultiplier q, int32_t out_zero_point);

// rounding=float, all in fp32 with no contraction (this file is built -ffp-contract=off):
//   m = (a_scale · w_scale) / out_scale;  v = (float)acc · m;
//   r = nearbyint(v)  (current rounding mode, which npukit never changes: ties to even);
//   y = clamp(r + out_zero_point, −128, 127).
// (float)acc itself rounds for |acc| > 2²⁴, as the kernel's conversion does. Infinite v
// saturates. m must be finite (NaN or ±Inf, from non-finite scales or from an fp32
// overflow of the quotient, would make 0·m NaN): std::invalid_argument otherwise. Any
// finite m is accepted, including 0, subnormal and negative.
int8_t requantize_float(int32_t acc, float a_scale, float w_scale, float out_scale,
                        int32_t out_zero_point);

}  // namespace npukit::golden
