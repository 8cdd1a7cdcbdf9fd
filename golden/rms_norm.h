// Golden RMSNorm in double: y[r, i] = x[r, i] / sqrt(mean_i(x[r, i]²) + eps) * weight[i].
// Then its input classes (golden/rms_norm_cases.cpp): the cases the gate runs a
// kernel on and checks against the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

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


// The cases of one input class for x and weight of `dtype` (float16 and float32
// get their own overflow cases; float64 uses float32's). Integer dtypes have no RMSNorm
// cases: empty.
//
// Tensor t of case i (its position in the returned vector) is drawn from
// case_seed("rms_norm/<class>/<t>", i, chunk): naming the class and tensor in the seed
// keeps x and weight, and same-index cases of different classes, uncorrelated. The same
// (class, dtype) always gives the same bits.
//
// Dims "rows", "hidden"; inputs "x" [rows, hidden] and "weight" [hidden]; param "eps".
// Unless a case says otherwise x ~ N(0, 1), weight ~ U(0.5, 1.5), eps = 1e-5.
//   normal:   a few decode-like shapes.
//   boundary: hidden 1, 7, 63, 64, 65, 4095, 4096, 4097, 8192 against rows 1, 2, 3, 17,
//             128, 512 (not the full product); a constant row; a row of ~1e-4 values whose
//             mean square is far below eps; eps = 0 on normal data.
//   overflow: float16: |x| near 6e4 or 65504, and N(0, 300), so Σx² far exceeds 65504;
//             |x| ~ 1e-4 with eps = 0, whose squares underflow float16.
//             float32: |x| near 1e30 or 3e38, and N(0, 1e20), so Σx² overflows a float
//             accumulator; |x| ~ 1e-30 with eps = 0, whose squares underflow float.
//   nan_inf:  NaN, +Inf and -Inf each in its own row among normal rows; +Inf and -Inf in
//             one row; an all-zero row with eps = 0, for which golden gives NaN (0/0).
//   shape:    odd hidden 1, 3, 31, 33, 127, 129, 1000, 4097, 8191, 8193 with rows 1...512.
// Each class stays under ~8M elements so that it runs in about a second.
std::vector<Case> rms_norm_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
