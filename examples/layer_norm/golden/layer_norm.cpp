#include "golden/layer_norm.h"

#include <cmath>

namespace npukit::golden {

void layer_norm(const double* x, const double* weight, const double* bias, int64_t rows, int64_t hidden, double eps,
                double* y) {
  const double n = static_cast<double>(hidden);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * hidden;
    double* yr = y + r * hidden;
    double sum = 0;
    for (int64_t i = 0; i < hidden; ++i) sum += xr[i];
    const double mean = sum / n;
    double sqdev = 0;
    for (int64_t i = 0; i < hidden; ++i) sqdev += (xr[i] - mean) * (xr[i] - mean);
    const double std = std::sqrt(sqdev / n + eps);
    for (int64_t i = 0; i < hidden; ++i) yr[i] = (xr[i] - mean) / std * weight[i] + bias[i];
  }
}

}  // namespace npukit::golden
