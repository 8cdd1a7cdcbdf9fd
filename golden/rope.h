// Golden RoPE in double: rotary position embedding of x[tokens, heads, head_dim] at integer
// positions[tokens], each pair of dims rotated by position · theta^(−2i/rotary_dim).
// Then (below) its input classes, the cases the gate runs a kernel
// on and checks against the reference, and the gate's hooks.
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

// ---- Section NPUKIT_GOLDEN_rope: the reference and the input classes' cases, compiled once, into
// npukit_golden (cmake/NpukitOperators.cmake).
#ifdef NPUKIT_GOLDEN_rope

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace npukit::golden {
namespace {

// 2π = kTwoPi1 + kTwoPi2 + kTwoPi3 to ~2^-101. kTwoPi1 and kTwoPi2 have 24 significant bits,
// so k·kTwoPi1 and k·kTwoPi2 are exact for |k| < 2^29, which covers |φ| <= 2^31.
constexpr double kTwoPi1 = 0x1.921fb4p+2;
constexpr double kTwoPi2 = 0x1.4442d0p-22;
constexpr double kTwoPi3 = 0x1.8469898cc5170p-46;
constexpr double kInvTwoPi = 0x1.45f306dc9c883p-3;
constexpr int64_t kReducibleMaxPosition = int64_t{1} << 31;

// p · inv_freq reduced to about [−π, π]. With hi + lo = p · inv_freq exactly (fma), hi − k·2π₁
// is exact (both are multiples of ulp(hi) and the difference is far smaller than hi), and
// k·2π₂, k·2π₃ are exact or negligibly rounded, so what rounds is the last few additions
// near π, each by at most 2^-52: ~1e-15 rad in all (measured against long double: 3e-14,
// the long double angle's own error at p = 2^20).
double reduced_angle(double p, double inv_freq) {
  const double hi = p * inv_freq;
  const double lo = std::fma(p, inv_freq, -hi);
  const double k = std::round(hi * kInvTwoPi);
  const double r = (hi - k * kTwoPi1) - k * kTwoPi2;
  return (r - k * kTwoPi3) + lo;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("golden::rope: " + what);
}

}  // namespace

std::string_view rope_style_name(RopeStyle style) {
  return style == RopeStyle::interleaved ? "interleaved" : "half";
}

std::optional<RopeStyle> rope_style_from_name(std::string_view name) {
  for (RopeStyle s : {RopeStyle::interleaved, RopeStyle::half}) {
    if (rope_style_name(s) == name) return s;
  }
  return std::nullopt;
}

void rope(const double* x, const int64_t* positions, int64_t tokens, int64_t heads,
          int64_t head_dim, int64_t rotary_dim, double theta, RopeStyle style, double* y) {
  if (tokens < 0 || heads < 0 || head_dim < 0) fail("negative dimension");
  if (rotary_dim < 0 || rotary_dim > head_dim || rotary_dim % 2 != 0) {
    fail(fmt::format("rotary_dim {} must be even and in [0, head_dim = {}]", rotary_dim, head_dim));
  }
  if (!(std::isfinite(theta) && theta >= 1)) fail("theta must be finite and >= 1");
  for (int64_t t = 0; t < tokens; ++t) {
    if (positions[t] < -kReducibleMaxPosition || positions[t] > kReducibleMaxPosition) {
      fail(fmt::format("position {} outside [-2^31, 2^31]", positions[t]));
    }
  }

  const int64_t pairs = rotary_dim / 2;
  std::vector<double> inv_freq(static_cast<size_t>(pairs));
  for (int64_t i = 0; i < pairs; ++i) {
    inv_freq[static_cast<size_t>(i)] =
        std::pow(theta, -static_cast<double>(2 * i) / static_cast<double>(rotary_dim));
  }
  // Pair i is (i·a_step, i·a_step + b_offset).
  const int64_t a_step = style == RopeStyle::interleaved ? 2 : 1;
  const int64_t b_offset = style == RopeStyle::interleaved ? 1 : pairs;

  std::vector<double> cos_t(static_cast<size_t>(pairs)), sin_t(static_cast<size_t>(pairs));
  for (int64_t t = 0; t < tokens; ++t) {
    const auto p = static_cast<double>(positions[t]);
    for (int64_t i = 0; i < pairs; ++i) {
      const double phi = reduced_angle(p, inv_freq[static_cast<size_t>(i)]);
      cos_t[static_cast<size_t>(i)] = std::cos(phi);
      sin_t[static_cast<size_t>(i)] = std::sin(phi);
    }
    for (int64_t h = 0; h < heads; ++h) {
      const double* xr = x + (t * heads + h) * head_dim;
      double* yr = y + (t * heads + h) * head_dim;
      for (int64_t i = 0; i < pairs; ++i) {
        const int64_t ia = i * a_step, ib = ia + b_offset;
        const double a = xr[ia], b = xr[ib];
        const double c = cos_t[static_cast<size_t>(i)], s = sin_t[static_cast<size_t>(i)];
        yr[ia] = a * c - b * s;
        yr[ib] = a * s + b * c;
      }
      for (int64_t d = rotary_dim; d < head_dim; ++d) yr[d] = xr[d];
    }
  }
}

}  // namespace npukit::golden

#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>

#include "golden/case_builder.h"
#include "golden/seed.h"

namespace npukit::golden {
namespace {

constexpr int64_t kMaxPosition = int64_t{1} << 20;  // the operator's default max_position
constexpr RopeStyle kInterleaved = RopeStyle::interleaved;
constexpr RopeStyle kHalf = RopeStyle::half;

class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // Appends a case with the defaults (x ~ N(0, 1), positions 0, 1, ..., max_position 2^20);
  // the helpers below then adjust it and say so in its name.
  void add(int64_t tokens, int64_t heads, int64_t head_dim, int64_t rotary_dim, RopeStyle style,
           double theta = 10000) {
    // Integers in plain decimal: an integer parameter is parsed with strtoll, which would
    // stop at the exponent of number_text's "1e+03".
    CaseBuilder::add(sizes_text({{"t", tokens}, {"h", heads}, {"d", head_dim}, {"rd", rotary_dim}}) + " " +
                         std::string(rope_style_name(style)),
                     {{"tokens", tokens}, {"heads", heads}, {"head_dim", head_dim}},
                     {{"theta", number_text(theta)},
                      {"style", std::string(rope_style_name(style))},
                      {"rotary_dim", std::to_string(rotary_dim)},
                      {"max_position", std::to_string(kMaxPosition)}});
    if (theta != 10000) note("theta=" + std::to_string(static_cast<int64_t>(theta)));
    last().inputs["x"] = normal("x", {tokens, heads, head_dim}, 0, 1);
    Array& pos = last().inputs["positions"] = make_constant(DType::int32, {tokens}, 0);
    for (size_t k = 0; k < pos.values.size(); ++k) pos.values[k] = static_cast<double>(k);
  }

  void max_position(int64_t m) {
    last().params["max_position"] = std::to_string(m);
    note("max_position=" + std::to_string(m));
  }

  // positions become start, start + 1, ...
  void positions_from(int64_t start) {
    Array& pos = positions();
    for (size_t k = 0; k < pos.values.size(); ++k) {
      pos.values[k] = static_cast<double>(start + static_cast<int64_t>(k));
    }
    note("pos=" + std::to_string(start) + ".." +
         std::to_string(start + static_cast<int64_t>(pos.values.size()) - 1));
  }

  void set_positions(std::initializer_list<int64_t> ps) {
    Array& pos = positions();
    std::string text;
    size_t k = 0;
    for (int64_t p : ps) {
      pos.values.at(k++) = static_cast<double>(p);
      text += (text.empty() ? "" : ",") + std::to_string(p);
    }
    note("pos=" + text);
  }

  // Positions uniform in [lo, hi], drawn independently (repeats allowed, as in a batch of
  // decodes of different sequences).
  void random_positions(int64_t lo, int64_t hi) {
    Array& pos = positions();
    pos = integers("positions", DType::int32, pos.shape, lo, hi);
    note("pos~U[" + std::to_string(lo) + "," + std::to_string(hi) + "]");
  }

  // Fisher–Yates on the current positions.
  void shuffle_positions() {
    Array& pos = positions();
    Rng rng(case_seed(stream("positions_order"), index(), 0));
    for (size_t k = pos.values.size(); k > 1; --k) {
      const auto j = static_cast<size_t>(rng.integer(0, static_cast<int64_t>(k) - 1));
      std::swap(pos.values[k - 1], pos.values[j]);
    }
    note("shuffled");
  }

  void set(int64_t token, int64_t head, int64_t dim, double v) { CaseBuilder::set("x", {token, head, dim}, v); }

 private:
  Array& positions() { return input("positions"); }
};

void normal_cases(Builder& b) {
  // Decode: one token per sequence, anywhere in the context.
  b.add(1, 32, 128, 128, kInterleaved);
  b.random_positions(0, kMaxPosition - 1);
  b.add(1, 32, 128, 128, kHalf, 500000);
  b.random_positions(0, kMaxPosition - 1);
  b.add(4, 40, 128, 128, kInterleaved);
  b.random_positions(0, 8191);
  // Short chunks of a sequence, in order and out of it.
  b.add(17, 8, 64, 64, kHalf);
  b.add(17, 8, 64, 64, kInterleaved);
  b.positions_from(1000);
  b.shuffle_positions();
  b.add(17, 8, 64, 64, kHalf, 500000);
  b.positions_from(300);
  b.shuffle_positions();
  b.add(32, 32, 128, 128, kInterleaved, 500000);
  b.positions_from(4000);
  b.shuffle_positions();
  // Prefill, and GQA-like key heads.
  b.add(128, 32, 128, 128, kHalf, 500000);
  b.add(64, 8, 128, 128, kInterleaved);
  b.positions_from(8192);
  b.add(256, 16, 64, 64, kHalf);
  b.random_positions(0, 32767);
}

void boundary_cases(Builder& b) {
  // Position 0 is the identity; 2^20 − 1 is the last valid position by default.
  b.add(1, 8, 128, 128, kHalf);
  b.set_positions({0});
  b.add(1, 8, 128, 128, kInterleaved);
  b.set_positions({0});
  b.add(1, 32, 128, 128, kHalf, 500000);
  b.set_positions({kMaxPosition - 1});
  b.add(1, 32, 128, 128, kInterleaved);
  b.set_positions({kMaxPosition - 1});
  b.add(3, 8, 64, 64, kInterleaved, 500000);
  b.set_positions({kMaxPosition - 1, 0, kMaxPosition / 2});
  b.add(64, 4, 128, 128, kHalf);
  b.positions_from(kMaxPosition - 64);
  b.shuffle_positions();
  // A smaller max_position and its last position.
  b.add(2, 8, 64, 64, kHalf);
  b.max_position(4096);
  b.set_positions({4095, 0});
  b.add(16, 8, 128, 128, kInterleaved, 500000);
  b.max_position(4096);
  b.positions_from(4080);
  // head_dim 64, 80, 128, 256 and rotary_dim < head_dim (the rest passes through).
  for (auto [head_dim, rotary_dim, style, theta] :
       {std::tuple<int64_t, int64_t, RopeStyle, double>{64, 64, kHalf, 10000},
        {64, 32, kHalf, 10000},
        {80, 80, kHalf, 10000},
        {80, 64, kHalf, 10000},
        {80, 64, kInterleaved, 500000},
        {128, 32, kHalf, 10000},
        {128, 32, kInterleaved, 10000},
        {256, 256, kInterleaved, 10000},
        {256, 64, kInterleaved, 10000},
        {256, 256, kHalf, 500000}}) {
    b.add(5, 4, head_dim, rotary_dim, style, theta);
    b.random_positions(0, kMaxPosition - 1);
  }
  // One pair: both styles pair dims 0 and 1.
  b.add(9, 2, 64, 2, kInterleaved);
  b.random_positions(0, kMaxPosition - 1);
  b.add(9, 2, 64, 2, kHalf, 500000);
  b.random_positions(0, kMaxPosition - 1);
}

void overflow_cases(Builder& b) {
  // A rotation keeps |(a, b)| but not max(|a|, |b|): an output reaches up to √2·max|x|, so
  // inputs above max/√2 legitimately produce ±Inf in storage, and inputs below it cannot.
  const bool f16 = b.dtype() == DType::float16;
  const double max = f16 ? kFloat16Max : kFloat32Max;
  const std::string max_text = f16 ? "65504" : "FLT_MAX";
  b.add(4, 8, 128, 128, kInterleaved);
  b.random_positions(0, kMaxPosition - 1);
  b.signed_uniform("x", f16 ? 50000 : 1e38, max);
  b.note(f16 ? "|x|~U[5e4,65504]" : "|x|~U[1e38,FLT_MAX]");
  b.add(2, 4, 64, 64, kHalf);
  b.random_positions(0, kMaxPosition - 1);
  b.signed_uniform("x", max, max);
  b.note("|x|=" + max_text);
  b.add(4, 8, 128, 128, kHalf, 500000);
  b.random_positions(0, kMaxPosition - 1);
  b.signed_uniform("x", f16 ? 30000 : 1e37, f16 ? 46000 : 2.4e38);
  b.note(f16 ? "|x|~U[3e4,46000]" : "|x|~U[1e37,2.4e38]");
  b.add(16, 8, 128, 128, kHalf, 500000);
  b.random_positions(kMaxPosition - 4096, kMaxPosition - 1);
  b.signed_uniform("x", f16 ? 50000 : 1e38, max);
  b.note(f16 ? "|x|~U[5e4,65504]" : "|x|~U[1e38,FLT_MAX]");
  // Long context on ordinary values: a float32 angle p·inv_freq near 2^20 is off by up to
  // ~0.03 rad from rounding the product alone.
  b.add(64, 8, 128, 128, kHalf, 500000);
  b.random_positions(kMaxPosition - 4096, kMaxPosition - 1);
  b.add(64, 8, 128, 128, kInterleaved, 500000);
  b.positions_from(kMaxPosition - 64);
  b.shuffle_positions();
  b.add(64, 8, 128, 128, kInterleaved);
  b.random_positions(kMaxPosition - 4096, kMaxPosition - 1);
}

void nan_inf_cases(Builder& b) {
  for (RopeStyle style : {kInterleaved, kHalf}) {
    b.add(4, 8, 64, 64, style);
    b.positions_from(100);
    b.note("nan/+inf/-inf at t1h2d10/t2h5d33/t3h0d0");
    b.set(1, 2, 10, kNaN);
    b.set(2, 5, 33, kInf);
    b.set(3, 0, 0, -kInf);
  }
  // At position 0 sin φ = 0, so Inf·0 makes the partner NaN.
  b.add(3, 4, 128, 128, kHalf, 500000);
  b.set_positions({0, 7, kMaxPosition - 1});
  b.note("+inf/-inf at pos 0 t0h1d5/t0h2d70, nan t2h3d127");
  b.set(0, 1, 5, kInf);
  b.set(0, 2, 70, -kInf);
  b.set(2, 3, 127, kNaN);
  b.add(2, 4, 128, 128, kInterleaved);
  b.set_positions({0, 1});
  b.note("+inf at pos 0 t0h0d0, -inf t1h3d1");
  b.set(0, 0, 0, kInf);
  b.set(1, 3, 1, -kInf);
  b.add(2, 4, 64, 64, kInterleaved);
  b.set_positions({5, 9});
  b.note("+inf,-inf in one pair t1h1d20,21");
  b.set(1, 1, 20, kInf);
  b.set(1, 1, 21, -kInf);
  // Pass-through dims keep their NaN/Inf to themselves.
  b.add(3, 2, 80, 64, kHalf);
  b.positions_from(40);
  b.note("nan/+inf/-inf past rd t0h0d70/t1h1d64/t2h0d79, nan t2h1d3");
  b.set(0, 0, 70, kNaN);
  b.set(1, 1, 64, kInf);
  b.set(2, 0, 79, -kInf);
  b.set(2, 1, 3, kNaN);
  b.add(5, 4, 128, 32, kInterleaved);
  b.random_positions(0, kMaxPosition - 1);
  b.note("nan/+inf past rd t1h0d32/t4h3d127, -inf t2h2d31");
  b.set(1, 0, 32, kNaN);
  b.set(4, 3, 127, kInf);
  b.set(2, 2, 31, -kInf);
}

void shape_cases(Builder& b) {
  for (auto [tokens, heads, head_dim, rotary_dim, style] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t, RopeStyle>{1, 1, 2, 2, kInterleaved},
        {1, 64, 64, 64, kHalf},
        {2, 3, 6, 6, kHalf},
        {2, 1, 64, 64, kInterleaved},
        {7, 3, 6, 4, kInterleaved},
        {7, 64, 64, 64, kHalf},
        {7, 1, 6, 2, kHalf},
        {64, 3, 64, 64, kInterleaved},
        {64, 1, 6, 6, kHalf},
        {257, 1, 2, 2, kHalf},
        {257, 3, 6, 6, kInterleaved},
        {257, 64, 64, 32, kHalf},
        {4097, 1, 2, 2, kInterleaved},
        {4097, 3, 6, 6, kHalf},
        {4097, 1, 64, 64, kHalf},
        {4097, 3, 64, 48, kInterleaved},
        // Interleaved rows that are not a whole number of the CPU schedule's two-vector
        // blocks (8, 16 or 32 lanes by tier): the last block is shifted back over the one
        // before, and the rows too short for a block take the one-vector path.
        {3, 2, 24, 24, kInterleaved},
        {3, 2, 40, 36, kInterleaved}}) {
    b.add(tokens, heads, head_dim, rotary_dim, style);
    // Prefill-like chunks in order for the longer ones, scattered decodes for the rest.
    if (tokens >= 64) {
      b.positions_from(tokens == 4097 ? 0 : 12345);
    } else {
      b.random_positions(0, kMaxPosition - 1);
    }
  }
}

}  // namespace

std::vector<Case> rope_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  Builder b("rope", input_class, dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden

#endif  // NPUKIT_GOLDEN_rope


// ---- Section NPUKIT_GATE_HOOKS_rope: the gate's hooks, compiled once, into the gate (npukit_gate);
// libnpukit.so links none of this.
#ifdef NPUKIT_GATE_HOOKS_rope

// The gate's hooks for rope: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/rope.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  const golden::Array& p = c.inputs.at("positions");
  const int64_t tokens = c.dims.at("tokens"), heads = c.dims.at("heads"), head_dim = c.dims.at("head_dim");
  const int64_t rd_param = std::stoll(c.params.at("rotary_dim"));
  const auto style = golden::rope_style_from_name(c.params.at("style"));
  std::vector<int64_t> positions(p.values.begin(), p.values.end());
  std::vector<double> y(x.values.size());
  golden::rope(x.values.data(), positions.data(), tokens, heads, head_dim, rd_param == 0 ? head_dim : rd_param,
               std::stod(c.params.at("theta")), *style, y.data());
  return {{"y", std::move(y)}};
}

golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  // a·cos − b·sin with cos, sin and the products rounded to fp32 is off by a few fp32 ULPs
  // of max(|a|, |b|), not of the result: where the two terms nearly cancel, the result is
  // small and only an absolute bound scaled by the inputs' magnitude is meaningful.
  const double max_abs = golden::max_abs_finite(c.inputs.at("x"));
  const double fp32_ulps = 4 * std::ldexp(max_abs, -23);
  golden::Tolerance t;
  if (dtype == DType::float16) {
    t.rtol = 1e-3;
    t.atol = std::max(1e-5, fp32_ulps);
    t.reason = "fp32 rotation (4 fp32 ULPs of max|x| absolute), then one rounding to fp16 (1 fp16 ULP)";
  } else {
    t.rtol = 1e-5;
    t.atol = std::max(1e-6, fp32_ulps);
    t.reason = "fp64 angles, fp32 cos/sin and rotation: 4 fp32 ULPs of max|x| absolute, 1e-5 relative";
  }
  return t;
}

}  // namespace

GateHooks rope_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::rope_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN or Inf in x reaches only the two outputs of its own pair (dims past rotary_dim only "
      "themselves): a NaN makes both NaN; an Inf gives Inf * cos and Inf * sin terms, so at "
      "position 0 (sin = 0) Inf * 0 = NaN. fp16 outputs beyond 65504 are Inf, as storage says.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_rope
