#include "tools/quantize/weight_quant.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace npukit::quant {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument(what); }

// nearbyint under the default rounding mode is IEEE round-half-to-even, the kit's
// convention (golden/per_token_quant.h); the clamp keeps rounding noise at the range's
// ends (w / s a hair above qmax) inside the type.
int32_t round_clamp(float v, int32_t lo, int32_t hi) {
  const float r = std::nearbyint(v);
  if (r < float(lo)) return lo;
  if (r > float(hi)) return hi;
  return static_cast<int32_t>(r);
}

struct GroupParams {
  float scale;
  int32_t zero_point;
};

GroupParams group_params(const float* w, int64_t n, const Scheme& s, QRange r) {
  float scale = 0;
  if (s.symmetric) {
    float m = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(w[i]));
    scale = m / float(r.hi);
  } else {
    // The range always holds 0, so that 0 is exactly representable (zp is an integer q)
    // and zp stays inside the type: an all-positive row would otherwise need zp < qlo.
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, w[i]);
      hi = std::max(hi, w[i]);
    }
    // hi − lo can overflow fp32 (±3e38 weights); in fp64 it cannot, and one rounding to
    // fp32 at the end keeps the scale finite.
    scale = static_cast<float>((double(hi) - double(lo)) / double(r.hi - r.lo));
    if (scale == 0) scale = 1;
    return {scale, round_clamp(float(r.lo) - lo / scale, r.lo, r.hi)};
  }
  // An all-zero group (or max|w| so small that its scale underflows to 0) gets scale 1:
  // q = 0 reconstructs it, and int8_gemm's w_scale must be finite and > 0.
  if (scale == 0) scale = 1;
  return {scale, 0};
}

}  // namespace

Scheme parse_scheme(const std::string& text, bool symmetric) {
  Scheme s;
  s.symmetric = symmetric;
  const std::string int4 = "int4-group";
  if (text == "int8-per-channel") return s;
  if (text.compare(0, int4.size(), int4) == 0) {
    s.bits = Bits::int4;
    const std::string rest = text.substr(int4.size());
    if (rest.empty() || rest == ":32") s.group = 32;
    else if (rest == ":64") s.group = 64;
    else if (rest == ":128") s.group = 128;
    else refuse(fmt::format("--scheme {}: the group must be 32, 64 or 128 (int4-group:32|64|128)", text));
    return s;
  }
  refuse(fmt::format("--scheme {}: must be int8-per-channel or int4-group[:32|:64|:128]", text));
}

Scheme parse_scheme_and_mode(const std::string& text) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos) return parse_scheme(text, true);
  const std::string mode = text.substr(comma + 1);
  if (mode != "symmetric" && mode != "asymmetric")
    refuse(fmt::format("--scheme {}: the mode after ',' must be symmetric or asymmetric (e.g. int4-group:64,asymmetric)",
                       text));
  return parse_scheme(text.substr(0, comma), mode == "symmetric");
}

std::string scheme_name(const Scheme& s, bool with_mode) {
  std::string name = s.bits == Bits::int8 ? "int8-per-channel" : fmt::format("int4-group:{}", s.group);
  if (with_mode) name += s.symmetric ? ",symmetric" : ",asymmetric";
  return name;
}

QRange q_range(const Scheme& s) {
  if (s.bits == Bits::int8) return s.symmetric ? QRange{-127, 127} : QRange{-128, 127};
  return s.symmetric ? QRange{-7, 7} : QRange{0, 15};
}

void check_weights(const float* w, int64_t N, int64_t K, const Scheme& s) {
  if (N < 1 || K < 1) refuse(fmt::format("shape [{}, {}]: N and K must be at least 1", N, K));
  if (s.bits == Bits::int4 && K % s.group != 0)
    refuse(fmt::format("K = {}: must be a multiple of the group {} ({})", K, s.group, scheme_name(s, false)));
  for (int64_t i = 0; i < N * K; ++i) {
    if (!std::isfinite(w[i]))
      refuse(fmt::format("w[{}, {}] = {}: every weight must be finite (a NaN or Inf has no scale)", i / K, i % K, w[i]));
  }
}

Quantized quantize(const float* w, int64_t N, int64_t K, const Scheme& s) {
  check_weights(w, N, K, s);
  const QRange r = q_range(s);
  const int64_t g = s.bits == Bits::int8 ? K : s.group;
  Quantized out;
  out.N = N;
  out.K = K;
  out.groups = K / g;
  out.scales.resize(size_t(N * out.groups));
  if (!s.symmetric) out.zero_points.resize(out.scales.size());
  out.q.assign(size_t(s.bits == Bits::int8 ? N * K : N * K / 2), 0);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t j = 0; j < out.groups; ++j) {
      const float* wg = w + n * K + j * g;
      const GroupParams p = group_params(wg, g, s, r);
      const size_t gi = size_t(n * out.groups + j);
      out.scales[gi] = p.scale;
      if (!s.symmetric) out.zero_points[gi] = p.zero_point;
      for (int64_t i = 0; i < g; ++i) {
        const int32_t q = round_clamp(wg[i] / p.scale, r.lo - p.zero_point, r.hi - p.zero_point) + p.zero_point;
        const int64_t k = j * g + i;
        if (s.bits == Bits::int8) {
          out.q[size_t(n * K + k)] = static_cast<uint8_t>(static_cast<int8_t>(q));
        } else {
          // Low nibble = even k: what an int4 GEMM reading the bytes in order unpacks first.
          const uint8_t nibble = static_cast<uint8_t>(q) & 0xF;
          out.q[size_t((n * K + k) / 2)] |= static_cast<uint8_t>(k % 2 == 0 ? nibble : nibble << 4);
        }
      }
    }
  }
  return out;
}

int32_t q_at(const Quantized& qw, const Scheme& s, int64_t n, int64_t k) {
  const int64_t i = n * qw.K + k;
  if (s.bits == Bits::int8) return static_cast<int8_t>(qw.q[size_t(i)]);
  const int32_t nibble = (qw.q[size_t(i / 2)] >> (i % 2 == 0 ? 0 : 4)) & 0xF;
  return s.symmetric && nibble >= 8 ? nibble - 16 : nibble;
}

std::vector<float> dequantize(const Quantized& qw, const Scheme& s) {
  std::vector<float> out(static_cast<size_t>(qw.N * qw.K));
  const int64_t g = qw.K / qw.groups;
  for (int64_t n = 0; n < qw.N; ++n) {
    for (int64_t k = 0; k < qw.K; ++k) {
      const size_t gi = size_t(n * qw.groups + k / g);
      const int32_t zp = s.symmetric ? 0 : qw.zero_points[gi];
      out[size_t(n * qw.K + k)] = qw.scales[gi] * float(q_at(qw, s, n, k) - zp);
    }
  }
  return out;
}

}  // namespace npukit::quant
