// Golden RoPE in double: rotary position embedding of x[tokens, heads, head_dim] at integer
// positions[tokens], each pair of dims rotated by position · theta^(−2i/rotary_dim).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

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

}  // namespace npukit::golden
