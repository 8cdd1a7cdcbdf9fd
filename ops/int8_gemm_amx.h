// INT8 GEMM's accumulation in the form Halide 14 lowers to AMX tile instructions
// (src/ExtractTileOperations.cpp at v14.0.0 matches exactly this shape): a signed × signed
// int32 dot over one RDom, with B read as w_packed(k % 4, n % 16, k / 4, n / 16), AMX's
// "VNNI-4" B layout, which layouts::PackedInt8Weights already is (one 64-byte row per
// 4 k of 16 channels). s8 × s8 is tdpbssd: no +128 shift is needed, the zero point comes
// back out through Σ_k w.
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct Int8GemmAccAmx {
  Halide::Var n{"n"}, m{"m"};
  Halide::RDom k;                       // over k_pad
  Halide::Func dot{"dot_s8s8"};         // (n, m): Σ_k a · w, the tile matmul
  Halide::Func acc{"acc"};              // (n, m): dot − zp · Σ_k w, or dot where zp is 0
};

// The same inputs as define_int8_gemm_acc (ops/int8_gemm.h). `zero_point_zero`: the caller
// promises a_zero_point = 0 and acc is dot itself, so that the schedule can store the AMX
// tiles straight into acc (ExtractTileOperations takes only a plain copy out of a tile).
Int8GemmAccAmx define_int8_gemm_acc_amx(Halide::Func a, Halide::Func w_packed, Halide::Func w_sums, Halide::Expr k_pad,
                                        Halide::Expr a_zero_point, bool zero_point_zero);

}  // namespace npukit::ops
