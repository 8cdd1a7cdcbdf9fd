#include "golden/add_rms_norm.h"

#include "golden/half.h"
#include "golden/rms_norm.h"

namespace npukit::golden {

void add_rms_norm(const double* x, double* residual, const double* weight, int64_t rows, int64_t hidden, double eps,
                  DType dtype, double* y) {
  // x + residual of two values of `dtype` is exact in double for fp16 and fp32, so one
  // rounding gives the correctly rounded sum.
  for (int64_t i = 0; i < rows * hidden; ++i) residual[i] = round_to_dtype(x[i] + residual[i], dtype);
  rms_norm(residual, weight, rows, hidden, eps, y);
}

}  // namespace npukit::golden
