// Golden per-token int8 quantization of activations and the dequantization of an int8
// projection (docs/ops/attention.md, "Int8 weights"), in plain C++ `float`: the contract is
// fp32 arithmetic, so these reproduce every scale, every q and every dequantized value bit
// for bit (golden is built with -ffp-contract=off; fp32 division and nearbyint under the
// default rounding mode are IEEE round-to-nearest-even). Shares no code with the kernels.
// Then (below) its input classes, the cases the gate runs a
// kernel on and checks bit for bit against the reference, and the gate's hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Quantizes one row a[0 … K−1] into q and returns its scale s:
//   any a[c] NaN or ±Inf  → s = NaN, q = 0;
//   else s = (max_c |a[c]|) / 127 in fp32; s == 0 → q = 0;
//   else q[c] = clamp(nearbyint(a[c] / s), −127, 127), the quotient in fp32.
float quantize_token(const float* a, int64_t K, int8_t* q);

// (float)acc · (s · w_scale), in fp32 in that order. acc is an exact integer sum.
float dequantize_token(int64_t acc, float s, float w_scale);

// out[T, N] = the int8 projection of a[T, K] (values held in double; each is rounded to
// fp32 first, which is exact for fp32/fp16 inputs) by w[N, K] (int8 values held in double)
// with per-channel scales w_scale[N] (floats held in double): per row, quantize_token, the
// exact sum Σ_c q[c]·w[n, c] in int64, dequantize_token. Requirements, else
// std::invalid_argument: every w an integer in [−128, 127], every w_scale finite and > 0
// and representable in fp32.
void project_int8(const double* a, const double* w, const double* w_scale, int64_t T, int64_t N,
                  int64_t K, double* out);


// The cases of one input class for `a` of `dtype` (float16 and float32 get their own
// overflow cases). Integer dtypes have no cases: empty.
//
// Input "a" of case i is drawn from case_seed("per_token_quant/<class>/a", i, chunk).
// Dims "T", "K"; input "a" [T, K]; no params. Unless a case says otherwise a ~ N(0, 1).
//   normal:   decode and prefill shapes (T = 1 … 64, K = 64 … 4096).
//   boundary: K 1, 7, 15, 16, 17, 63, 64, 65, 4095, 4096, 4097 against T 1 … 33; a zero
//             row (s = 0, q = 0); a constant row (q = ±127); a row whose quotients are
//             exact ties (s = 1: x.5 rounds to even); a row whose maximum is negative; a
//             row with one outlier (most q near 0).
//   overflow: float16: |a| near 65504 and fp16 subnormals (s is an fp32 normal);
//             float32: |a| near 3.4e38 (s stays finite, a / s ≤ 127), |a| ~ 1e-38 and
//             subnormal rows whose s underflows to a subnormal or to 0.
//   nan_inf:  NaN, +Inf and −Inf each in its own row among normal rows (s = NaN, q = 0
//             for that row only); +Inf and −Inf in one row; NaN in the last element.
//   shape:    odd K 1, 3, 31, 33, 127, 129, 1000, 4097, 8191 with T 1 … 129.
// Outputs "q" [T, K] int8 and "scale" [T] float32.
std::vector<Case> per_token_quant_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden

// ---- Section NPUKIT_GOLDEN_per_token_quant: the reference and the input classes' cases, compiled once, into
// npukit_golden (cmake/NpukitOperators.cmake).
#ifdef NPUKIT_GOLDEN_per_token_quant

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace npukit::golden {

float quantize_token(const float* a, int64_t K, int8_t* q) {
  float m = 0;
  bool finite = true;
  for (int64_t c = 0; c < K; ++c) {
    if (!std::isfinite(a[c])) finite = false;
    const float mag = std::fabs(a[c]);
    if (mag > m) m = mag;
  }
  const float s = finite ? m / 127.0f : std::numeric_limits<float>::quiet_NaN();
  const bool zero = !finite || s == 0.0f;
  for (int64_t c = 0; c < K; ++c) {
    if (zero) {
      q[c] = 0;
      continue;
    }
    const float quotient = a[c] / s;  // one fp32 division
    float r = std::nearbyint(quotient);
    r = r < -127.0f ? -127.0f : (r > 127.0f ? 127.0f : r);
    q[c] = static_cast<int8_t>(r);
  }
  return s;
}

float dequantize_token(int64_t acc, float s, float w_scale) {
  const float per_channel = s * w_scale;
  return static_cast<float>(acc) * per_channel;
}

void project_int8(const double* a, const double* w, const double* w_scale, int64_t T, int64_t N,
                  int64_t K, double* out) {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("golden::project_int8: " + what);
  };
  std::vector<int8_t> wq(static_cast<size_t>(N * K));
  for (int64_t i = 0; i < N * K; ++i) {
    if (!(w[i] == std::trunc(w[i]) && w[i] >= -128 && w[i] <= 127)) {
      fail(fmt::format("w[{}, {}] = {} is not an int8 value", i / K, i % K, w[i]));
    }
    wq[static_cast<size_t>(i)] = static_cast<int8_t>(w[i]);
  }
  std::vector<float> ws(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    ws[static_cast<size_t>(n)] = static_cast<float>(w_scale[n]);
    if (!(std::isfinite(w_scale[n]) && w_scale[n] > 0 && double(ws[static_cast<size_t>(n)]) == w_scale[n])) {
      fail(fmt::format("w_scale[{}] = {} must be a finite fp32 > 0", n, w_scale[n]));
    }
  }
  std::vector<float> row(static_cast<size_t>(K));
  std::vector<int8_t> q(static_cast<size_t>(K));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t c = 0; c < K; ++c) row[static_cast<size_t>(c)] = static_cast<float>(a[t * K + c]);
    const float s = quantize_token(row.data(), K, q.data());
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t c = 0; c < K; ++c) acc += int64_t(q[static_cast<size_t>(c)]) * wq[static_cast<size_t>(n * K + c)];
      out[t * N + n] = dequantize_token(acc, s, ws[static_cast<size_t>(n)]);
    }
  }
}

}  // namespace npukit::golden

#include <utility>

#include "golden/case_builder.h"

namespace npukit::golden {
namespace {

class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // Appends a case with a ~ N(0, 1); the edits of CaseBuilder then adjust it.
  void add(int64_t T, int64_t K, std::string_view note = "") {
    CaseBuilder::add(sizes_text({{"T", T}, {"K", K}}), {{"T", T}, {"K", K}});
    if (!note.empty()) this->note(note);
    last().inputs["a"] = normal("a", {T, K}, 0, 1);
  }
};

void normal_cases(Builder& b) {
  for (auto [T, K] : {std::pair<int64_t, int64_t>{1, 64}, {1, 4096}, {4, 1000}, {16, 4096}, {64, 4096}, {32, 2048}}) {
    b.add(T, K);
  }
}

void boundary_cases(Builder& b) {
  for (auto [T, K] : {std::pair<int64_t, int64_t>{1, 1}, {33, 1}, {2, 7}, {3, 15}, {3, 16}, {5, 17}, {2, 63},
                      {9, 64}, {4, 65}, {1, 4095}, {3, 4096}, {2, 4097}}) {
    b.add(T, K);
  }
  b.add(4, 256, "row1=0");
  b.fill("a", 0.0, row(1));  // s = 0: q = 0, scale 0
  b.add(3, 100, "row2=const");
  b.fill("a", -0.75, row(2));  // every q = -127
  // max |a| = 127 makes s = 1 exactly, so a = n + 0.5 are exact ties: nearbyint rounds
  // them to even, round-half-away would not.
  b.add(2, 64, "row0=ties");
  for (int64_t c = 0; c < 64; ++c) b.set("a", {0, c}, c == 0 ? 127.0 : double(c % 9) - 4.0 + 0.5);
  b.add(3, 64, "row1=negative max");
  b.set("a", {1, 5}, -50.0);
  // One outlier: its q is ±127, the row's others fall to |q| ≤ 1.
  b.add(4, 512, "row3=outlier");
  b.set("a", {3, 200}, 1000.0);
}

void overflow_cases(Builder& b) {
  if (b.dtype() == DType::float16) {
    b.add(4, 4096, "|a|~6e4");
    b.signed_uniform("a", 50000, 65504);
    b.add(3, 64, "|a|=65504");
    b.signed_uniform("a", 65504, 65504);
    b.add(3, 1000, "fp16 subnormal");
    b.signed_uniform("a", 6e-8, 6e-5);
    return;
  }
  b.add(4, 4096, "|a|~3e38");
  b.signed_uniform("a", 1e38, 3.4e38);
  b.add(3, 1000, "|a|~1e-38");
  b.signed_uniform("a", 0.5e-38, 1.5e-38);
  // s = max / 127 of a subnormal row is a smaller subnormal; of the smallest ones, 0.
  b.add(3, 64, "subnormal rows");
  b.signed_uniform("a", 1e-42, 1e-40);
  b.scale("a", 1e-4, row(2));
}

void nan_inf_cases(Builder& b) {
  b.add(6, 4096, "nan/+inf/-inf in rows 1/3/4");
  b.set("a", {1, 17}, kNaN);
  b.set("a", {3, 100}, kInf);
  b.set("a", {4, 4095}, -kInf);
  b.add(7, 33, "nan/+inf/-inf in rows 1/3/5");
  b.set("a", {1, 0}, kNaN);
  b.set("a", {3, 16}, kInf);
  b.set("a", {5, 32}, -kInf);
  b.add(4, 4096, "+inf,-inf in row 0");
  b.set("a", {0, 5}, kInf);
  b.set("a", {0, 6}, -kInf);
  b.add(5, 129, "nan last in row 2");
  b.set("a", {2, 128}, kNaN);
}

void shape_cases(Builder& b) {
  for (auto [T, K] : {std::pair<int64_t, int64_t>{1, 1}, {129, 1}, {3, 3}, {65, 3}, {2, 31}, {100, 31}, {5, 33},
                      {7, 127}, {1, 129}, {16, 129}, {3, 1000}, {1, 4097}, {9, 4097}, {2, 8191}, {1, 8191}}) {
    b.add(T, K);
  }
}

}  // namespace

std::vector<Case> per_token_quant_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  Builder b("per_token_quant", input_class, dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden

#endif  // NPUKIT_GOLDEN_per_token_quant


// ---- Section NPUKIT_GATE_HOOKS_per_token_quant: the gate's hooks, compiled once, into the gate (npukit_gate);
// libnpukit.so links none of this.
#ifdef NPUKIT_GATE_HOOKS_per_token_quant

// The gate's hooks for per_token_quant: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/per_token_quant.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& a = c.inputs.at("a");
  const int64_t T = c.dims.at("T"), K = c.dims.at("K");
  std::vector<float> row(static_cast<size_t>(K));
  std::vector<int8_t> qrow(static_cast<size_t>(K));
  std::vector<double> q(static_cast<size_t>(T * K)), scale(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    // Exact: the case's values are representable in fp32 (or fp16, a subset).
    for (int64_t k = 0; k < K; ++k) row[static_cast<size_t>(k)] = static_cast<float>(a.values[static_cast<size_t>(t * K + k)]);
    scale[static_cast<size_t>(t)] = golden::quantize_token(row.data(), K, qrow.data());
    for (int64_t k = 0; k < K; ++k) q[static_cast<size_t>(t * K + k)] = qrow[static_cast<size_t>(k)];
  }
  return {{"q", std::move(q)}, {"scale", std::move(scale)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string& output, DType) {
  // The contract is fp32 arithmetic with IEEE division and ties-to-even rounding, which the
  // golden reproduces exactly: any difference is a bug, in q or in the scale.
  golden::Tolerance t;
  t.exact = true;
  t.reason = output == "q" ? "bit-exact: clamp(nearbyint(a / s), -127, 127) with one fp32 division"
                           : "bit-exact: s = max|a| / 127 in fp32 (NaN for a non-finite row)";
  return t;
}

}  // namespace

GateHooks per_token_quant_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::per_token_quant_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN or +-Inf in a row makes that row's scale NaN and its q all 0; other rows are "
      "unaffected. An all-zero row (or one whose max/127 underflows to 0) has scale 0 and q 0.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_per_token_quant
