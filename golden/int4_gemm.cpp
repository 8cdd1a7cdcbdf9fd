#include "golden/int4_gemm.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace npukit::golden {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("golden::int4_gemm: " + what); }

int64_t groups_of(int64_t K, int64_t group) { return (K + group - 1) / group; }

void check(const Int4GemmInputs& in) {
  if (in.group != 32 && in.group != 64 && in.group != 128) fail(fmt::format("group = {}: must be 32, 64 or 128", in.group));
  if (in.M < 0 || in.N < 0 || in.K < 0) fail("negative dimension");
  if (!in.a_int8 && in.a_scales != nullptr) fail("a_scales applies to int8 activations only");
  const int64_t G = groups_of(in.K, in.group);
  if (in.zero_points != nullptr) {
    for (int64_t i = 0; i < in.N * G; ++i) {
      if (in.zero_points[i] > 15) fail(fmt::format("zero_points[{}, {}] = {}: must be in [0, 15]", i / G, i % G, in.zero_points[i]));
    }
  }
  if (in.a_int8) {
    for (int64_t i = 0; i < in.M * in.K; ++i) {
      const double v = in.a[i];
      if (!(v >= -128 && v <= 127) || v != std::floor(v)) fail(fmt::format("a[{}] = {} is not an int8", i, number_text(v)));
    }
  }
}

// d[n, k] = q − zp for row n, every k < K.
std::vector<int> row_d(const Int4GemmInputs& in, int64_t n) {
  const int64_t row_bytes = (in.K + 1) / 2, G = groups_of(in.K, in.group);
  const bool asym = in.zero_points != nullptr;
  std::vector<int> d(static_cast<size_t>(in.K));
  for (int64_t k = 0; k < in.K; ++k) {
    const int zp = asym ? in.zero_points[n * G + k / in.group] : 0;
    d[static_cast<size_t>(k)] = int4_at(in.w, row_bytes, n, k, asym) - zp;
  }
  return d;
}

// Per element: the value (magnitude = false) or the sum of the terms' magnitudes.
std::vector<double> evaluate(const Int4GemmInputs& in, bool magnitude) {
  check(in);
  const int64_t M = in.M, N = in.N, K = in.K, G = groups_of(K, in.group);
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t n = 0; n < N; ++n) {
    const std::vector<int> d = row_d(in, n);
    const double* s = in.scales + n * G;
    for (int64_t m = 0; m < M; ++m) {
      const double* a = in.a + m * K;
      double sum = 0;
      for (int64_t g = 0; g < G; ++g) {
        const int64_t k0 = g * in.group, k1 = std::min(K, k0 + in.group);
        if (in.a_int8) {
          int64_t p = 0;  // exact: at most 128 · 15 · 128 in magnitude
          for (int64_t k = k0; k < k1; ++k) p += static_cast<int64_t>(a[k]) * d[static_cast<size_t>(k)];
          const double term = s[g] * static_cast<double>(p);
          sum += magnitude ? std::fabs(term) : term;
        } else {
          double part = 0;
          for (int64_t k = k0; k < k1; ++k) {
            const double t = a[k] * d[static_cast<size_t>(k)];  // exact in double
            part += magnitude ? std::fabs(t) : t;
          }
          sum += magnitude ? std::fabs(s[g]) * part : s[g] * part;
        }
      }
      if (in.a_scales != nullptr) sum = magnitude ? std::fabs(in.a_scales[m]) * sum : sum * in.a_scales[m];
      y[static_cast<size_t>(m * N + n)] = sum;
    }
  }
  return y;
}

const double* optional_values(const Case& c, const char* name, int64_t count) {
  auto it = c.inputs.find(name);
  if (it == c.inputs.end()) return nullptr;
  if (static_cast<int64_t>(it->second.values.size()) != count) {
    fail(fmt::format("input {} has {} elements, expected {}", name, it->second.values.size(), count));
  }
  return it->second.values.data();
}

std::vector<uint8_t> bytes_of(const Case& c, const char* name, int64_t count) {
  const double* v = optional_values(c, name, count);
  if (v == nullptr) return {};
  std::vector<uint8_t> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    if (!(v[i] >= 0 && v[i] <= 255) || v[i] != std::floor(v[i])) {
      fail(fmt::format("input {}[{}] = {} is not a uint8", name, i, number_text(v[i])));
    }
    out[static_cast<size_t>(i)] = static_cast<uint8_t>(v[i]);
  }
  return out;
}

template <class F>
std::vector<double> on_case(const Case& c, F f) {
  Int4GemmInputs in;
  in.M = c.dims.at("M");
  in.N = c.dims.at("N");
  in.K = c.dims.at("K");
  if (auto it = c.params.find("group"); it != c.params.end()) {
    size_t used = 0;
    try {
      in.group = std::stoll(it->second, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != it->second.size()) fail(fmt::format("parameter group='{}' is not an integer", it->second));
  }
  const int64_t G = groups_of(in.K, in.group), row_bytes = (in.K + 1) / 2;
  const Array& a = c.inputs.at("a");
  in.a_int8 = a.dtype == DType::int8;
  in.a = optional_values(c, "a", in.M * in.K);
  const std::vector<uint8_t> w = bytes_of(c, "w", in.N * row_bytes);
  const std::vector<uint8_t> zp = bytes_of(c, "zero_points", in.N * G);
  in.w = w.data();
  in.zero_points = c.inputs.count("zero_points") ? zp.data() : nullptr;
  in.scales = optional_values(c, "scales", in.N * G);
  if (in.scales == nullptr) fail("input scales is missing");
  in.a_scales = optional_values(c, "a_scales", in.M);
  return f(in);
}

}  // namespace

int int4_at(const uint8_t* w, int64_t row_bytes, int64_t n, int64_t k, bool unsigned_q) {
  const unsigned byte = w[n * row_bytes + k / 2];
  const int nibble = static_cast<int>(k % 2 == 0 ? byte & 15u : byte >> 4);
  return unsigned_q || nibble < 8 ? nibble : nibble - 16;
}

std::vector<double> int4_gemm_reference(const Int4GemmInputs& in) { return evaluate(in, false); }

std::vector<double> int4_gemm_magnitude(const Int4GemmInputs& in) { return evaluate(in, true); }

int64_t int4_gemm_roundings(int64_t K, int64_t group, bool a_int8) {
  const int64_t groups = groups_of(K, group);
  return a_int8 ? 2 * groups + 1 : group + 2 * groups + 1;
}

std::vector<double> int4_gemm_reference(const Case& c) {
  return on_case(c, [](const Int4GemmInputs& in) { return int4_gemm_reference(in); });
}

std::vector<double> int4_gemm_magnitude(const Case& c) {
  return on_case(c, [](const Int4GemmInputs& in) { return int4_gemm_magnitude(in); });
}

}  // namespace npukit::golden
