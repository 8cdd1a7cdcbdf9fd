#include "tools/quantize/per_token.h"

#include <algorithm>
#include <cmath>

namespace npukit::quant {

PerToken quantize_per_token(const float* x, int64_t M, int64_t K) {
  PerToken p;
  p.q.assign(size_t(M * K), 0);
  p.scales.assign(size_t(M), 0.0f);
  p.x_hat.assign(size_t(M * K), 0.0f);
  for (int64_t m = 0; m < M; ++m) {
    const float* row = x + m * K;
    float mag = 0;
    for (int64_t k = 0; k < K; ++k) mag = std::max(mag, std::fabs(row[k]));
    const float s = mag / 127.0f;
    p.scales[size_t(m)] = s;
    if (s == 0) continue;  // an all-zero row (or one whose scale underflows): q = 0
    for (int64_t k = 0; k < K; ++k) {
      // nearbyint is round-half-to-even under the default mode; the clamp keeps x / s a hair
      // above 127 (rounding of s) inside the symmetric range, as the op does.
      const float r = std::min(127.0f, std::max(-127.0f, std::nearbyint(row[k] / s)));
      p.q[size_t(m * K + k)] = static_cast<int8_t>(r);
      p.x_hat[size_t(m * K + k)] = s * r;
    }
  }
  return p;
}

}  // namespace npukit::quant
