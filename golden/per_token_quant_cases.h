// Input classes for per-token int8 quantization: the cases the gate runs a kernel on and
// checks bit for bit against golden::quantize_token.
#pragma once

#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// The cases of one input class for `a` of `dtype` (float16 and float32 get their own
// overflow cases). Integer dtypes have no cases: empty.
//
// Input "a" of case i is drawn from case_seed("per_token_quant/<class>/a", i, chunk).
// Dims "T", "K"; input "a" [T, K]; no params. Unless a case says otherwise a ~ N(0, 1).
//   normal:   decode and prefill shapes (T = 1 … 64, K = 64 … 4096).
//   boundary: K 1, 7, 15, 16, 17, 63, 64, 65, 4095, 4096, 4097 against T 1 … 33; a zero
//             row (s = 0, q = 0); a constant row (q = ±127); a row whose quotients are
//             exact ties (s = 1: x.5 rounds to even); a row whose maximum is negative; a
//             row with one outlier (most q near 0).
//   overflow: float16: |a| near 65504 and fp16 subnormals (s is an fp32 normal);
//             float32: |a| near 3.4e38 (s stays finite, a / s ≤ 127), |a| ~ 1e-38 and
//             subnormal rows whose s underflows to a subnormal or to 0.
//   nan_inf:  NaN, +Inf and −Inf each in its own row among normal rows (s = NaN, q = 0
//             for that row only); +Inf and −Inf in one row; NaN in the last element.
//   shape:    odd K 1, 3, 31, 33, 127, 129, 1000, 4097, 8191 with T 1 … 129.
// Outputs "q" [T, K] int8 and "scale" [T] float32.
std::vector<Case> per_token_quant_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
