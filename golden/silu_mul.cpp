#include "golden/silu_mul.h"

#include <cmath>

namespace npukit::golden {

double silu(double g) {
  if (std::isinf(g) && g < 0) return -0.0;
  return g / (1.0 + std::exp(-g));
}

void silu_mul(const double* gate_up, int64_t tokens, int64_t ffn, double* y) {
  for (int64_t t = 0; t < tokens; ++t) {
    const double* gate = gate_up + t * 2 * ffn;
    const double* up = gate + ffn;
    for (int64_t f = 0; f < ffn; ++f) y[t * ffn + f] = silu(gate[f]) * up[f];
  }
}

}  // namespace npukit::golden
