#include "golden/int8_gemm.h"

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
