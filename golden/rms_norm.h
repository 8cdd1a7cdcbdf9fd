// Golden RMSNorm in double: y[r, i] = x[r, i] / sqrt(mean_i(x[r, i]²) + eps) * weight[i].
#pragma once

#include <cstdint>

namespace npukit::golden {

// Row-major x and y of [rows, hidden], weight of [hidden]; y may alias x.
// Evaluated as written: a division by the rms, then a multiplication by the weight (not a
// multiplication by a reciprocal), so it rounds like a straightforward double kernel.
//
// Range: the sum of squares is taken on the row scaled by a power of two near its max |x|
// (as BLAS nrm2 does), so |x| up to 1e300 or down to 1e-300 neither overflows nor
// underflows; for data on which the plain double formula neither overflows nor underflows,
// the result is bit-identical to it.
//
// NaN/Inf contract, per row (the same as plain IEEE evaluation of the formula):
// - a NaN anywhere in the row makes the whole row NaN;
// - otherwise an ±Inf in the row makes the mean Inf, so finite x give x/Inf*w = ±0*w and
//   the ±Inf elements give Inf/Inf = NaN;
// - an all-zero row with eps = 0 gives 0/0 = NaN; with eps > 0 it gives ±0*w;
// - NaN/Inf in weight propagate through the final multiplication only.
void rms_norm(const double* x, const double* weight, int64_t rows, int64_t hidden, double eps,
              double* y);

}  // namespace npukit::golden
