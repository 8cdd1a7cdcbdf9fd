// Golden INT8 GEMM (docs/ops/int8_gemm.md): y = f(a · wᵀ) with a[M, K] int8 asymmetric
// (a_zero_point) and w[N, K] int8 symmetric per output channel, accumulated exactly.
// Then its input classes (golden/int8_gemm_cases.cpp): the cases the gate runs a
// kernel on and checks against the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

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


// The cases of one input class for the OUTPUT dtype `out_dtype` (int32, float32, float16
// or int8; the inputs are int8 whatever it is). Any other dtype: empty. For int8 every case comes twice, as "... rounding=fixed_point"
// and "... rounding=float" on the same data, except the shift sweep (fixed_point only).
//
// Tensor t of case i is drawn from case_seed("int8_gemm/<class>/<t>", i, chunk), i counting
// the cases before the int8 doubling; the same (class, dtype) always gives the same bits.
//
// Dims "M", "N", "K"; inputs "a" int8 [M, K], "w" int8 [N, K] (integers held as doubles),
// "w_scale" float32 [N] for every out but int32, "bias" float32 [N] in some float-output
// cases. Every case sets all six params: "a_zero_point", "out_zero_point" (decimal
// integers), "a_scale", "out_scale" (number_text; float-representable, so fp32 and double
// uses of them agree, except the one a_scale = 1 − 2^−40 below), "out" (the dtype's name)
// and "rounding" ("fixed_point" unless the case is the float copy of an int8 case).
// out_scale and out_zero_point are 1 and 0 unless out = int8.
// Every K is <= k_limit(a_zero_point): K = k_limit + 1 is a validation test of the op, not
// a gate case. Unless a case says otherwise a, w ~ U{−128 … 127}, w_scale ~ U(0.001, 0.01),
// bias ~ U(−1, 1), and an int8 case's out_scale maps the 98th percentile of |acc · a_scale ·
// w_scale[n]| to 127, so outputs span the int8 range and about 2% saturate.
//   normal:   decode M 1, 4, 16 and prefill M 64, 128 against K 256, 1024, 4096 and N 16,
//             64, 256, 1024 (e.g. [128, 4096] × [256, 4096]ᵀ, [64, 1024] × [1024, 1024]ᵀ);
//             a_zero_point 0, 3, −7; a_scale 0.01953125, 0.0234375, 0.015625; every other
//             float case with bias; int8 out_zero_point 0, 5, −3.
//   boundary: M 1, 2, 3, N 1, 15, 16, 17, 33, K 1, 3, 4, 5, 63, 64, 65; a and w at −128 and
//             127 only, then uniform; a_zero_point −128, 127 and 0; the four corners
//             (a, w) in {−128, 127}² as constant rows and channels; some int8 cases with
//             out_zero_point 127 or −128 (so most of their outputs saturate on one side).
//   overflow: K = k_limit(zp) for zp 0, 3, −1, −128, 127 with the worst-case inputs: rows
//             a = 127 and a = −128 against channels w = 127 and w = −128, so acc reaches
//             both K·Pmax and K·Nmin, the bound that limits K within one term of int32's
//             end (acc = INT32_MIN exactly for zp = −1).
//             float32: realistic scales (|y| <= 2.7e5), and one case "fp32 overflows in
//             channel 0" (w_scale 1e33: a_scale · w_scale = 1.6e31 is finite in fp32, acc
//             times it is not), whose channel 0 is ±Inf once stored.
//             float16: scales that keep |y| <= 60000, and two cases "fp16 overflows in
//             channel 0" (|y| ~ 2.7e5 there, ±Inf once stored; channel 1 stays ~300).
//             int8: per channel, one scale maps the corners to about ±100 and one 8 times
//             larger saturates at both ends; exact .5 ties (power-of-two scales: M 0.5,
//             0.25, 0.125, 2^−7, 1.5, 0.75 on acc = −128 … 127, and M 2^−5 … 2^−12 on
//             random data), where the modes differ (fixed_point: ties toward +∞ when
//             shift >= 0, away from zero when < 0; float: to even); acc = INT32_MIN at
//             M = 2^−32, the tie −0.5 (fixed_point −1, float 0); a_scale = 1 − 2^−40 (not a
//             float: fixed_point forms M in double), whose multipliers round up to 2³¹ and
//             carry into the shift; and the shift sweep (fixed_point only): M = 2^e for e in
//             [−32, 29] plus 0.75·2^30, 0.75·2^−31, 1.75, 1.25·2^−20, i.e. every shift in
//             [−31, 30], with a_scale = out_scale = 1, a_zero_point 127 and K = 65793, so
//             that |acc| reaches 2³¹ − 128 and even shift −31 gives nonzero outputs.
//             (M = 2^30 itself needs shift 31 and is an error.)
//   nan_inf:  float outputs: w_scale NaN, +Inf and −Inf in some channels, a row with
//             acc = 0 (a = zp) and a channel with w = 0, so the golden holds NaN columns,
//             ±Inf by the sign of acc and NaN where 0·Inf; bias NaN, +Inf, −Inf, and an
//             Inf scale against a −Inf bias (NaN where acc >= 0, −Inf where acc < 0).
//             int32 / int8, named "zeros: ...": acc exactly 0 in some rows (a = zp), some
//             channels (w = 0) and by cancellation (w alternating ±v against a constant
//             row), nonzero elsewhere (integer inputs hold no NaN).
//   shape:    M from 1 to 300, N and K odd and even: N up to 11008 (with K 128) and 4097,
//             K up to 4097 (with N 1) and 4096 (N 513), [300, 301] outputs.
// Every case's golden is finite in its dtype except in nan_inf and the "overflows" cases.
// Each (class, dtype) stays under 4.5e8 MACs and 11M elements, int8 copies included (int8
// normal is the largest), so the golden runs in well under a second.
std::vector<Case> int8_gemm_cases(InputClass input_class, DType out_dtype);

}  // namespace npukit::golden
