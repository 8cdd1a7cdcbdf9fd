// IEEE 754 binary16 conversions and rounding of doubles to an element type.
// Written by hand (no F16C, no library) so the reference shares no code with the kernels.
#pragma once

#include <cstdint>

#include "npukit/dtype.h"

namespace npukit::golden {

// Round to nearest, ties to even, including subnormal results; |x| >= 65520 becomes ±Inf;
// NaN stays NaN with the top 10 payload bits kept (quiet bit set if they would all be 0).
uint16_t float_to_half_bits(float x);

// Same rounding, straight from double: going through float first would round twice and
// can land on the wrong side of a half tie.
uint16_t double_to_half_bits(double x);

// Exact: every binary16 value is a float. Signaling NaNs keep their payload bits.
float half_bits_to_float(uint16_t h);

// The value v becomes when stored as t, returned as a double:
//   float32: nearest float (RNE), out of range -> ±Inf;   float16: nearest half (RNE);
//   float64: v;   integers: round half to even, then saturate to the type's range
//   (int64 saturates to the doubles inside it, [-2^63, 2^63 - 1024]); ±Inf saturates.
// Rounding NaN to an integer type is the caller's error: it asserts in debug builds and
// returns 0 when assertions are off.
double round_to_dtype(double v, DType t);

}  // namespace npukit::golden
