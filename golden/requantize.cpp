#include "golden/requantize.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

// rounding=float is defined in fp32: a float expression evaluated in a wider type (x87,
// FLT_EVAL_METHOD 2) would round differently, and no bit-exact answer would be left.
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "golden/requantize.cpp needs float arithmetic evaluated in float (FLT_EVAL_METHOD 0)"
#endif

namespace npukit::golden {
namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

int32_t saturate_int32(int64_t x) {
  return static_cast<int32_t>(std::clamp(x, kInt32Min, kInt32Max));
}

}  // namespace

int64_t k_limit(int32_t a_zero_point) {
  if (a_zero_point < -128 || a_zero_point > 127) {
    throw std::invalid_argument("golden::k_limit: a_zero_point = " +
                                std::to_string(a_zero_point) + " is outside [-128, 127]");
  }
  const int64_t zp = a_zero_point;
  const int64_t pmax = std::max((127 - zp) * 127, (-128 - zp) * -128);
  const int64_t nmin = std::min((127 - zp) * -128, (-128 - zp) * 127);
  // zp in [-128, 127] makes pmax and -nmin >= 16256, so neither division is by zero.
  return std::min(kInt32Max / pmax, (kInt32Max + 1) / -nmin);
}

int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return static_cast<int32_t>(kInt32Max);
  const int64_t ab = int64_t{a} * int64_t{b};
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : 1 - (int64_t{1} << 30);
  // C++ integer division truncates toward zero, as the definition asks. |ab + nudge| / 2³¹
  // <= 2³¹ − 1 + ½ except for INT32_MIN² handled above, so the quotient fits.
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  if (exponent < 0 || exponent > 31) {
    throw std::invalid_argument("golden::rounding_divide_by_pot: exponent = " +
                                std::to_string(exponent) + " is outside [0, 31]");
  }
  // In int64, where 2^31 − 1 and the arithmetic shift are well defined; the result
  // always fits int32.
  const int64_t mask = (int64_t{1} << exponent) - 1;
  const int64_t remainder = int64_t{x} & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return static_cast<int32_t>((int64_t{x} >> exponent) + (remainder > threshold ? 1 : 0));
}

std::optional<QuantizedMultiplier> quantize_multiplier(double real_multiplier) {
  if (!std::isfinite(real_multiplier) || !(real_multiplier > 0)) return std::nullopt;
  int shift = 0;
  const double q = std::frexp(real_multiplier, &shift);  // q in [0.5, 1), exact
  // q · 2³¹ is exact (a power-of-two scaling), and so is its rounding to an integer.
  auto multiplier = static_cast<int64_t>(std::round(std::ldexp(q, 31)));
  if (multiplier == (int64_t{1} << 31)) {
    multiplier /= 2;
    ++shift;
  }
  if (shift < -31 || shift > 30) return std::nullopt;
  return QuantizedMultiplier{static_cast<int32_t>(multiplier), shift};
}

int32_t multiply_by_quantized_multiplier(int32_t acc, QuantizedMultiplier q) {
  const int left = std::max(q.shift, 0), right = std::max(-q.shift, 0);
  // |acc| · 2^30 < 2^62: exact in int64 before saturating.
  const int32_t x = saturate_int32(int64_t{acc} * (int64_t{1} << left));
  return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, q.multiplier), right);
}

int8_t requantize_fixed_point(int32_t acc, QuantizedMultiplier q, int32_t out_zero_point) {
  const int64_t y = int64_t{multiply_by_quantized_multiplier(acc, q)} + out_zero_point;
  return static_cast<int8_t>(std::clamp<int64_t>(y, -128, 127));
}

int8_t requantize_float(int32_t acc, float a_scale, float w_scale, float out_scale,
                        int32_t out_zero_point) {
  const float m = (a_scale * w_scale) / out_scale;
  if (!std::isfinite(m)) {
    throw std::invalid_argument(
        "golden::requantize_float: m = (a_scale * w_scale) / out_scale is not finite in fp32");
  }
  const float v = static_cast<float>(acc) * m;
  const float r = std::nearbyint(v);
  // r is an integer-valued float or ±Inf. r + zp in double is exact while |r| < 2^52, and
  // beyond that both it and the exact sum lie far outside [-128, 127]: the clamp agrees.
  const double y = static_cast<double>(r) + out_zero_point;
  return static_cast<int8_t>(std::clamp(y, -128.0, 127.0));
}

}  // namespace npukit::golden
