#include "golden/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "golden/half.h"

namespace npukit::golden {
namespace {

// Sign-magnitude bit patterns mapped onto a line of integers in value order.
int64_t ordered_key(DType t, double v) {
  if (t == DType::float16) {
    const uint16_t b = double_to_half_bits(v);
    return (b & 0x8000) ? -static_cast<int64_t>(b & 0x7fff) : static_cast<int64_t>(b);
  }
  const float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return (b & 0x80000000u) ? -static_cast<int64_t>(b & 0x7fffffff) : static_cast<int64_t>(b);
}

// A power of two at or above m, so dividing by it is exact and keeps squares in range.
double pow2_scale(double m) {
  if (m == 0) return 1;
  int e;
  std::frexp(m, &e);
  return std::ldexp(1.0, e);
}

bool worse(const Point& p, const Point& q) {
  return p.abs_err > q.abs_err || (p.abs_err == q.abs_err && p.index < q.index);
}

}  // namespace

Metrics compare(const double* actual, const double* expected, int64_t n, DType out_dtype,
                double atol, double rtol) {
  Metrics m;
  m.count = n;
  const bool ulp = out_dtype == DType::float32 || out_dtype == DType::float16;
  const bool lsb = !dtype_is_float(out_dtype);
  std::vector<Point> special, heap;
  int64_t zeros = 0;
  double max_a = 0, max_e = 0;

  for (int64_t i = 0; i < n; ++i) {
    const double a = actual[i], e = expected[i];
    if (e == 0) ++zeros;
    const double d = std::fabs(a - e);
    if (!std::isfinite(a) || !std::isfinite(e)) {
      if ((std::isnan(a) && std::isnan(e)) || a == e) continue;
      ++m.nan_inf_mismatches;
      ++m.mismatches;
      if (special.size() < kWorstPoints) special.push_back({i, a, e, d, d});
      continue;
    }
    const double rel = std::fabs(e) <= kRelErrFloor ? d : d / std::fabs(e);
    m.max_abs = std::max(m.max_abs, d);
    m.max_rel = std::max(m.max_rel, rel);
    max_a = std::max(max_a, std::fabs(a));
    max_e = std::max(max_e, std::fabs(e));
    if (d > atol + rtol * std::fabs(e)) ++m.mismatches;
    if (ulp) {
      const double dist = std::fabs(static_cast<double>(ordered_key(out_dtype, a) -
                                                        ordered_key(out_dtype, e)));
      m.max_ulp = std::max(m.max_ulp, dist);
    }
    if (lsb) {
      const double k = std::ceil(d);
      ++m.lsb_histogram[k >= 0x1p63 ? std::numeric_limits<int64_t>::max()
                                    : static_cast<int64_t>(k)];
    }
    if (d > 0) {
      const Point p{i, a, e, d, rel};
      if (heap.size() < kWorstPoints) {
        heap.push_back(p);
        std::push_heap(heap.begin(), heap.end(), worse);
      } else if (worse(p, heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), worse);
        heap.back() = p;
        std::push_heap(heap.begin(), heap.end(), worse);
      }
    }
  }

  // Second pass: sums of squares on values scaled into [0, 1]. With power-of-two scales
  // this is bit-identical to the plain sums whenever those would not overflow.
  const double s = pow2_scale(std::max(max_a, max_e));
  const double sa = pow2_scale(max_a), se = pow2_scale(max_e);
  double sum_d2 = 0, sum_e2 = 0, dot = 0, norm_a = 0, norm_e = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = actual[i], e = expected[i];
    if (!std::isfinite(a) || !std::isfinite(e)) continue;
    const double d = a / s - e / s;
    sum_d2 += d * d;
    sum_e2 += (e / s) * (e / s);
    dot += (a / sa) * (e / se);
    norm_a += (a / sa) * (a / sa);
    norm_e += (e / se) * (e / se);
  }
  if (sum_e2 > 0) {
    m.nmse = sum_d2 / sum_e2;
  } else {
    m.nmse = sum_d2 > 0 ? std::numeric_limits<double>::infinity() : 0;
  }
  if (norm_a > 0 && norm_e > 0) {
    m.cosine = dot / std::sqrt(norm_a * norm_e);
  } else {
    m.cosine = (norm_a == 0 && norm_e == 0) ? 1 : 0;
  }

  if (n > 0) {
    m.mismatch_ratio = static_cast<double>(m.mismatches) / static_cast<double>(n);
    m.zero_ratio = static_cast<double>(zeros) / static_cast<double>(n);
  }
  std::sort_heap(heap.begin(), heap.end(), worse);
  m.worst = std::move(special);
  for (const Point& p : heap) {
    if (m.worst.size() >= kWorstPoints) break;
    m.worst.push_back(p);
  }
  return m;
}

}  // namespace npukit::golden
