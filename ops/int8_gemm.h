// INT8 GEMM as pure Halide algorithms (docs/ops/int8_gemm.md): the exact int32
// accumulation over packed weights, and the epilogues that turn it into float or
// requantized int8 outputs.
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct Int8GemmAcc {
  Halide::Var n{"n"}, m{"m"}, j{"j"}, c{"c"}, nb{"nb"}, kv{"kv"};
  bool pairwise = false;
  // (kk, kg): k = 4·kg + kk over k_pad, in whole groups; pairwise: (kx, kg), k = 4·kg + 2·j + kx
  Halide::RDom k;
  // pairwise only: (k, m) a + 128 widened to int16, so that a step's row is one broadcast;
  // (j, c, nb, m) dot's sum over pair j of each group, for channel 16·nb + c (the packed
  // layout's coordinates, so that each weight vector is one dense load)
  Halide::Func a_wide{"a_wide"}, pairs{"pairs_u8s8"};
  Halide::Func dot{"dot_u8s8"};      // (n, m): Σ_k (a + 128) · w, the form vpdpbusd computes
  Halide::Func acc{"acc"};           // (n, m): Σ_k (a − zp) · w, exact in int32
  Halide::Func a, w_packed;          // the inputs as given, for schedules that stage them (GPU)
};

// `a(k, m)`: int8 activations, readable for k in [0, k_pad); `w_packed(kk, lane, kg, nb)`:
// int8 weights as layouts::PackedInt8Weights stores them; `w_sums(n)`: Σ_k w[n][k].
// The u8 sum wraps modulo 2^32 and so does the correction: the result is exact whenever
// the true sum fits in int32, which the op's K limit guarantees.
// `pairwise`: for CPUs without a 4-byte dot product, the sum runs over pairs of k (one
// int16 × int16 → int32 pmaddwd lane each, exact) and the two pairs of a group are added
// once at the end, not horizontally on every step.
Int8GemmAcc define_int8_gemm_acc(Halide::Func a, Halide::Func w_packed, Halide::Func w_sums,
                                 Halide::Expr k_pad, Halide::Expr a_zero_point, bool pairwise = false);

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
