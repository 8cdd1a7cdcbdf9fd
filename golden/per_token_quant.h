// Golden per-token int8 quantization of activations and the dequantization of an int8
// projection (docs/ops/attention.md, "Int8 weights"), in plain C++ `float`: the contract is
// fp32 arithmetic, so these reproduce every scale, every q and every dequantized value bit
// for bit (golden is built with -ffp-contract=off; fp32 division and nearbyint under the
// default rounding mode are IEEE round-to-nearest-even). Shares no code with the kernels.
#pragma once

#include <cstdint>

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

}  // namespace npukit::golden
