// Golden weight quantization (docs/quantization.md), the reference `npukit quantize`'s
// library (tools/quantize/weight_quant.h) is checked against bit for bit. Plain C++ in
// fp32 as the contract says (golden is built with -ffp-contract=off); round half to even
// is written out with floor, not taken from nearbyint, so that the check does not lean on
// the rounding mode the tool's own code relies on. Shares no code with tools/quantize.
#pragma once

#include <cstdint>

namespace npukit::golden {

// Round half to even of a finite float of magnitude below 2^23 (every quotient here).
float round_half_even(float x);

// int8, one scale (and zero point) per row of w[N, K]:
//   symmetric:  s[n] = max_k |w| / 127 (1 if that is 0),
//               q = clamp(rhe(w / s), −127, 127), zp untouched (may be null);
//   asymmetric: lo = min(0, min_k w), hi = max(0, max_k w),
//               s[n] = float((double(hi) − double(lo)) / 255) (1 if that is 0),
//               zp[n] = clamp(rhe(−128 − lo / s), −128, 127), q = clamp(rhe(w / s) + zp, −128, 127).
// Every w must be finite (the caller's rule; not checked here).
void quantize_int8_per_channel(const float* w, int64_t N, int64_t K, bool symmetric, int8_t* q, float* s, int8_t* zp);

// int4, one scale (and zero point) per group of G consecutive k in each row; K % G == 0.
//   symmetric:  s = max |w| / 7 (1 if 0), q = clamp(rhe(w / s), −7, 7), stored as the
//               nibble q & 15 (two's complement);
//   asymmetric: lo, hi as above, s = float((double(hi) − double(lo)) / 15) (1 if 0),
//               zp = clamp(rhe(0 − lo / s), 0, 15) (uint8), q = clamp(rhe(w / s) + zp, 0, 15).
// packed[n, k / 2] holds even k in bits 0–3 and odd k in bits 4–7; s and zp are [N, K / G].
void quantize_int4_group(const float* w, int64_t N, int64_t K, int64_t G, bool symmetric, uint8_t* packed, float* s,
                         uint8_t* zp);

}  // namespace npukit::golden
