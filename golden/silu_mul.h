// Golden SiLU-and-multiply in double: y[t, f] = silu(gate_up[t, 0, f]) * gate_up[t, 1, f],
// silu(g) = g / (1 + e^-g).
#pragma once

#include <cstdint>

namespace npukit::golden {

// silu in double, with its limits as the contract: silu(-inf) = -0 (the formula would give
// -inf / inf = NaN), silu(+inf) = +inf, silu(NaN) = NaN; for g < -745, e^-g overflows
// double and g / inf = -0, which is also the limit.
double silu(double g);

// Row-major gate_up of [tokens, 2, ffn] (gate, then up, per token: a fused [tokens, 2·ffn]
// projection output), y of [tokens, ffn]. The product is plain IEEE: -0 · Inf and
// Inf · 0 are NaN, NaN in either half gives NaN.
void silu_mul(const double* gate_up, int64_t tokens, int64_t ffn, double* y);

}  // namespace npukit::golden
