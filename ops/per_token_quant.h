// Per-token symmetric int8 quantization of activation rows and the dequantization of an
// int32 accumulator with a per-row and a per-channel scale: the two ends of a linear layer
// with int8 weights and fp activations (docs/ops/attention.md, "Int8 weights").
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct PerTokenQuant {
  Halide::Var k{"k"}, l{"l"}, t{"t"};
  Halide::RDom rj;                         // lane groups, [0, K / lanes)
  Halide::RDom rl;                         // lanes, [0, lanes)
  Halide::RDom rtail;                      // [K / lanes · lanes, K)
  Halide::Func mag_part{"mag_part"};       // (l, t): the maximum over k = j·lanes + l
  Halide::Func mag_bits{"mag_bits"};       // (t): max_k of |a(k, t)|'s bits as uint32
  Halide::Func scale{"token_scale"};       // (t): fp32 s, 0 or NaN
  Halide::Func q{"token_q"};               // (k, t): int8
};

// `a(k, t)`: fp32 activations, K per row. s = m / 127 with m = max |a| (NaN when a row
// holds NaN or ±Inf); q = clamp(nearbyint(a / s), −127, 127), or 0 where s is 0 or NaN.
// The maximum runs on the magnitude bits: for IEEE floats |a| as uint32 orders exactly
// like |a|, and NaN and ±Inf (bits ≥ 0x7f800000) sort above every finite value, so one
// integer reduction gives m and detects a non-finite row, immune to fast-math. The maximum
// keeps `lanes` partial maxima (one vector) over whole lane groups, then the tail.
PerTokenQuant define_per_token_quant(Halide::Func a, Halide::Expr K, int lanes);

// (float)acc · (row_scale · chan_scale), the multiplications in fp32 in that order.
Halide::Expr dequantize(Halide::Expr acc, Halide::Expr row_scale, Halide::Expr chan_scale);

}  // namespace npukit::ops
