#include "golden/rope.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace npukit::golden {
namespace {

// 2π = kTwoPi1 + kTwoPi2 + kTwoPi3 to ~2^-101. kTwoPi1 and kTwoPi2 have 24 significant bits,
// so k·kTwoPi1 and k·kTwoPi2 are exact for |k| < 2^29, which covers |φ| <= 2^31.
constexpr double kTwoPi1 = 0x1.921fb4p+2;
constexpr double kTwoPi2 = 0x1.4442d0p-22;
constexpr double kTwoPi3 = 0x1.8469898cc5170p-46;
constexpr double kInvTwoPi = 0x1.45f306dc9c883p-3;
constexpr int64_t kMaxPosition = int64_t{1} << 31;

// p · inv_freq reduced to about [−π, π]. With hi + lo = p · inv_freq exactly (fma), hi − k·2π₁
// is exact (both are multiples of ulp(hi) and the difference is far smaller than hi), and
// k·2π₂, k·2π₃ are exact or negligibly rounded, so what rounds is the last few additions
// near π, each by at most 2^-52: ~1e-15 rad in all (measured against long double: 3e-14,
// the long double angle's own error at p = 2^20).
double reduced_angle(double p, double inv_freq) {
  const double hi = p * inv_freq;
  const double lo = std::fma(p, inv_freq, -hi);
  const double k = std::round(hi * kInvTwoPi);
  const double r = (hi - k * kTwoPi1) - k * kTwoPi2;
  return (r - k * kTwoPi3) + lo;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("golden::rope: " + what);
}

}  // namespace

std::string_view rope_style_name(RopeStyle style) {
  return style == RopeStyle::interleaved ? "interleaved" : "half";
}

std::optional<RopeStyle> rope_style_from_name(std::string_view name) {
  for (RopeStyle s : {RopeStyle::interleaved, RopeStyle::half}) {
    if (rope_style_name(s) == name) return s;
  }
  return std::nullopt;
}

void rope(const double* x, const int64_t* positions, int64_t tokens, int64_t heads,
          int64_t head_dim, int64_t rotary_dim, double theta, RopeStyle style, double* y) {
  if (tokens < 0 || heads < 0 || head_dim < 0) fail("negative dimension");
  if (rotary_dim < 0 || rotary_dim > head_dim || rotary_dim % 2 != 0) {
    fail(fmt::format("rotary_dim {} must be even and in [0, head_dim = {}]", rotary_dim, head_dim));
  }
  if (!(std::isfinite(theta) && theta >= 1)) fail("theta must be finite and >= 1");
  for (int64_t t = 0; t < tokens; ++t) {
    if (positions[t] < -kMaxPosition || positions[t] > kMaxPosition) {
      fail(fmt::format("position {} outside [-2^31, 2^31]", positions[t]));
    }
  }

  const int64_t pairs = rotary_dim / 2;
  std::vector<double> inv_freq(static_cast<size_t>(pairs));
  for (int64_t i = 0; i < pairs; ++i) {
    inv_freq[static_cast<size_t>(i)] =
        std::pow(theta, -static_cast<double>(2 * i) / static_cast<double>(rotary_dim));
  }
  // Pair i is (i·a_step, i·a_step + b_offset).
  const int64_t a_step = style == RopeStyle::interleaved ? 2 : 1;
  const int64_t b_offset = style == RopeStyle::interleaved ? 1 : pairs;

  std::vector<double> cos_t(static_cast<size_t>(pairs)), sin_t(static_cast<size_t>(pairs));
  for (int64_t t = 0; t < tokens; ++t) {
    const auto p = static_cast<double>(positions[t]);
    for (int64_t i = 0; i < pairs; ++i) {
      const double phi = reduced_angle(p, inv_freq[static_cast<size_t>(i)]);
      cos_t[static_cast<size_t>(i)] = std::cos(phi);
      sin_t[static_cast<size_t>(i)] = std::sin(phi);
    }
    for (int64_t h = 0; h < heads; ++h) {
      const double* xr = x + (t * heads + h) * head_dim;
      double* yr = y + (t * heads + h) * head_dim;
      for (int64_t i = 0; i < pairs; ++i) {
        const int64_t ia = i * a_step, ib = ia + b_offset;
        const double a = xr[ia], b = xr[ib];
        const double c = cos_t[static_cast<size_t>(i)], s = sin_t[static_cast<size_t>(i)];
        yr[ia] = a * c - b * s;
        yr[ib] = a * s + b * c;
      }
      for (int64_t d = rotary_dim; d < head_dim; ++d) yr[d] = xr[d];
    }
  }
}

}  // namespace npukit::golden
