// INT8 GEMM as pure Halide algorithms (docs/ops/int8_gemm.md): the exact int32
// accumulation over packed weights, and the epilogues that turn it into float or
// requantized int8 outputs.
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct Int8GemmAcc {
  Halide::Var n{"n"}, m{"m"};
  Halide::RDom k;                    // (kk, kg): k = 4·kg + kk over k_pad, in whole groups
  Halide::Func dot{"dot_u8s8"};      // (n, m): Σ_k (a + 128) · w, the form vpdpbusd computes
  Halide::Func acc{"acc"};           // (n, m): Σ_k (a − zp) · w, exact in int32
  Halide::Func a, w_packed;          // the inputs as given, for schedules that stage them (GPU)
};

// `a(k, m)`: int8 activations, readable for k in [0, k_pad); `w_packed(kk, lane, kg, nb)`:
// int8 weights as layouts::PackedInt8Weights stores them; `w_sums(n)`: Σ_k w[n][k].
// The u8 sum wraps modulo 2^32 and so does the correction: the result is exact whenever
// the true sum fits in int32, which the op's K limit guarantees.
Int8GemmAcc define_int8_gemm_acc(Halide::Func a, Halide::Func w_packed, Halide::Func w_sums,
                                 Halide::Expr k_pad, Halide::Expr a_zero_point);

// gemmlowp's SaturatingRoundingDoublingHighMul and RoundingDivideByPOT on int32 Exprs.
Halide::Expr saturating_rounding_doubling_high_mul(Halide::Expr a, Halide::Expr b);
Halide::Expr rounding_divide_by_pot(Halide::Expr x, Halide::Expr exponent);

// int8 from int32 `acc` with a per-channel (multiplier, shift), as TFLite's
// MultiplyByQuantizedMultiplier then + zero point, saturated.
Halide::Expr requantize_fixed_point(Halide::Expr acc, Halide::Expr multiplier, Halide::Expr shift,
                                    Halide::Expr out_zero_point);

// int8 from int32 `acc` as ONNX QLinearMatMul: nearbyint((float)acc · m) + zero point,
// saturated, all in fp32.
Halide::Expr requantize_float(Halide::Expr acc, Halide::Expr m, Halide::Expr out_zero_point);

}  // namespace npukit::ops
