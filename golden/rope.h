// Golden RoPE in double: rotary position embedding of x[tokens, heads, head_dim] at integer
// positions[tokens], each pair of dims rotated by position · theta^(−2i/rotary_dim).
// Then its input classes (golden/rope_cases.cpp): the cases the gate runs a
// kernel on and checks against the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Which dims form pair i, for i in [0, rotary_dim/2):
//   interleaved: (2i, 2i + 1)              — GPT-J, Meta's Llama;
//   half:        (i, i + rotary_dim/2)     — GPT-NeoX, Hugging Face Llama.
// Both rotate the same angles; only the memory layout of the pairs differs.
enum class RopeStyle { interleaved, half };

// "interleaved", "half": the text of the "style" parameter.
std::string_view rope_style_name(RopeStyle style);
std::optional<RopeStyle> rope_style_from_name(std::string_view name);

// Row-major x and y of [tokens, heads, head_dim], positions of [tokens] in any order; y may
// alias x. Pair i (a, b) of every head of token t becomes
//   (a·cos φ − b·sin φ, a·sin φ + b·cos φ),   φ = positions[t] · inv_freq_i,
//   inv_freq_i = std::pow(theta, -(2i) / rotary_dim)   (exponent rounded to double),
// each product and sum rounded to double as written. Dims >= rotary_dim are copied.
//
// Angle: φ is taken to be p times the double inv_freq_i, exactly. The product is formed
// exactly as a double-double (std::fma) and reduced mod 2π with 2π split in three parts
// (Cody–Waite) before std::cos/std::sin see it, so the reduced angle is within ~1e-15 rad
// of the exact one for every int32 position; the plain double product is off by up to
// 6e-11 rad at p = 2^20, which would blur a judgement of a float32 kernel at long context.
// Double-only rather than long double: long double is double on MSVC and a software quad
// on aarch64, so a long double angle would differ in accuracy and bits between hosts.
// For |φ| < π the reduction changes nothing: the result is the plain double formula.
// inv_freq_i depends on libm's pow (within an ulp everywhere), so across libms φ may move
// by up to |p|·2^-53·inv_freq_i (~1e-10 rad at p = 2^20), far below any float32 tolerance.
//
// NaN/Inf contract, per pair (plain IEEE evaluation of the formula): a non-finite value
// reaches only the two outputs of its own pair, and dims >= rotary_dim only themselves.
// - a NaN in a or b makes both outputs of the pair NaN;
// - ±Inf with a finite partner gives ±Inf·cos φ and ±Inf·sin φ terms: both outputs ±Inf,
//   except at position 0, where sin φ = 0 and Inf·0 = NaN: a = +Inf at p = 0 gives
//   (+Inf, NaN), b = +Inf gives (NaN, +Inf);
// - Inf in both a and b can give Inf − Inf = NaN.
// cos φ is never exactly 0 for a double φ, and sin φ only for φ = 0, so no other Inf·0
// arises.
//
// Requirements, else std::invalid_argument: tokens, heads, head_dim >= 0; rotary_dim even
// and in [0, head_dim]; theta finite and >= 1 (so inv_freq_i <= 1); |positions[t]| <= 2^31.
void rope(const double* x, const int64_t* positions, int64_t tokens, int64_t heads,
          int64_t head_dim, int64_t rotary_dim, double theta, RopeStyle style, double* y);


// The cases of one input class for x of `dtype` (float16 and float32 get their own
// overflow cases; float64 uses float32's). Integer dtypes have no RoPE cases: empty.
//
// Tensor t of case i (its position in the returned vector) is drawn from
// case_seed("rope/<class>/<t>", i, chunk); the shuffle of positions from
// "rope/<class>/positions_order". The same (class, dtype) always gives the same bits.
//
// Dims "tokens", "heads", "head_dim"; inputs "x" [tokens, heads, head_dim] of dtype and
// "positions" [tokens] of int32 (integers held as doubles), every one in [0, max_position).
// Every case sets all four params: "theta" (real, number_text), "style" ("interleaved" or
// "half"), "rotary_dim" and "max_position" (integers in decimal, as an integer param is
// parsed). Unless a case says otherwise x ~ N(0, 1), positions are 0, 1, ..., tokens − 1,
// rotary_dim = head_dim, max_position = 2^20.
//   normal:   decode [1, 32, 128] at a random position, [17, 8, 64], prefill [128, 32, 128],
//             GQA-like and Llama-13B-like heads; consecutive, shuffled and random
//             positions; both styles; theta 10000 and 500000.
//   boundary: position 0 alone (identity) and max_position − 1 = 1048575, positions crowded
//             just below it; max_position = 4096 with position 4095; head_dim 64, 80, 128,
//             256; rotary_dim 32 of 128, 64 of 80, 64 of 256, 32 of 64, and 2.
//   overflow: float16: |x| in [5e4, 65504] and |x| = 65504, whose rotations reach up to
//             √2·65504 and so hold ±Inf once rounded to float16, and |x| in [3e4, 46000]
//             (below 65504/√2), which cannot overflow.
//             float32: |x| in [1e38, FLT_MAX] (some outputs round to ±Inf in float32) and
//             |x| in [1e37, 2.4e38] (below FLT_MAX/√2), which cannot.
//             Both: positions in [2^20 − 4096, 2^20) with theta 500000 and 10000, where a
//             float32 angle p·inv_freq is off by up to ~0.03 rad.
//   nan_inf:  NaN, +Inf and −Inf each in its own pair among normal values, for both styles;
//             +Inf and −Inf in one pair; Inf at a token at position 0 (Inf·sin 0 = NaN
//             for its partner); NaN and Inf in pass-through dims (rotary_dim < head_dim).
//             Golden is non-finite only inside the pairs that hold them.
//   shape:    tokens 1, 2, 7, 64, 257, 4097 against heads 1, 3, 64 and head_dim 2, 6, 64
//             (not the full product), both styles, some with rotary_dim < head_dim.
// Each class stays under ~8M elements so that it runs in about a second.
std::vector<Case> rope_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
