// Golden INT8 GEMM (docs/ops/int8_gemm.md): y = f(a · wᵀ) with a[M, K] int8 asymmetric
// (a_zero_point) and w[N, K] int8 symmetric per output channel, accumulated exactly.
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

// ---- Section NPUKIT_GOLDEN_int8_gemm: the reference and the input classes' cases, compiled once, into
// npukit_golden (cmake/NpukitOperators.cmake).
#ifdef NPUKIT_GOLDEN_int8_gemm

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "golden/requantize.h"

namespace npukit::golden {
namespace {

// |(a − zp)·w| <= 255·128 = 32640 and 65536·32640 < 2³¹: a block of this many terms sums
// exactly in int32, which vectorizes far better than an int64 accumulator.
constexpr int64_t kExactInt32Terms = 65536;

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("golden::int8_gemm: " + what);
}

void check_zero_point(const char* name, int64_t zp) {
  if (zp < -128 || zp > 127) {
    fail(fmt::format("{} = {} is outside [-128, 127]", name, zp));
  }
}

void check_scale(const char* name, double s) {
  if (!std::isfinite(s) || !(s > 0)) {
    fail(fmt::format("{} = {}: must be finite and > 0", name, number_text(s)));
  }
}

int64_t parse_integer(const std::string& name, const std::string& text) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    fail(fmt::format("parameter {}='{}' is not an integer", name, text));
  }
  return v;
}

double parse_real(const std::string& name, const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    fail(fmt::format("parameter {}='{}' is not a number", name, text));
  }
  return v;
}

std::vector<int8_t> int8_values(const Case& c, const std::string& name, int64_t count) {
  const Array& x = c.inputs.at(name);
  if (x.size() != count || static_cast<int64_t>(x.values.size()) != count) {
    fail(fmt::format("input {} has {} elements, expected {}", name, x.values.size(), count));
  }
  std::vector<int8_t> out(x.values.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const double v = x.values[i];
    if (!(v >= -128 && v <= 127) || v != std::floor(v)) {
      fail(fmt::format("input {}[{}] = {} is not an int8", name, i, number_text(v)));
    }
    out[i] = static_cast<int8_t>(v);
  }
  return out;
}

std::vector<float> float_values(const Case& c, const std::string& name, int64_t count) {
  const Array& x = c.inputs.at(name);
  if (static_cast<int64_t>(x.values.size()) != count) {
    fail(fmt::format("input {} has {} elements, expected {}", name, x.values.size(), count));
  }
  return std::vector<float>(x.values.begin(), x.values.end());
}

}  // namespace

std::string_view int8_gemm_out_name(Int8GemmOut out) {
  switch (out) {
    case Int8GemmOut::int32: return "int32";
    case Int8GemmOut::float32: return "float32";
    case Int8GemmOut::float16: return "float16";
    case Int8GemmOut::int8: return "int8";
  }
  return "?";
}

std::optional<Int8GemmOut> int8_gemm_out_from_name(std::string_view name) {
  for (Int8GemmOut o : {Int8GemmOut::int32, Int8GemmOut::float32, Int8GemmOut::float16,
                        Int8GemmOut::int8}) {
    if (int8_gemm_out_name(o) == name) return o;
  }
  return std::nullopt;
}

std::string_view int8_rounding_name(Int8Rounding rounding) {
  return rounding == Int8Rounding::fixed_point ? "fixed_point" : "float";
}

std::optional<Int8Rounding> int8_rounding_from_name(std::string_view name) {
  for (Int8Rounding r : {Int8Rounding::fixed_point, Int8Rounding::float32}) {
    if (int8_rounding_name(r) == name) return r;
  }
  return std::nullopt;
}

std::vector<int64_t> int8_gemm_acc(const int8_t* a, const int8_t* w, int64_t M, int64_t N,
                                   int64_t K, int32_t a_zero_point) {
  check_zero_point("a_zero_point", a_zero_point);
  if (M < 0 || N < 0 || K < 0) fail("negative dimension");
  std::vector<int64_t> acc(static_cast<size_t>(M * N));
  std::vector<int16_t> d(static_cast<size_t>(K));
  for (int64_t m = 0; m < M; ++m) {
    const int8_t* am = a + m * K;
    for (int64_t k = 0; k < K; ++k) {
      d[static_cast<size_t>(k)] = static_cast<int16_t>(am[k] - a_zero_point);
    }
    for (int64_t n = 0; n < N; ++n) {
      const int8_t* wn = w + n * K;
      int64_t sum = 0;
      for (int64_t k0 = 0; k0 < K; k0 += kExactInt32Terms) {
        const int64_t k1 = std::min(K, k0 + kExactInt32Terms);
        int32_t part = 0;
        for (int64_t k = k0; k < k1; ++k) {
          part += int32_t{d[static_cast<size_t>(k)]} * int32_t{wn[k]};
        }
        sum += part;
      }
      acc[static_cast<size_t>(m * N + n)] = sum;
    }
  }
  return acc;
}

std::vector<double> int8_gemm_reference(const int8_t* a, const int8_t* w, const float* w_scale,
                                        const float* bias, int64_t M, int64_t N, int64_t K,
                                        const Int8GemmParams& p, const float* a_scales) {
  check_zero_point("a_zero_point", p.a_zero_point);
  check_scale("a_scale", p.a_scale);
  if (K > k_limit(p.a_zero_point)) {
    fail(fmt::format("K = {} exceeds K_limit = {} for a_zero_point = {} (acc could overflow int32)", K,
                     k_limit(p.a_zero_point), p.a_zero_point));
  }
  const bool float_out = p.out == Int8GemmOut::float32 || p.out == Int8GemmOut::float16;
  if (p.out != Int8GemmOut::int32 && w_scale == nullptr) {
    fail(fmt::format("w_scale is required for out={}", int8_gemm_out_name(p.out)));
  }
  if (bias != nullptr && !float_out) {
    fail(fmt::format("bias is only for float outputs, not out={}", int8_gemm_out_name(p.out)));
  }
  if (a_scales != nullptr && !float_out) {
    fail(fmt::format("a_scales is only for float outputs, not out={}", int8_gemm_out_name(p.out)));
  }
  if (p.out == Int8GemmOut::int8) {
    check_scale("out_scale", p.out_scale);
    check_zero_point("out_zero_point", p.out_zero_point);
  }

  const std::vector<int64_t> acc = int8_gemm_acc(a, w, M, N, K, p.a_zero_point);
  std::vector<double> y(acc.size());
  const auto at = [N](int64_t m, int64_t n) { return static_cast<size_t>(m * N + n); };
  switch (p.out) {
    case Int8GemmOut::int32:
      for (size_t i = 0; i < acc.size(); ++i) y[i] = static_cast<double>(acc[i]);
      break;
    case Int8GemmOut::float32:
    case Int8GemmOut::float16:
      for (int64_t n = 0; n < N; ++n) {
        const double s = p.a_scale * static_cast<double>(w_scale[n]);
        for (int64_t m = 0; m < M; ++m) {
          const double row = a_scales != nullptr ? static_cast<double>(a_scales[m]) : 1.0;
          double v = static_cast<double>(acc[at(m, n)]) * (row * s);
          if (bias != nullptr) v += static_cast<double>(bias[n]);
          y[at(m, n)] = v;
        }
      }
      break;
    case Int8GemmOut::int8:
      for (int64_t n = 0; n < N; ++n) {
        const std::string channel = "channel " + std::to_string(n) + " (w_scale = " +
                                    number_text(w_scale[n]) + ")";
        if (p.rounding == Int8Rounding::fixed_point) {
          const double real = p.a_scale * static_cast<double>(w_scale[n]) / p.out_scale;
          const std::optional<QuantizedMultiplier> q = quantize_multiplier(real);
          if (!q) {
            fail(fmt::format("{}: multiplier {} is not finite and > 0 or needs a shift outside [-31, 30]", channel,
                             number_text(real)));
          }
          for (int64_t m = 0; m < M; ++m) {
            y[at(m, n)] = requantize_fixed_point(static_cast<int32_t>(acc[at(m, n)]), *q,
                                                 p.out_zero_point);
          }
        } else {
          const auto as = static_cast<float>(p.a_scale), os = static_cast<float>(p.out_scale);
          if (!std::isfinite((as * w_scale[n]) / os)) fail(fmt::format("{}: fp32 m is not finite", channel));
          for (int64_t m = 0; m < M; ++m) {
            y[at(m, n)] = requantize_float(static_cast<int32_t>(acc[at(m, n)]), as, w_scale[n],
                                           os, p.out_zero_point);
          }
        }
      }
      break;
  }
  return y;
}

Int8GemmParams int8_gemm_params(const Case& c) {
  Int8GemmParams p;
  const auto text = [&](const std::string& name) -> const std::string* {
    const auto it = c.params.find(name);
    return it == c.params.end() ? nullptr : &it->second;
  };
  if (const std::string* t = text("a_zero_point")) {
    const int64_t v = parse_integer("a_zero_point", *t);
    check_zero_point("a_zero_point", v);
    p.a_zero_point = static_cast<int32_t>(v);
  }
  if (const std::string* t = text("out_zero_point")) {
    const int64_t v = parse_integer("out_zero_point", *t);
    check_zero_point("out_zero_point", v);
    p.out_zero_point = static_cast<int32_t>(v);
  }
  if (const std::string* t = text("a_scale")) p.a_scale = parse_real("a_scale", *t);
  if (const std::string* t = text("out_scale")) p.out_scale = parse_real("out_scale", *t);
  if (const std::string* t = text("out")) {
    const std::optional<Int8GemmOut> o = int8_gemm_out_from_name(*t);
    if (!o) fail(fmt::format("parameter out='{}' is not one of int32, float32, float16, int8", *t));
    p.out = *o;
  }
  if (const std::string* t = text("rounding")) {
    const std::optional<Int8Rounding> r = int8_rounding_from_name(*t);
    if (!r) fail(fmt::format("parameter rounding='{}' is not one of fixed_point, float", *t));
    p.rounding = *r;
  }
  return p;
}

std::vector<double> int8_gemm_reference(const Case& c) {
  const int64_t M = c.dims.at("M"), N = c.dims.at("N"), K = c.dims.at("K");
  const Int8GemmParams p = int8_gemm_params(c);
  const std::vector<int8_t> a = int8_values(c, "a", M * K), w = int8_values(c, "w", N * K);
  std::vector<float> w_scale, bias, a_scales;
  if (c.inputs.count("w_scale")) w_scale = float_values(c, "w_scale", N);
  if (c.inputs.count("bias")) bias = float_values(c, "bias", N);
  if (c.inputs.count("a_scales")) a_scales = float_values(c, "a_scales", M);
  return int8_gemm_reference(a.data(), w.data(),
                             c.inputs.count("w_scale") ? w_scale.data() : nullptr,
                             c.inputs.count("bias") ? bias.data() : nullptr, M, N, K, p,
                             c.inputs.count("a_scales") ? a_scales.data() : nullptr);
}

}  // namespace npukit::golden

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "golden/case_builder.h"
#include "golden/half.h"
#include "golden/requantize.h"

namespace npukit::golden {
namespace {

constexpr double kAScales[] = {0.01953125, 0.0234375, 0.015625};  // ~0.02, exact in float

std::optional<Int8GemmOut> out_of(DType t) {
  switch (t) {
    case DType::int32: return Int8GemmOut::int32;
    case DType::float32: return Int8GemmOut::float32;
    case DType::float16: return Int8GemmOut::float16;
    case DType::int8: return Int8GemmOut::int8;
    default: return std::nullopt;
  }
}

double to_float(double v) { return round_to_dtype(v, DType::float32); }

class Builder : public CaseBuilder {
 public:
  Builder(InputClass cls, DType out_dtype, Int8GemmOut out) : CaseBuilder("int8_gemm", cls, out_dtype), out_(out) {}

  bool int8() const { return out_ == Int8GemmOut::int8; }
  bool float_out() const { return out_ == Int8GemmOut::float32 || out_ == Int8GemmOut::float16; }
  Int8GemmOut out() const { return out_; }

  // Appends a case with the defaults; the helpers below then adjust it and say so in its
  // name.
  void add(int64_t M, int64_t N, int64_t K, int32_t zp, double a_scale = kAScales[0]) {
    CaseBuilder::add(sizes_text({{"M", M}, {"N", N}, {"K", K}, {"zp", zp}}), {{"M", M}, {"N", N}, {"K", K}},
                     {{"a_zero_point", std::to_string(zp)},
                      {"a_scale", number_text(to_float(a_scale))},
                      {"out", std::string(int8_gemm_out_name(out_))},
                      {"out_scale", "1"},
                      {"out_zero_point", "0"},
                      {"rounding", "fixed_point"}});
    last().inputs["a"] = integers("a", DType::int8, {M, K}, -128, 127);
    last().inputs["w"] = integers("w", DType::int8, {N, K}, -128, 127);
    if (out_ != Int8GemmOut::int32) last().inputs["w_scale"] = uniform("w_scale", DType::float32, {N}, 0.001, 0.01);
    auto_scale_.push_back(true);
    fixed_point_only_.push_back(false);
  }

  // a and w of the last case become −128 or 127 only, each a fair coin.
  void extremes() {
    for (const char* t : {"a", "w"}) {
      Array& x = input(t);
      const Array coin = integers(std::string(t) + "_extreme", DType::int8, x.shape, 0, 1);
      for (size_t k = 0; k < x.values.size(); ++k) x.values[k] = coin.values[k] != 0 ? 127 : -128;
    }
    note("a,w=-128|127");
  }

  void a_row(int64_t m, double v) { fill("a", v, row(m)); }
  void w_row(int64_t n, double v) { fill("w", v, row(n)); }

  // w[n, :] alternates v, −v, ... (K even: Σ w = 0, so a constant a row gives acc = 0).
  void w_row_alternating(int64_t n, double v) {
    const int64_t K = input("w").shape[1];
    for (int64_t k = 0; k < K; ++k) set("w", {n, k}, k % 2 ? -v : v);
  }

  // w[n, :] holds int8 values summing to exactly s: s / K everywhere, one more in magnitude
  // on the first |s mod K| entries.
  void w_row_sum(int64_t n, int64_t s) {
    const int64_t K = input("w").shape[1], base = s / K, rem = s - base * K;
    const int64_t step = rem < 0 ? -1 : 1, extra = rem < 0 ? -rem : rem;
    const int64_t top = base + (extra > 0 ? step : 0);
    if (std::max(base, top) > 127 || std::min(base, top) < -128) {
      throw std::logic_error("w_row_sum: " + std::to_string(s) + " is out of reach");
    }
    for (int64_t k = 0; k < K; ++k) set("w", {n, k}, static_cast<double>(base + (k < extra ? step : 0)));
  }

  // Per-channel scales, rounded to float (w_scale is a float32 tensor). No-op for int32.
  void w_scales(const std::vector<double>& s) {
    if (out_ == Int8GemmOut::int32) return;
    if (s.size() != input("w_scale").values.size()) throw std::logic_error("w_scales: wrong length");
    for (size_t n = 0; n < s.size(); ++n) set("w_scale", {static_cast<int64_t>(n)}, s[n]);
  }
  void set_w_scale(int64_t n, double v) { set("w_scale", {n}, v); }

  // bias ~ U(−1, 1) on the last case (float outputs only; otherwise nothing).
  void bias() {
    if (!float_out()) return;
    last().inputs["bias"] = uniform("bias", DType::float32, {last().dims.at("N")}, -1, 1);
    note("bias");
  }
  void set_bias(int64_t n, double v) { set("bias", {n}, v); }

  // Per-row activation scales a_scales ~ U(lo, hi) on the last case, as per_token_quant
  // gives them (float outputs only; otherwise nothing).
  void a_scales(double lo, double hi) {
    if (!float_out()) return;
    last().inputs["a_scales"] = uniform("a_scales", DType::float32, {last().dims.at("M")}, lo, hi);
    note("a_scales");
  }
  void set_a_scale(int64_t m, double v) { set("a_scales", {m}, v); }

  // a_scale as the double v, not rounded to float (add() rounds it).
  void exact_a_scale(double v) { last().params["a_scale"] = number_text(v); }

  // int8 output only (the other outputs keep the defaults 1 and 0).
  void out_scale(double v) {
    if (!int8()) return;
    last().params["out_scale"] = number_text(to_float(v));
    auto_scale_.back() = false;
  }
  void out_zero_point(int32_t zp) {
    if (!int8()) return;
    last().params["out_zero_point"] = std::to_string(zp);
    note("out_zp=" + std::to_string(zp));
  }
  void fixed_point_only() { fixed_point_only_.back() = true; }

  // For int8 output: fits the out_scale left automatic, and returns every case twice, once
  // per rounding mode, on the same data.
  std::vector<Case> take() {
    std::vector<Case> cases = CaseBuilder::take();
    if (!int8()) return cases;
    std::vector<Case> out;
    for (size_t i = 0; i < cases.size(); ++i) {
      Case& c = cases[i];
      if (auto_scale_[i]) fit_out_scale(c);
      Case f = c;
      c.name += " rounding=fixed_point";
      out.push_back(std::move(c));
      if (fixed_point_only_[i]) continue;
      f.name += " rounding=float";
      f.params["rounding"] = "float";
      out.push_back(std::move(f));
    }
    return out;
  }

 private:
  // out_scale = the 98th percentile of |acc · a_scale · w_scale[n]| / 127, in float.
  static void fit_out_scale(Case& c) {
    const int64_t M = c.dims.at("M"), N = c.dims.at("N"), K = c.dims.at("K");
    const std::vector<int8_t> a(c.inputs.at("a").values.begin(), c.inputs.at("a").values.end());
    const std::vector<int8_t> w(c.inputs.at("w").values.begin(), c.inputs.at("w").values.end());
    const Int8GemmParams p = int8_gemm_params(c);
    const std::vector<int64_t> acc = int8_gemm_acc(a.data(), w.data(), M, N, K, p.a_zero_point);
    const std::vector<double>& ws = c.inputs.at("w_scale").values;
    std::vector<double> mag(acc.size());
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        const auto i = static_cast<size_t>(m * N + n);
        mag[i] = std::fabs(static_cast<double>(acc[i]) * p.a_scale * ws[static_cast<size_t>(n)]);
      }
    }
    const size_t q = std::min(mag.size() - 1, mag.size() * 98 / 100);
    std::nth_element(mag.begin(), mag.begin() + static_cast<std::ptrdiff_t>(q), mag.end());
    const double scale = mag[q] > 0 ? mag[q] / 127 : 1;
    c.params["out_scale"] = number_text(to_float(scale));
  }

  Int8GemmOut out_;
  std::vector<bool> auto_scale_, fixed_point_only_;  // per case
};

void normal_cases(Builder& b) {
  constexpr int32_t kOutZeroPoints[] = {0, 5, -3};
  int i = 0;
  for (auto [M, N, K, zp] : {std::tuple<int64_t, int64_t, int64_t, int32_t>{1, 1024, 1024, 0},
                             {4, 256, 4096, 3},
                             {16, 64, 4096, -7},
                             {16, 1024, 256, 0},
                             {64, 1024, 1024, -7},
                             {128, 256, 4096, 3},
                             {128, 16, 256, -7},
                             {1, 64, 256, 3}}) {
    b.add(M, N, K, zp, kAScales[i % 3]);
    if (i % 2 == 1) b.bias();
    b.out_zero_point(kOutZeroPoints[i % 3]);
    ++i;
  }
  // Per-token activation scales (float outputs): the decode row and a prefill block.
  if (b.float_out()) {
    b.add(1, 1024, 4096, 0, 1);
    b.a_scales(0.002, 0.05);
    b.bias();
    b.add(16, 256, 1024, 3, 0.5);
    b.a_scales(0.002, 0.05);
  }
}

void boundary_cases(Builder& b) {
  // Odd shapes with a and w at the ends of int8 and the zero point at the ends of its range.
  int i = 0;
  for (auto [M, N, K, zp] : {std::tuple<int64_t, int64_t, int64_t, int32_t>{1, 1, 1, 0},
                             {1, 15, 3, 127},
                             {2, 17, 5, -128},
                             {3, 1, 63, 127},
                             {3, 15, 65, -128},
                             {1, 17, 65, 127},
                             {2, 15, 63, 0},
                             {3, 17, 1, 127},
                             {2, 33, 64, -128},
                             {3, 16, 4, 127}}) {
    b.add(M, N, K, zp, kAScales[i % 3]);
    b.extremes();
    if (i % 2 == 0) b.bias();
    if (i % 4 == 1) b.out_zero_point(127);
    if (i % 4 == 3) b.out_zero_point(-128);
    ++i;
  }
  // Uniform data on the blocks of the packed layout (16 channels, 4 k) and just off them.
  for (auto [M, N, K, zp] : {std::tuple<int64_t, int64_t, int64_t, int32_t>{2, 16, 4, -128},
                             {3, 16, 64, 127},
                             {1, 17, 5, -128},
                             {3, 33, 65, 0},
                             {2, 1, 3, 127}}) {
    b.add(M, N, K, zp, kAScales[i % 3]);
    if (i % 2 == 0) b.bias();
    ++i;
  }
  // The four corners (a, w) in {−128, 127}²: rows a = −128, 127, −128, channels alternating
  // w = −128, 127.
  for (int32_t zp : {-128, 127, 0}) {
    b.add(3, 17, 65, zp, kAScales[i % 3]);
    b.note("corners");
    for (int64_t m = 0; m < 3; ++m) b.a_row(m, m == 1 ? 127 : -128);
    for (int64_t n = 0; n < 17; ++n) b.w_row(n, n % 2 ? 127 : -128);
    ++i;
  }
  if (b.float_out()) {
    b.add(3, 17, 65, -128, 1);
    b.extremes();
    b.a_scales(0.001, 0.1);
    b.set_a_scale(1, 0);
    b.note("row 1 scale 0");
  }
}

// Rows a = 127, −128 against channels w = 127, −128 at K = k_limit(zp): the binding bound
// is reached exactly (K·Pmax or K·Nmin within one term of int32's end).
void worst_case(Builder& b, int32_t zp) {
  const int64_t K = k_limit(zp);
  b.add(2, 2, K, zp, 0.015625);
  b.note("worst case K=k_limit");
  b.a_row(0, 127);
  b.a_row(1, -128);
  b.w_row(0, 127);
  b.w_row(1, -128);
}

// The largest |acc| of worst_case(zp).
double worst_acc(int32_t zp) {
  const double K = static_cast<double>(k_limit(zp));
  double m = 0;
  for (double a : {127.0, -128.0}) {
    for (double w : {127.0, -128.0}) m = std::max(m, std::fabs(K * (a - zp) * w));
  }
  return m;
}

void overflow_by_output(Builder& b) {
  const std::initializer_list<int32_t> zps = {0, 3, -1, -128, 127};
  switch (b.out()) {
    case Int8GemmOut::int32:
      for (int32_t zp : zps) worst_case(b, zp);
      break;
    case Int8GemmOut::float32:
      for (int32_t zp : zps) {
        worst_case(b, zp);
        b.w_scales({0.004, 0.008});
        if (zp == 3) b.bias();
      }
      // a_scale · w_scale = 1.6e31 is finite in fp32; acc times it is not.
      worst_case(b, 0);
      b.w_scales({1e33, 1e-3});
      b.note("fp32 overflows in channel 0");
      // a_scales[1] · a_scale · w_scale = 6.25e31 is finite in fp32; acc times it is not.
      worst_case(b, 0);
      b.w_scales({0.004, 0.004});
      b.a_scales(1, 1);
      b.set_a_scale(1, 1e36);
      b.note("fp32 overflows in row 1");
      break;
    case Int8GemmOut::float16:
      for (int32_t zp : zps) {
        worst_case(b, zp);
        const double s = 60000 / (worst_acc(zp) * 0.015625);
        b.w_scales({s, s});
        if (zp == 3) b.bias();
      }
      for (int32_t zp : {0, -1}) {
        worst_case(b, zp);
        b.w_scales({0.008, 1e-5});
        b.note("fp16 overflows in channel 0");
      }
      // Row 1's scale doubles values that fill fp16 to about 60000.
      worst_case(b, 0);
      b.w_scales({60000 / (worst_acc(0) * 0.015625), 60000 / (worst_acc(0) * 0.015625)});
      b.a_scales(1, 1);
      b.set_a_scale(1, 2);
      b.note("fp16 overflows in row 1");
      break;
    case Int8GemmOut::int8: {
      // Channel 0 maps the largest |acc| to about 100, channel 1 to 800: it saturates at both
      // ends (its corners have both signs).
      int32_t out_zp = 0;
      for (int32_t zp : zps) {
        worst_case(b, zp);
        b.out_scale(0.25);
        const double s = 100 / worst_acc(zp) * 0.25 / 0.015625;
        b.w_scales({s, 8 * s});
        b.out_zero_point(out_zp);
        out_zp = out_zp == 0 ? -7 : 0;
      }
      // Exact ties on acc = −128 … 127 (K = 1, w = ±1): M = 0.5 and 1.5 tie on odd acc,
      // 0.25 and 0.75 on acc ≡ 2 (mod 4), and so on.
      b.add(256, 8, 1, 0, 1);
      b.note("ties M=2^-1..2^-7,1.5,0.75");
      for (int64_t m = 0; m < 256; ++m) b.a_row(m, static_cast<double>(m - 128));
      for (int64_t n = 0; n < 8; ++n) b.w_row(n, n % 2 ? -1 : 1);
      b.w_scales({0.5, 0.5, 0.25, 0.25, 1.5, 0.75, 0.0078125, 0.125});
      b.out_scale(1);
      // Random data under M = 2^-5 … 2^-12: acc ≡ 2^(s−1) (mod 2^s) is a tie.
      b.add(64, 16, 7, 3, 1);
      b.note("ties M=2^-5..2^-12");
      std::vector<double> s;
      for (int n = 0; n < 16; ++n) s.push_back(std::ldexp(1.0, -5 - n / 2));
      b.w_scales(s);
      b.out_scale(1);
      b.out_zero_point(-5);
      // acc = INT32_MIN exactly (zp = −1, a = 127, w = −128, K = 131072) at M = 2^-32: the
      // tie −0.5, which fixed_point rounds to −1 and float to 0.
      b.add(2, 3, k_limit(-1), -1, 1);
      b.note("acc=INT32_MIN M=2^-32,2^-31,2^-32");
      b.a_row(0, 127);
      b.a_row(1, -128);
      b.w_row(0, -128);
      b.w_row(1, -128);
      b.w_row(2, 127);
      b.w_scales({0x1p-32, 0x1p-31, 0x1p-32});
      b.out_scale(1);
      // M = (1 − 2^-40)·{1, 0.5, 0.25}: q·2³¹ rounds to 2³¹, so the multiplier becomes 2³⁰
      // and the shift grows by one (fixed_point then sees M = 1, 0.5, 0.25 exactly).
      b.add(256, 3, 1, 0, 1);
      b.note("a_scale=1-2^-40 multiplier carries");
      b.exact_a_scale(1 - 0x1p-40);
      b.out_scale(1);
      for (int64_t m = 0; m < 256; ++m) b.a_row(m, static_cast<double>(m - 128));
      b.w_row(0, 1);
      b.w_row(1, 1);
      b.w_row(2, -1);
      b.w_scales({1, 0.5, 0.25});
      b.out_zero_point(3);
      break;
    }
  }
}

// The shift sweep of fixed_point: every shift in [−31, 30] on acc up to ±(2³¹ − 128).
void shift_sweep(Builder& b) {
  const int32_t zp = 127;
  const int64_t K = k_limit(zp);  // 65793: 255 · 128 · K = 2³¹ − 128
  std::vector<double> ms;
  for (int e = -32; e <= 29; ++e) ms.push_back(std::ldexp(1.0, e));
  for (double m : {0.75 * 0x1p30, 0.75 * 0x1p-31, 1.75, 1.25 * 0x1p-20}) ms.push_back(m);
  const auto N = static_cast<int64_t>(ms.size());
  // d = a − 127 is −255, −128, −127, −1, 0 on the five rows.
  b.add(5, N, K, zp, 1);
  b.note("shifts -31..30 M=2^-32..2^29");
  b.fixed_point_only();
  const double rows[] = {-128, -1, 0, 126, 127};
  for (int64_t m = 0; m < 5; ++m) b.a_row(m, rows[m]);
  // Σ w[n, :] = s_n puts the d = −255 row near ±100 where |acc| allows, alternating signs;
  // |s_n| <= 127·K (s_n > 0) or 128·K (s_n < 0) keeps every w in int8 and acc in int32.
  for (int64_t n = 0; n < N; ++n) {
    const double target = 100.37 / (255 * ms[static_cast<size_t>(n)]);
    const bool negative = n % 2 == 1;
    const double cap = static_cast<double>((negative ? 128 : 127) * K);
    const auto s = static_cast<int64_t>(std::clamp(std::round(target), 1.0, cap));
    b.w_row_sum(n, negative ? -s : s);
  }
  b.w_scales(ms);
  b.out_scale(1);
}

void overflow_cases(Builder& b) {
  overflow_by_output(b);
  if (b.int8()) shift_sweep(b);
}

void nan_inf_cases(Builder& b) {
  if (b.float_out()) {
    // Row 2 has a = zp (acc = 0), channel 6 has w = 0 (acc = 0).
    b.add(4, 8, 64, 3);
    b.note("w_scale nan/+inf/-inf/+inf in ch 1/3/5/6, row 2 and ch 6 acc=0");
    b.a_row(2, 3);
    b.w_row(6, 0);
    b.set_w_scale(1, kNaN);
    b.set_w_scale(3, kInf);
    b.set_w_scale(5, -kInf);
    b.set_w_scale(6, kInf);
    b.add(3, 6, 17, 0);
    b.bias();
    b.note("nan/+inf/-inf in ch 0/2/4, w_scale +inf in ch 4, row 1 acc=0");
    b.a_row(1, 0);
    b.set_bias(0, kNaN);
    b.set_bias(2, kInf);
    b.set_bias(4, -kInf);
    b.set_w_scale(4, kInf);
    b.add(16, 64, 256, -7);
    b.bias();
    b.note("w_scale nan ch 10, +inf ch 33, bias -inf ch 63");
    b.set_w_scale(10, kNaN);
    b.set_w_scale(33, kInf);
    b.set_bias(63, -kInf);
    // Row 2 has acc = 0: its +Inf scale gives NaN there.
    b.add(4, 8, 64, 3);
    b.a_scales(0.002, 0.05);
    b.note("nan/+inf/-inf in rows 1/2/3, row 2 acc=0");
    b.a_row(2, 3);
    b.set_a_scale(1, kNaN);
    b.set_a_scale(2, kInf);
    b.set_a_scale(3, -kInf);
    return;
  }
  // Integer outputs have no NaN: acc = 0 instead, by a zero row, a zero channel and by
  // cancellation (w alternating ±v against a constant row), among nonzero values.
  b.add(8, 16, 64, 5);
  b.note("zeros: row 3 a=zp, ch 7 w=0, row 5 const vs ch 10 alternating");
  b.a_row(3, 5);
  b.w_row(7, 0);
  b.a_row(5, -100);
  b.w_row_alternating(10, 77);
  b.out_zero_point(-9);
  b.add(16, 64, 512, -7);
  b.note("zeros: rows 0,15 a=zp, ch 0,63 w=0");
  b.a_row(0, -7);
  b.a_row(15, -7);
  b.w_row(0, 0);
  b.w_row(63, 0);
  b.add(2, 33, 5, 0);
  b.note("zeros: row 0 a=0, ch 0..3 w=0");
  b.a_row(0, 0);
  for (int64_t n = 0; n < 4; ++n) b.w_row(n, 0);
  b.out_zero_point(11);
}

void shape_cases(Builder& b) {
  const int32_t zps[] = {0, 3, -7, -128, 127};
  int i = 0;
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 4097, 64},
                         {2, 4096, 65},
                         {3, 1, 4097},
                         {7, 255, 257},
                         {17, 127, 1000},
                         {33, 4097, 17},
                         {64, 63, 511},
                         {100, 100, 100},
                         {129, 33, 2049},
                         {255, 256, 129},
                         {257, 17, 31},
                         {300, 301, 63},
                         {300, 1, 1},
                         {1, 11008, 128},
                         {3, 513, 4096}}) {
    b.add(M, N, K, zps[i % 5], kAScales[i % 3]);
    if (i % 3 == 1) b.bias();
    ++i;
  }
  if (b.float_out()) {
    b.add(65, 130, 300, -7, 1);
    b.a_scales(0.002, 0.05);
  }
}

}  // namespace

std::vector<Case> int8_gemm_cases(InputClass input_class, DType out_dtype) {
  const std::optional<Int8GemmOut> out = out_of(out_dtype);
  if (!out) return {};
  Builder b(input_class, out_dtype, *out);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden

#endif  // NPUKIT_GOLDEN_int8_gemm


// ---- Section NPUKIT_GATE_HOOKS_int8_gemm: the gate's hooks, compiled once, into the gate (npukit_gate);
// libnpukit.so links none of this.
#ifdef NPUKIT_GATE_HOOKS_int8_gemm

// The gate's hooks for int8_gemm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/int8_gemm.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  golden::Tolerance t;
  if (dtype == DType::int32 || dtype == DType::int8) {
    t.exact = true;
    t.reason = dtype == DType::int32 ? "exact int32 accumulation" : "bit-exact requantization against the declared rounding mode";
    return t;
  }
  // acc → fp32, times fp32(a_scales[m] · fp32(a_scale · w_scale)), plus bias: a few fp32 roundings of the
  // product; where bias nearly cancels it, only an absolute bound scaled by |bias| holds.
  double max_bias = 0;
  if (auto it = c.inputs.find("bias"); it != c.inputs.end()) max_bias = golden::max_abs_finite(it->second);
  if (dtype == DType::float16) {
    t.rtol = 1e-3;
    t.atol = 6e-8 + 4 * std::ldexp(max_bias, -23);
    t.reason = "fp32 scaling, then one rounding to fp16 (1 fp16 ULP; 2^-24 absolute for subnormals)";
  } else {
    t.rtol = 1e-6;
    t.atol = 1e-30 + 4 * std::ldexp(max_bias, -23);
    t.reason = "fp32 conversion, scale and bias: about 4 fp32 ULPs";
  }
  // Deliberately sparse outputs (the zeros cases) are not vacuous here.
  t.max_zero_ratio = 1.0;
  return t;
}

}  // namespace

GateHooks int8_gemm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::int32, DType::float32, DType::float16, DType::int8};
  gate.cases = golden::int8_gemm_cases;
  gate.reference = [](const golden::Case& c) {
    return std::map<std::string, std::vector<double>>{{"y", golden::int8_gemm_reference(c)}};
  };
  gate.tolerance = tolerance;
  gate.nan_contract =
      "Integer inputs carry no NaN. For float outputs a NaN w_scale or bias makes its output column NaN, a NaN "
      "a_scales[m] its row, and an Inf scale gives +-Inf (NaN where acc = 0). int8 outputs require finite positive scales.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_int8_gemm
