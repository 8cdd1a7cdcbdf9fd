// Golden per-token int8 quantization of activations and the dequantization of an int8
// projection (docs/ops/attention.md, "Int8 weights"), in plain C++ `float`: the contract is
// fp32 arithmetic, so these reproduce every scale, every q and every dequantized value bit
// for bit (golden is built with -ffp-contract=off; fp32 division and nearbyint under the
// default rounding mode are IEEE round-to-nearest-even). Shares no code with the kernels.
// Then its input classes (golden/per_token_quant_cases.cpp): the cases the gate runs a
// kernel on and checks bit for bit against the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Quantizes one row a[0 … K−1] into q and returns its scale s:
//   any a[c] NaN or ±Inf  → s = NaN, q = 0;
//   else s = (max_c |a[c]|) / 127 in fp32; s == 0 → q = 0;
//   else q[c] = clamp(nearbyint(a[c] / s), −127, 127), the quotient in fp32.
float quantize_token(const float* a, int64_t K, int8_t* q);

// (float)acc · (s · w_scale), in fp32 in that order. acc is an exact integer sum.
float dequantize_token(int64_t acc, float s, float w_scale);

// out[T, N] = the int8 projection of a[T, K] (values held in double; each is rounded to
// fp32 first, which is exact for fp32/fp16 inputs) by w[N, K] (int8 values held in double)
// with per-channel scales w_scale[N] (floats held in double): per row, quantize_token, the
// exact sum Σ_c q[c]·w[n, c] in int64, dequantize_token. Requirements, else
// std::invalid_argument: every w an integer in [−128, 127], every w_scale finite and > 0
// and representable in fp32.
void project_int8(const double* a, const double* w, const double* w_scale, int64_t T, int64_t N,
                  int64_t K, double* out);


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
