#include "golden/rms_norm.h"

#include <cmath>
#include <limits>

namespace npukit::golden {

void rms_norm(const double* x, const double* weight, int64_t rows, int64_t hidden, double eps,
              double* y) {
  const double n = static_cast<double>(hidden);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * hidden;
    double* yr = y + r * hidden;

    bool has_nan = false, has_inf = false;
    double max_abs = 0;
    for (int64_t i = 0; i < hidden; ++i) {
      const double a = std::fabs(xr[i]);
      if (std::isnan(a)) has_nan = true;
      else if (std::isinf(a)) has_inf = true;
      else if (a > max_abs) max_abs = a;
    }

    // rms_s = rms / s with s a power of two near max|x|: scaling by s is exact, so ssq is
    // the plain sum of squares moved into a range where it cannot overflow or underflow.
    double s = 1, rms_s;
    if (has_nan) {
      rms_s = std::numeric_limits<double>::quiet_NaN();
    } else if (has_inf) {
      rms_s = std::numeric_limits<double>::infinity();
    } else {
      int e = 0;
      if (max_abs > 0) {
        std::frexp(max_abs, &e);
        s = std::ldexp(1.0, e);
      }
      double ssq = 0;
      for (int64_t i = 0; i < hidden; ++i) {
        const double v = xr[i] / s;
        ssq += v * v;
      }
      const double eps_s = eps / s / s;
      if (std::isfinite(eps_s)) {
        rms_s = std::sqrt(ssq / n + eps_s);
      } else {
        // Tiny row, eps not: mean(x²) <= s² < eps * 2^-1024, so dropping it is exact.
        s = 1;
        rms_s = std::sqrt(eps);
      }
    }
    // rms itself is in range (max|x|/sqrt(hidden) <= rms <= max|x| for small eps); use it
    // as the plain formula would, unless it is subnormal and would lose bits.
    const double rms = s * rms_s;
    if (std::isnan(rms) || rms >= std::numeric_limits<double>::min()) {
      for (int64_t i = 0; i < hidden; ++i) yr[i] = xr[i] / rms * weight[i];
    } else {
      for (int64_t i = 0; i < hidden; ++i) yr[i] = xr[i] / s / rms_s * weight[i];
    }
  }
}

}  // namespace npukit::golden
