// Golden LayerNorm in double:
//   y[r, i] = (x[r, i] - mean_r) / sqrt(var_r + eps) * weight[i] + bias[i],
//   mean_r = Σ_i x[r, i] / hidden,  var_r = Σ_i (x[r, i] - mean_r)² / hidden.
// Then its input classes (golden/layer_norm_cases.cpp): the cases the gate runs a kernel on
// and checks against the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Row-major x and y of [rows, hidden], weight and bias of [hidden]; y may alias x.
// Evaluated as written, two passes, plain IEEE double: every fp32 or fp16 input (|x| up to
// 3.4e38, hidden up to 2^20) has its sum and squared deviations in range.
//
// NaN/Inf contract, per row (plain IEEE evaluation of the formula):
// - a NaN or an ±Inf anywhere in the row makes the whole row NaN: the mean is NaN or ±Inf,
//   so the deviations hold Inf - Inf = NaN or an Inf, and the variance is NaN or Inf;
// - a constant row with eps = 0 gives 0/0 = NaN; with eps > 0 it gives the bias;
// - NaN/Inf in weight or bias propagate to their column only.
void layer_norm(const double* x, const double* weight, const double* bias, int64_t rows, int64_t hidden, double eps,
                double* y);

// The cases of one input class for x, weight and bias of `dtype` (float16 and float32 get
// their own overflow cases; integer dtypes none).
//
// Dims "rows", "hidden"; inputs "x" [rows, hidden], "weight" and "bias" [hidden]; param "eps".
// Unless a case says otherwise x ~ N(0, 1), weight ~ U(0.5, 1.5), bias ~ U(-0.5, 0.5),
// eps = 1e-5.
//   normal:   GPT-style widths (768, 1024, 1600, 2048, 4096) at decode and prefill rows.
//   boundary: hidden 1, 2, 7, 63, 64, 65, 1599, 1600, 1601, 4096, 8192 against rows 1 ... 512;
//             a constant row (y = bias); a row offset by 1e3 with unit spread (a one-pass
//             variance cancels to nothing); a row of ~1e-4 values whose variance is far
//             below eps; eps = 0; bias = 0.
//   overflow: float16: |x| near 5e4 ... 65000 and 65504 (Σx and Σx² far beyond 65504),
//             weights of ~3e4 that push |y| past 65504 (±Inf). float32: |x| near 1e30 and
//             3e38, N(0, 1e20), 1e-30 with eps = 0, weights of ~2e38 that push |y| past the
//             fp32 range.
//   nan_inf:  NaN, +Inf and -Inf each in its own row; +Inf and -Inf in one row; a constant
//             row with eps = 0; a NaN in weight and an Inf in bias (their columns).
//   shape:    odd hidden 1, 3, 31, 33, 127, 129, 1000, 1601, 4097, 8193 with rows 1 ... 512.
std::vector<Case> layer_norm_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
