// Golden residual-add + RMSNorm (vLLM's fused_add_rms_norm) in double:
// residual ← round(x + residual); y = rms_norm(residual) · weight.
// Then its input classes (golden/add_rms_norm_cases.cpp): the cases the gate runs a
// kernel on and checks against the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Row-major x, residual and y of [rows, hidden], weight of [hidden]. The sum x + residual
// is rounded to `dtype` (the residual's storage type: the stream stays in it) and written
// back into `residual`; y is golden::rms_norm of that rounded residual, in double (its
// NaN/Inf contract is rms_norm's, applied to the sum: +Inf + -Inf is NaN, a sum beyond
// the dtype's range is ±Inf).
void add_rms_norm(const double* x, double* residual, const double* weight, int64_t rows, int64_t hidden, double eps,
                  DType dtype, double* y);


// The cases of one input class for tensors of `dtype` (float16 and float32 get their own
// overflow cases; float64 uses float32's). Integer dtypes: empty. Drawn from case_seed("add_rms_norm/<class>/<tensor>", i, chunk).
//
// Dims "rows", "hidden"; inputs "x" and "residual" [rows, hidden] (residual is updated in
// place) and "weight" [hidden]; param "eps". Unless a case says otherwise x ~ N(0, 0.5²),
// residual ~ N(0, 1), weight ~ U(0.5, 1.5), eps = 1e-6 (Llama's).
//   normal:   decode and prefill-like shapes.
//   boundary: hidden 1, 7, 63, 64, 65, 4095, 4096, 4097 against a few row counts; a row
//             with x = -residual (the sum is exactly 0: y = 0 with eps > 0), the same with
//             eps = 0 (NaN: 0/0); x far smaller than residual (the sum rounds to residual).
//   overflow: float16: x and residual of one sign near 4e4, whose sum overflows fp16 (±Inf
//             in the residual, so y is NaN there and 0 elsewhere in the row); |x| ~ 300
//             rows whose Σ exceeds 65504. float32: the same near 2e38, and |x| ~ 1e30 rows
//             whose Σx² overflows an fp32 accumulator.
//   nan_inf:  NaN in x, +Inf in residual, -Inf in x, +Inf + -Inf (NaN in the residual),
//             each in its own row among normal rows.
//   shape:    odd hidden 1, 3, 31, 33, 127, 129, 1000, 4097, 8191 with rows 1 ... 256.
std::vector<Case> add_rms_norm_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
