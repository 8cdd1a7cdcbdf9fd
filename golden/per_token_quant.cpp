#include "golden/per_token_quant.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace npukit::golden {

float quantize_token(const float* a, int64_t K, int8_t* q) {
  float m = 0;
  bool finite = true;
  for (int64_t c = 0; c < K; ++c) {
    if (!std::isfinite(a[c])) finite = false;
    const float mag = std::fabs(a[c]);
    if (mag > m) m = mag;
  }
  const float s = finite ? m / 127.0f : std::numeric_limits<float>::quiet_NaN();
  const bool zero = !finite || s == 0.0f;
  for (int64_t c = 0; c < K; ++c) {
    if (zero) {
      q[c] = 0;
      continue;
    }
    const float quotient = a[c] / s;  // one fp32 division
    float r = std::nearbyint(quotient);
    r = r < -127.0f ? -127.0f : (r > 127.0f ? 127.0f : r);
    q[c] = static_cast<int8_t>(r);
  }
  return s;
}

float dequantize_token(int64_t acc, float s, float w_scale) {
  const float per_channel = s * w_scale;
  return static_cast<float>(acc) * per_channel;
}

void project_int8(const double* a, const double* w, const double* w_scale, int64_t T, int64_t N,
                  int64_t K, double* out) {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("golden::project_int8: " + what);
  };
  std::vector<int8_t> wq(static_cast<size_t>(N * K));
  for (int64_t i = 0; i < N * K; ++i) {
    if (!(w[i] == std::trunc(w[i]) && w[i] >= -128 && w[i] <= 127)) {
      fail(fmt::format("w[{}, {}] = {} is not an int8 value", i / K, i % K, w[i]));
    }
    wq[static_cast<size_t>(i)] = static_cast<int8_t>(w[i]);
  }
  std::vector<float> ws(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    ws[static_cast<size_t>(n)] = static_cast<float>(w_scale[n]);
    if (!(std::isfinite(w_scale[n]) && w_scale[n] > 0 && double(ws[static_cast<size_t>(n)]) == w_scale[n])) {
      fail(fmt::format("w_scale[{}] = {} must be a finite fp32 > 0", n, w_scale[n]));
    }
  }
  std::vector<float> row(static_cast<size_t>(K));
  std::vector<int8_t> q(static_cast<size_t>(K));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t c = 0; c < K; ++c) row[static_cast<size_t>(c)] = static_cast<float>(a[t * K + c]);
    const float s = quantize_token(row.data(), K, q.data());
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t c = 0; c < K; ++c) acc += int64_t(q[static_cast<size_t>(c)]) * wq[static_cast<size_t>(n * K + c)];
      out[t * N + n] = dequantize_token(acc, s, ws[static_cast<size_t>(n)]);
    }
  }
}

}  // namespace npukit::golden
