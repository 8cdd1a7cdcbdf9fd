// Golden INT8 GEMM (docs/ops/int8_gemm.md): y = f(a · wᵀ) with a[M, K] int8 asymmetric
// (a_zero_point) and w[N, K] int8 symmetric per output channel, accumulated exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "golden/cases.h"

namespace npukit::golden {

// The "out" parameter: the dtype of y and how it is formed from acc.
enum class Int8GemmOut { int32, float32, float16, int8 };
// The "rounding" parameter (int8 output only).
enum class Int8Rounding { fixed_point, float32 };

// "int32", "float32", "float16", "int8"; "fixed_point", "float" (the parameters' text).
std::string_view int8_gemm_out_name(Int8GemmOut out);
std::optional<Int8GemmOut> int8_gemm_out_from_name(std::string_view name);
std::string_view int8_rounding_name(Int8Rounding rounding);
std::optional<Int8Rounding> int8_rounding_from_name(std::string_view name);

// The parameters, with the doc's defaults. The scales are the parameters' double values;
// where the doc computes in fp32 (float outputs in the kernel, rounding=float) they are
// rounded to float there.
struct Int8GemmParams {
  int32_t a_zero_point = 0;
  double a_scale = 1;
  Int8GemmOut out = Int8GemmOut::int32;
  double out_scale = 1;
  int32_t out_zero_point = 0;
  Int8Rounding rounding = Int8Rounding::fixed_point;
};

// acc[m·N + n] = Σ_k (a[m·K + k] − a_zero_point) · w[n·K + k], exact for any K (partial
// sums of at most 65536 terms of magnitude <= 255·128 are exact in int32, and are added up
// in int64). a row-major [M, K], w row-major [N, K]; a_zero_point in [−128, 127], else
// std::invalid_argument. Loops m, n, k over contiguous rows.
std::vector<int64_t> int8_gemm_acc(const int8_t* a, const int8_t* w, int64_t M, int64_t N,
                                   int64_t K, int32_t a_zero_point);

// Expected y[M, N] in double, row-major, before rounding to the output dtype:
//   int32:   acc;
//   float32, float16: acc · (a_scales[m] · a_scale · w_scale[n]) + bias[n], in double,
//            evaluated in that order (a_scales[m] = 1 without per-row scales; the scale
//            product is exact in double for float-valued a_scale and w_scale, and rounds
//            once with a_scales; the product and the sum round once each). The kernel evaluates the same expression
//            in fp32 ((float)acc, fp32 products): the gate's rounding to the dtype and its
//            tolerance cover the difference. Where no finite intermediate overflows fp32,
//            NaN/Inf follow IEEE evaluation of that expression in either precision:
//            a NaN w_scale[n] or bias[n] makes column n NaN, a NaN a_scales[m] row m; w_scale[n] = ±Inf gives ±Inf
//            times the sign of acc, and NaN where acc = 0 (0·Inf); an infinite bias[n] makes
//            the column that infinity, or NaN where the scaled term is the opposite one.
//            Finite results beyond the dtype's range become ±Inf when the gate rounds them.
//   int8:    requantize_fixed_point with quantize_multiplier(a_scale · w_scale[n] /
//            out_scale), that multiplier formed in double as the doc says (exactly the real
//            one when the scales are floats: a·w is exact, the division rounds once), or
//            requantize_float with the scales rounded to float — bit-exact.
// w_scale (length N) is required unless out = int32, where it is ignored; bias (length N)
// and a_scales (length M, the per-row activation scales) are optional and only for float
// outputs. Errors, std::invalid_argument naming the value:
// K > k_limit(a_zero_point) (the op rejects such a K, and acc might not fit int32); a zero
// point outside [−128, 127]; a_scale, or for int8 output out_scale, not finite and > 0;
// w_scale missing; bias or a_scales given for int32 or int8 output; for fixed_point, a channel whose
// multiplier quantize_multiplier rejects (shift outside [−31, 30], w_scale[n] <= 0 or not
// finite); for rounding=float, a channel whose fp32 m is not finite.
std::vector<double> int8_gemm_reference(const int8_t* a, const int8_t* w, const float* w_scale,
                                        const float* bias, int64_t M, int64_t N, int64_t K,
                                        const Int8GemmParams& params, const float* a_scales = nullptr);

// The parameters of a case as the gate binds them: integers with std::stoll, reals with
// std::stod, choices by name; a missing one takes its default. Bad text:
// std::invalid_argument.
Int8GemmParams int8_gemm_params(const Case& c);

// int8_gemm_reference on a case of int8_gemm_cases(): dims "M", "N", "K", inputs "a", "w",
// and "w_scale", "bias", "a_scales" where present.
std::vector<double> int8_gemm_reference(const Case& c);

}  // namespace npukit::golden
