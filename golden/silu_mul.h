// Golden SiLU-and-multiply in double: y[t, f] = silu(gate_up[t, 0, f]) * gate_up[t, 1, f],
// silu(g) = g / (1 + e^-g).
// Then its input classes (golden/silu_mul_cases.cpp): the cases the gate runs a
// kernel on and checks against the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// silu in double, with its limits as the contract: silu(-inf) = -0 (the formula would give
// -inf / inf = NaN), silu(+inf) = +inf, silu(NaN) = NaN; for g < -745, e^-g overflows
// double and g / inf = -0, which is also the limit.
double silu(double g);

// Row-major gate_up of [tokens, 2, ffn] (gate, then up, per token: a fused [tokens, 2·ffn]
// projection output), y of [tokens, ffn]. The product is plain IEEE: -0 · Inf and
// Inf · 0 are NaN, NaN in either half gives NaN.
void silu_mul(const double* gate_up, int64_t tokens, int64_t ffn, double* y);


// The cases of one input class for gate_up of `dtype` (float16 and float32 get their own
// overflow cases; float64 uses float32's). Integer dtypes: empty. Drawn from
// case_seed("silu_mul/<class>/<stream>", i, chunk) (golden/case_builder.h).
//
// Dims "tokens", "halves" (always 2), "ffn"; input "gate_up" [tokens, 2, ffn]. Unless a
// case says otherwise the gate is N(0, 3²) (both sides of silu's bend) and up is N(0, 1).
//   normal:   decode and prefill-like shapes, ffn up to 11008.
//   boundary: ffn 1, 7, 15, 16, 17, 2047, 2048, 2049 against a few token counts; gates of
//             ±0 and ±1e-30 (silu(g) = g/2), gates in [-90, -85] around fp32's flush of
//             e^g (silu ~ -1e-36), large gates in [20, 100] (silu(g) = g).
//   overflow: float32: gates of ±[1e30, 3.4e38] (silu = g or -0), gates and ups of
//             ±[1e19, 1e20] whose products overflow to ±Inf, gates of -100 and -1000
//             (silu = -0, not NaN). float16: gates and ups near ±6e4 (products to ±Inf),
//             gates in [-20, -10] (fp16-subnormal outputs).
//   nan_inf:  NaN in the gate and in up; gates of +Inf and -Inf against finite ups, zero
//             ups and Inf ups; Inf ups against zero gates (silu(0) · Inf = NaN).
//   shape:    odd ffn 1, 3, 31, 33, 127, 129, 1000, 4097, 11008 with tokens 1 ... 64.
std::vector<Case> silu_mul_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
