// Golden residual-add + RMSNorm (vLLM's fused_add_rms_norm) in double:
// residual ← round(x + residual); y = rms_norm(residual) · weight.
#pragma once

#include <cstdint>

#include "npukit/dtype.h"

namespace npukit::golden {

// Row-major x, residual and y of [rows, hidden], weight of [hidden]. The sum x + residual
// is rounded to `dtype` (the residual's storage type: the stream stays in it) and written
// back into `residual`; y is golden::rms_norm of that rounded residual, in double (its
// NaN/Inf contract is rms_norm's, applied to the sum: +Inf + -Inf is NaN, a sum beyond
// the dtype's range is ±Inf).
void add_rms_norm(const double* x, double* residual, const double* weight, int64_t rows, int64_t hidden, double eps,
                  DType dtype, double* y);

}  // namespace npukit::golden
