#include "golden/weight_quant.h"

#include <cmath>

namespace npukit::golden {
namespace {

float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// The group's scale and zero point; `qmin`/`qmax` are the stored range (symmetric: ±qmax).
void scale_of(const float* w, int64_t n, bool symmetric, float qmin, float qmax, float& s, float& zp) {
  if (symmetric) {
    float amax = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float a = w[i] < 0 ? -w[i] : w[i];
      if (a > amax) amax = a;
    }
    s = amax / qmax;
    if (s == 0) s = 1;
    zp = 0;
    return;
  }
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (w[i] < lo) lo = w[i];
    if (w[i] > hi) hi = w[i];
  }
  const double range = static_cast<double>(hi) - static_cast<double>(lo);
  s = static_cast<float>(range / static_cast<double>(qmax - qmin));
  if (s == 0) s = 1;
  const float shifted = qmin - lo / s;
  zp = clampf(round_half_even(shifted), qmin, qmax);
}

float quantize_one(float w, float s, float zp, float qmin, float qmax) {
  const float quotient = w / s;
  return clampf(round_half_even(quotient) + zp, qmin, qmax);
}

}  // namespace

float round_half_even(float x) {
  const float f = std::floor(x);
  const float frac = x - f;  // exact for |x| < 2^23
  if (frac > 0.5f) return f + 1;
  if (frac < 0.5f) return f;
  // A tie: the even neighbour.
  return std::fmod(f, 2.0f) == 0 ? f : f + 1;
}

void quantize_int8_per_channel(const float* w, int64_t N, int64_t K, bool symmetric, int8_t* q, float* s, int8_t* zp) {
  const float qmin = symmetric ? -127.0f : -128.0f, qmax = 127.0f;
  for (int64_t n = 0; n < N; ++n) {
    float scale = 0, zero = 0;
    scale_of(w + n * K, K, symmetric, qmin, qmax, scale, zero);
    s[n] = scale;
    if (!symmetric) zp[n] = static_cast<int8_t>(zero);
    for (int64_t k = 0; k < K; ++k) q[n * K + k] = static_cast<int8_t>(quantize_one(w[n * K + k], scale, zero, qmin, qmax));
  }
}

void quantize_int4_group(const float* w, int64_t N, int64_t K, int64_t G, bool symmetric, uint8_t* packed, float* s,
                         uint8_t* zp) {
  const float qmin = symmetric ? -7.0f : 0.0f, qmax = symmetric ? 7.0f : 15.0f;
  const int64_t groups = K / G;
  for (int64_t i = 0; i < N * K / 2; ++i) packed[i] = 0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* wg = w + n * K + g * G;
      float scale = 0, zero = 0;
      scale_of(wg, G, symmetric, qmin, qmax, scale, zero);
      s[n * groups + g] = scale;
      if (!symmetric) zp[n * groups + g] = static_cast<uint8_t>(zero);
      for (int64_t i = 0; i < G; ++i) {
        const int v = static_cast<int>(quantize_one(wg[i], scale, zero, qmin, qmax));
        const unsigned nibble = static_cast<unsigned>(v < 0 ? v + 16 : v);
        const int64_t k = g * G + i;
        const int shift = (k % 2 == 0) ? 0 : 4;
        packed[(n * K + k) / 2] = static_cast<uint8_t>(packed[(n * K + k) / 2] | (nibble << shift));
      }
    }
  }
}

}  // namespace npukit::golden
