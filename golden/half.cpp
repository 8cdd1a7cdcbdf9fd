#include "golden/half.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace npukit::golden {
namespace {

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "golden assumes IEEE 754 float and double");

constexpr uint16_t kHalfInf = 0x7c00;

// Rounds (1.frac) * 2^e to binary16; frac has frac_bits bits, e is unbiased.
// One shift serves normal and subnormal results: a subnormal just loses more low bits,
// and a carry out of the mantissa walks into the next exponent (or into Inf) by itself.
uint16_t round_finite(uint16_t sign, int e, uint64_t frac, int frac_bits) {
  if (e > 15) return sign | kHalfInf;
  if (e < -25) return sign;  // below half the smallest subnormal: rounds to ±0
  const uint64_t sig = frac | (uint64_t{1} << frac_bits);
  const int shift = frac_bits - 10 + (e < -14 ? -14 - e : 0);
  const uint64_t base = e < -14 ? 0 : static_cast<uint64_t>(e + 14) << 10;
  uint64_t h = base + (sig >> shift);
  const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
  const uint64_t halfway = uint64_t{1} << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

uint16_t nan_bits(uint16_t sign, uint64_t top10) {
  const auto payload = static_cast<uint16_t>(top10 & 0x3ff);
  return sign | kHalfInf | (payload ? payload : 0x200);
}

double round_to_integer(double v, double lo, double hi) {
  assert(!std::isnan(v) && "rounding NaN to an integer dtype is the caller's error");
  if (std::isnan(v)) return 0;
  // Ties to even without depending on the floating-point environment's rounding mode.
  double r = std::floor(v);
  const double diff = v - r;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  return r < lo ? lo : (r > hi ? hi : r);
}

}  // namespace

uint16_t float_to_half_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  const auto sign = static_cast<uint16_t>((b >> 16) & 0x8000);
  const uint32_t exp = (b >> 23) & 0xff;
  const uint32_t frac = b & 0x7fffff;
  if (exp == 0xff) return frac ? nan_bits(sign, frac >> 13) : sign | kHalfInf;
  if (exp == 0) return sign;  // float subnormals are far below 2^-25
  return round_finite(sign, static_cast<int>(exp) - 127, frac, 23);
}

uint16_t double_to_half_bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  const auto sign = static_cast<uint16_t>((b >> 48) & 0x8000);
  const uint64_t exp = (b >> 52) & 0x7ff;
  const uint64_t frac = b & ((uint64_t{1} << 52) - 1);
  if (exp == 0x7ff) return frac ? nan_bits(sign, frac >> 42) : sign | kHalfInf;
  if (exp == 0) return sign;
  return round_finite(sign, static_cast<int>(exp) - 1023, frac, 52);
}

float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t frac = h & 0x3ff;
  uint32_t b;
  if (exp == 0x1f) {
    b = sign | 0x7f800000 | (frac << 13);
  } else if (exp == 0) {
    const float mag = std::ldexp(static_cast<float>(frac), -24);  // exact
    return sign ? -mag : mag;
  } else {
    b = sign | ((exp - 15 + 127) << 23) | (frac << 13);
  }
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

double round_to_dtype(double v, DType t) {
  switch (t) {
    case DType::float32: return static_cast<float>(v);  // IEEE: RNE, overflow to ±Inf
    case DType::float16: return half_bits_to_float(double_to_half_bits(v));
    case DType::float64: return v;
    case DType::int8: return round_to_integer(v, -128, 127);
    case DType::uint8: return round_to_integer(v, 0, 255);
    case DType::int32: return round_to_integer(v, -2147483648.0, 2147483647.0);
    case DType::int64: return round_to_integer(v, -0x1p63, 0x1p63 - 1024);
  }
  return v;
}

}  // namespace npukit::golden
