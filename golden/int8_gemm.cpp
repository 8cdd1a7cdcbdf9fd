#include "golden/int8_gemm.h"

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
