#include "tools/quantize/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace npukit::quant {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument(what); }

// The P-th percentile of v (modified: partially reordered), numpy's "linear" method. Only
// the order statistics v[i] and v[i + 1] are needed: nth_element, then the least of the rest.
float percentile_of(std::vector<float>& v, double p) {
  const int64_t n = static_cast<int64_t>(v.size());
  const double h = double(n - 1) * p / 100.0;
  const int64_t i = std::min<int64_t>(static_cast<int64_t>(std::floor(h)), n - 1);
  std::nth_element(v.begin(), v.begin() + i, v.end());
  const double lower = v[size_t(i)];
  if (i + 1 >= n) return static_cast<float>(lower);
  const double upper = *std::min_element(v.begin() + i + 1, v.end());
  return static_cast<float>(lower + (h - double(i)) * (upper - lower));
}

struct Params {
  float scale;
  int32_t zero_point;
};

// The scale (and zero point) of a clipping range; symmetric uses hi as the threshold t.
Params params_of(float lo, float hi, bool symmetric, QRange r) {
  if (symmetric) {
    float s = hi / float(r.hi);
    if (s == 0) s = 1;
    return {s, 0};
  }
  // hi − lo can overflow fp32 (±3e38 activations); in fp64 it cannot, and the one rounding
  // to fp32 keeps the scale finite.
  float s = static_cast<float>((double(hi) - double(lo)) / double(r.hi - r.lo));
  if (s == 0) s = 1;
  const float z = std::nearbyint(float(r.lo) - lo / s);
  return {s, z < float(r.lo) ? r.lo : (z > float(r.hi) ? r.hi : static_cast<int32_t>(z))};
}

}  // namespace

CalibrationMethod parse_method(const std::string& text) {
  CalibrationMethod m;
  if (text == "minmax") return m;
  if (text == "mse") {
    m.method = Method::mse;
    return m;
  }
  const std::string pct = "percentile:";
  if (text.compare(0, pct.size(), pct) == 0) {
    const std::string p = text.substr(pct.size());
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(p.c_str(), &end);
    if (p.empty() || *end != '\0' || errno == ERANGE || !(v > 0 && v <= 100))
      refuse(fmt::format("--method {}: P must be a number in (0, 100] (e.g. percentile:99.99)", text));
    m.method = Method::percentile;
    m.percentile = v;
    return m;
  }
  refuse(fmt::format("--method {}: must be minmax, percentile:P (P in (0, 100]) or mse", text));
}

void check_method(const CalibrationMethod& m, bool symmetric) {
  if (m.method == Method::percentile && !symmetric && m.percentile < 50)
    refuse(fmt::format("--method {}: asymmetric clipping keeps [pct(100 - P), pct(P)], so P must be at least 50 "
                       "(or add --symmetric, which clips |x| at pct(P))",
                       method_name(m)));
}

std::string method_name(const CalibrationMethod& m) {
  switch (m.method) {
    case Method::minmax: return "minmax";
    case Method::mse: return "mse";
    case Method::percentile: return fmt::format("percentile:{}", m.percentile);
  }
  return "?";
}

std::string param_float_text(float f) {
  std::string t = fmt::format("{}", f);
  if (static_cast<float>(std::strtod(t.c_str(), nullptr)) != f) t = fmt::format("{}", double(f));
  return t;
}

int64_t first_non_finite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return i;
  }
  return -1;
}

namespace {

// q = clamp(rne(x / s) + zp, qlo, qhi); *clipped set when the clamp acted.
int32_t quantize_one(float x, float scale, int32_t zero_point, int32_t qlo, int32_t qhi, bool* clipped) {
  // Bounds on rne(x / s) itself: comparing before adding zp keeps a huge quotient from
  // rounding into the range when zp is added in fp32.
  const float v = std::nearbyint(x / scale);
  *clipped = true;
  if (v < float(qlo - zero_point)) return qlo;
  if (v > float(qhi - zero_point)) return qhi;
  *clipped = false;
  return static_cast<int32_t>(v) + zero_point;
}

}  // namespace

void quantize_samples(const float* x, int64_t n, float scale, int32_t zero_point, bool symmetric, QRange r, int8_t* q) {
  bool clipped = false;
  for (int64_t i = 0; i < n; ++i)
    q[i] = static_cast<int8_t>(quantize_one(x[i], scale, zero_point, symmetric ? -r.hi : r.lo, r.hi, &clipped));
}

double squared_error(const float* x, int64_t n, float scale, int32_t zero_point, bool symmetric, QRange r,
                     int64_t* clipped) {
  const int32_t qlo = symmetric ? -r.hi : r.lo, qhi = r.hi;
  double err2 = 0;
  int64_t clips = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool c = false;
    const int32_t q = quantize_one(x[i], scale, zero_point, qlo, qhi, &c);
    clips += c;
    const float back = scale * float(q - zero_point);
    const double d = double(x[i]) - double(back);
    err2 += d * d;
  }
  if (clipped) *clipped = clips;
  return err2;
}

Calibration calibrate(const float* x, int64_t n, const CalibrationMethod& m, bool symmetric, QRange r) {
  Calibration c;
  c.count = n;
  float amax = 0, mn = x[0], mx = x[0];
  double ref2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    amax = std::max(amax, std::fabs(x[i]));
    mn = std::min(mn, x[i]);
    mx = std::max(mx, x[i]);
    ref2 += double(x[i]) * double(x[i]);
  }
  c.data_min = mn;
  c.data_max = mx;

  // The clipping range before the MSE search: symmetric [−t, t], asymmetric holding 0.
  float lo = 0, hi = 0;
  if (m.method == Method::percentile) {
    std::vector<float> v(x, x + n);
    if (symmetric) {
      for (float& e : v) e = std::fabs(e);
      hi = percentile_of(v, m.percentile);
      lo = -hi;
    } else {
      lo = std::min(0.0f, percentile_of(v, 100.0 - m.percentile));
      hi = std::max(0.0f, percentile_of(v, m.percentile));
    }
  } else if (symmetric) {
    lo = -amax;
    hi = amax;
  } else {
    lo = std::min(0.0f, mn);
    hi = std::max(0.0f, mx);
  }

  if (m.method == Method::mse) {
    const float lo0 = lo, hi0 = hi;
    double best = 0;
    for (int i = kMseSteps; i >= 1; --i) {
      const double f = double(i) / kMseSteps;
      const float l = static_cast<float>(double(lo0) * f), h = static_cast<float>(double(hi0) * f);
      const Params p = params_of(l, h, symmetric, r);
      const double e = squared_error(x, n, p.scale, p.zero_point, symmetric, r, nullptr);
      if (i == kMseSteps || e < best) {
        best = e;
        lo = l;
        hi = h;
      }
    }
  }

  const Params p = params_of(lo, hi, symmetric, r);
  c.lo = lo;
  c.hi = hi;
  c.scale = p.scale;
  c.zero_point = p.zero_point;
  const double err2 = squared_error(x, n, p.scale, p.zero_point, symmetric, r, &c.clipped);
  c.clip_fraction = double(c.clipped) / double(n);
  c.nmse = ref2 == 0 ? err2 : err2 / ref2;
  return c;
}

}  // namespace npukit::quant
