#include "golden/calibration.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "golden/weight_quant.h"

namespace npukit::golden {
namespace {

// numpy's "linear" percentile over a fully sorted copy.
float linear_percentile(std::vector<float> v, double p) {
  std::sort(v.begin(), v.end());
  const int64_t last = static_cast<int64_t>(v.size()) - 1;
  const double h = double(last) * p / 100.0;
  int64_t i = static_cast<int64_t>(std::floor(h));
  if (i > last) i = last;
  if (i == last) return v[size_t(last)];
  const double a = v[size_t(i)], b = v[size_t(i + 1)];
  return static_cast<float>(a + (h - double(i)) * (b - a));
}

struct Range {
  float scale;
  float zp;  // a whole number
};

Range range_params(float lo, float hi, bool symmetric) {
  if (symmetric) {
    float s = hi / 127.0f;
    if (s == 0) s = 1;
    return {s, 0};
  }
  const double width = static_cast<double>(hi) - static_cast<double>(lo);
  float s = static_cast<float>(width / 255.0);
  if (s == 0) s = 1;
  float zp = round_half_even(-128.0f - lo / s);
  if (zp < -128) zp = -128;
  if (zp > 127) zp = 127;
  return {s, zp};
}

double error_of(const float* x, int64_t n, Range p, bool symmetric, int64_t& clipped) {
  const float qmin = symmetric ? -127.0f : -128.0f, qmax = 127.0f;
  double sum = 0;
  clipped = 0;
  for (int64_t i = 0; i < n; ++i) {
    float q = round_half_even(x[i] / p.scale) + p.zp;
    if (q < qmin || q > qmax) {
      ++clipped;
      q = q < qmin ? qmin : qmax;
    }
    const float rebuilt = p.scale * (q - p.zp);
    const double d = static_cast<double>(x[i]) - static_cast<double>(rebuilt);
    sum += d * d;
  }
  return sum;
}

}  // namespace

ActivationCalibration calibrate_int8(const float* x, int64_t n, CalibMethod method, double percentile, bool symmetric) {
  ActivationCalibration c;
  float lo = 0, hi = 0;
  if (method == CalibMethod::percentile) {
    std::vector<float> v(x, x + n);
    if (symmetric) {
      for (auto& e : v) e = e < 0 ? -e : e;
      hi = linear_percentile(v, percentile);
      lo = -hi;
    } else {
      lo = linear_percentile(v, 100.0 - percentile);
      hi = linear_percentile(v, percentile);
      if (lo > 0) lo = 0;
      if (hi < 0) hi = 0;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      if (symmetric) {
        const float a = x[i] < 0 ? -x[i] : x[i];
        if (a > hi) hi = a;
      } else {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
      }
    }
    if (symmetric) lo = -hi;
  }
  if (method == CalibMethod::mse) {
    // Ascending i, keeping a later (larger) i on ties: the same choice as searching down.
    double best = -1;
    float best_lo = lo, best_hi = hi;
    for (int i = 1; i <= 100; ++i) {
      const double f = double(i) / 100;
      const float l = static_cast<float>(double(lo) * f), h = static_cast<float>(double(hi) * f);
      int64_t clips = 0;
      const double e = error_of(x, n, range_params(l, h, symmetric), symmetric, clips);
      if (best < 0 || e <= best) {
        best = e;
        best_lo = l;
        best_hi = h;
      }
    }
    lo = best_lo;
    hi = best_hi;
  }
  const Range p = range_params(lo, hi, symmetric);
  c.scale = p.scale;
  c.zero_point = static_cast<int32_t>(p.zp);
  c.lo = lo;
  c.hi = hi;
  c.err2 = error_of(x, n, p, symmetric, c.clipped);
  for (int64_t i = 0; i < n; ++i) c.ref2 += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return c;
}

}  // namespace npukit::golden
