// Golden INT4-weight GEMM (docs/ops/int4_gemm.md): y = a · w'ᵀ, w'[n, k] = s[n, g] · (q[n, k] −
// zp[n, g]) with g = k / G, the int4 q packed two per byte as `npukit quantize --scheme
// int4-group:G` writes them. In double, independently of the kernels (its own nibble
// unpacking, no Halide). Then (below) its input classes and the gate's hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// q[n, k] of w, row-major [N, ceil(K / 2)] bytes: k = 2j is the low nibble (bits 0–3) of
// byte j, k = 2j + 1 its high nibble. Unsigned: 0 … 15 (asymmetric, with zero points);
// otherwise two's complement: −8 … 7.
int int4_at(const uint8_t* w, int64_t row_bytes, int64_t n, int64_t k, bool unsigned_q);

// One call's inputs. a[M, K] holds int8 integers (a_int8) or floats (fp32 or fp16 values);
// scales and zero_points are [N, ceil(K / group)]; zero_points and a_scales [M] may be null.
struct Int4GemmInputs {
  int64_t M = 0, N = 0, K = 0, group = 32;
  bool a_int8 = false;
  const double* a = nullptr;
  const uint8_t* w = nullptr;
  const double* scales = nullptr;
  const uint8_t* zero_points = nullptr;
  const double* a_scales = nullptr;
};

// y[m·N + n] in double, before rounding to the output dtype. With d = q − zp (zp = 0 and q
// signed without zero points), exact integers in [−15, 15]:
//   int8 a:  P[g] = Σ_{k in g} a[m, k] · d[n, k], exact (|P| ≤ 128 · 15 · G ≤ 245760: it
//            fits int32 for every group size, so no K limit exists);
//            y = (Σ_g s[n, g] · P[g]) · a_scales[m], groups in k order (without a_scales the
//            product is left out);
//   float a: y = Σ_g s[n, g] · (Σ_{k in g} a[m, k] · d[n, k]).
// The kernels evaluate the same expressions in fp32 (docs/ops/int4_gemm.md, "Arithmetic");
// the double products s · P and a · d are exact, so IEEE NaN/Inf follow the same way:
// a NaN scale makes its column NaN, an infinite one ±Inf by the sign of its group's sum and
// NaN where that sum is 0 (or meets the opposite infinity); a NaN or infinite a[m, k]
// likewise makes row m NaN or ±Inf (NaN where d = 0); a_scales[m] NaN makes row m NaN.
// Errors, std::invalid_argument naming the value: group not 32, 64 or 128; a zero point
// above 15; a_scales with float a; an int8 a outside [−128, 127] or not an integer.
std::vector<double> int4_gemm_reference(const Int4GemmInputs& in);

// For each element, the sum of the magnitudes of the terms y adds up in fp32: |a_scales[m]|
// · Σ_g |s · P[g]| for int8 a, Σ_g |s| · Σ_{k in g} |a · d| for float a (Inf where a term is
// not finite). Any fp32 evaluation order of the sums stays within (terms) · 2^−24 of it.
std::vector<double> int4_gemm_magnitude(const Int4GemmInputs& in);

// The number of fp32 roundings an element of y goes through in the kernels' arithmetic,
// whatever the order: 2·groups + 1 for int8 a (the products s · P, their sums, the row
// scale), group + 2·groups + 1 for float a (the products a · d and sums in each group too).
int64_t int4_gemm_roundings(int64_t K, int64_t group, bool a_int8);

// The reference and magnitudes of a case of int4_gemm_cases(): dims "M", "N", "K"; params
// "group" (default 32); inputs "a", "w", "scales", and "zero_points", "a_scales" where
// present.
std::vector<double> int4_gemm_reference(const Case& c);
std::vector<double> int4_gemm_magnitude(const Case& c);

// The cases of one input class for activations `a_dtype` (int8, float32 or float16; any
// other dtype: empty).
//
// Tensor t of case i is drawn from case_seed("int4_gemm/<class>/<t>", i, chunk).
// Dims "M", "N", "K"; inputs "a" [M, K] of a_dtype, "w" uint8 [N, ceil(K/2)], "scales"
// float32 or float16 [N, ceil(K/G)] (alternating between cases), "zero_points" uint8 of the
// same shape in about half the cases (asymmetric; the others symmetric), "a_scales" float32
// [M] in most int8 cases. Params "group" (32, 64, 128, in turn) and "out" (float32 for int8
// and float32 a, float16 for float16 a, the other one in every third case). Unless a case
// says otherwise: every byte of w ~ U{0 … 255}, zero points ~ U{0 … 15}, scales ~ U(0.001,
// 0.02), a ~ U{−128 … 127} (int8, a_scales ~ U(0.002, 0.05)) or N(0, 1) (floats).
//   normal:   decode M = 1 at K 1024 … 4096, N 256 … 4096, and M 4 … 128.
//   boundary: K around a group (G − 1, G, G + 1), K 1, 2, 3; N on and off the kernels'
//             16-channel blocks (1, 15, 16, 17, 31, 33); nibbles and a at their ends only
//             (q 0/15 against zero points 0/15, or −8/7; a −128/127 or ±1); a zero scale, a
//             subnormal and the smallest normal scale, a zero row scale.
//   overflow: the largest group sums: |P| = 128 · 15 · G (245760 at G = 128, beyond int16,
//             within int32) in both signs, over K up to 8192; a sum past fp32's range
//             (scales 1e33: ±Inf) and, for float16 output, past 65504; float a at fp16's
//             largest values and fp32 a of 1e35 (products and group sums stay finite).
//   nan_inf:  NaN, +Inf, −Inf scales (fp32 and fp16), one on a group whose sum is 0 (NaN);
//             int8: NaN/±Inf a_scales, one on a row whose sum is 0; float a: NaN, ±Inf
//             activations, one against d = 0 (NaN).
//   shape:    odd K (1 … 4097), odd N (1 … 4097), M 1 … 100.
// Every case's reference is finite except in nan_inf and the cases named "overflows".
std::vector<Case> int4_gemm_cases(InputClass input_class, DType a_dtype);

}  // namespace npukit::golden

// ---- Section NPUKIT_GOLDEN_int4_gemm: the reference and the input classes' cases, compiled once, into
// npukit_golden (cmake/NpukitOperators.cmake).
#ifdef NPUKIT_GOLDEN_int4_gemm

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

#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>

#include "golden/case_builder.h"

namespace npukit::golden {
namespace {

class Builder : public CaseBuilder {
 public:
  explicit Builder(InputClass cls, DType a_dtype) : CaseBuilder("int4_gemm", cls, a_dtype) {}

  bool int8() const { return dtype() == DType::int8; }

  // Appends a case with the defaults of int4_gemm_cases (golden/int4_gemm.h). Case i is
  // asymmetric when i is even, has fp16 scales when i % 4 is 1 or 2, and the other output
  // dtype when i % 3 is 2, unless the arguments fix them.
  void add(int64_t M, int64_t N, int64_t K, int64_t G, int asym = -1, int fp16_scales = -1) {
    const size_t i = all().size();
    const bool zp = asym < 0 ? i % 2 == 0 : asym != 0;
    const bool s16 = fp16_scales < 0 ? i % 4 == 1 || i % 4 == 2 : fp16_scales != 0;
    const DType natural = dtype() == DType::float16 ? DType::float16 : DType::float32;
    const DType other = natural == DType::float16 ? DType::float32 : DType::float16;
    const DType out = i % 3 == 2 ? other : natural;
    CaseBuilder::add(sizes_text({{"M", M}, {"N", N}, {"K", K}, {"G", G}}), {{"M", M}, {"N", N}, {"K", K}},
                     {{"group", std::to_string(G)}, {"out", std::string(dtype_name(out))}});
    note(std::string(zp ? "asym" : "sym") + (s16 ? " s=f16" : " s=f32") + " out=" + std::string(dtype_name(out)));
    const int64_t groups = (K + G - 1) / G;
    last().inputs["a"] = int8() ? integers("a", DType::int8, {M, K}, -128, 127) : normal("a", {M, K}, 0, 1);
    last().inputs["w"] = integers("w", DType::uint8, {N, (K + 1) / 2}, 0, 255);
    last().inputs["scales"] = uniform("scales", s16 ? DType::float16 : DType::float32, {N, groups}, 0.001, 0.02);
    if (zp) last().inputs["zero_points"] = integers("zero_points", DType::uint8, {N, groups}, 0, 15);
    if (int8()) last().inputs["a_scales"] = uniform("a_scales", DType::float32, {M}, 0.002, 0.05);
  }

  bool asym() { return last().inputs.count("zero_points") > 0; }
  int64_t K() { return last().dims.at("K"); }
  int64_t G() { return std::stoll(last().params.at("group")); }
  int64_t groups() { return (K() + G() - 1) / G(); }

  // The raw nibble (0 … 15) of q[n, k].
  void set_nibble(int64_t n, int64_t k, int nibble) {
    Array& w = input("w");
    const auto at = static_cast<size_t>(n * w.shape[1] + k / 2);
    const int byte = static_cast<int>(w.values[at]);
    w.values[at] = k % 2 == 0 ? (byte & 0xF0) | nibble : (byte & 0x0F) | (nibble << 4);
  }
  // Every q of channel n (or of its group g) is the raw nibble v.
  void channel_nibbles(int64_t n, int nibble) {
    for (int64_t k = 0; k < K(); ++k) set_nibble(n, k, nibble);
  }
  void set_zero_point(int64_t n, int64_t g, int v) { set("zero_points", {n, g}, v); }
  void channel_zero_points(int64_t n, int v) {
    for (int64_t g = 0; g < groups(); ++g) set_zero_point(n, g, v);
  }
  void set_scale(int64_t n, int64_t g, double v) { set("scales", {n, g}, v); }
  void channel_scales(int64_t n, double v) {
    for (int64_t g = 0; g < groups(); ++g) set_scale(n, g, v);
  }
  void set_a(int64_t m, int64_t k, double v) { set("a", {m, k}, v); }
  void a_row(int64_t m, double v) { fill("a", v, row(m)); }
  void set_a_scale(int64_t m, double v) { set("a_scales", {m}, v); }
  void no_a_scales() {
    last().inputs.erase("a_scales");
    note("no a_scales");
  }

  // Every nibble and zero point at an end of its range (q 0 or 15 and zp 0 or 15, or q −8
  // or 7), and a at ±its end (int8 −128 / 127, floats ±1), each a fair coin.
  void extremes() {
    Array& w = input("w");
    const Array coin = integers("w_extreme", DType::uint8, w.shape, 0, 3);
    const int lo = asym() ? 0 : 8, hi = asym() ? 15 : 7;
    for (size_t i = 0; i < w.values.size(); ++i) {
      const int c = static_cast<int>(coin.values[i]);
      w.values[i] = ((c & 1) ? hi : lo) | (((c & 2) ? hi : lo) << 4);
    }
    if (asym()) {
      Array& z = input("zero_points");
      const Array zc = integers("zp_extreme", DType::uint8, z.shape, 0, 1);
      for (size_t i = 0; i < z.values.size(); ++i) z.values[i] = zc.values[i] != 0 ? 15 : 0;
    }
    Array& a = input("a");
    const Array ac = integers("a_extreme", DType::uint8, a.shape, 0, 1);
    const double top = int8() ? 127 : 1, bottom = int8() ? -128 : -1;
    for (size_t i = 0; i < a.values.size(); ++i) a.values[i] = ac.values[i] != 0 ? top : bottom;
    note("extremes");
  }

  // Channel n's d = q − zp is −15 (dir < 0) or 15 (asymmetric), −8 or 7 (symmetric) at
  // every k: the largest group sums against a = −128 or 127.
  void extreme_channel(int64_t n, int dir) {
    if (asym()) {
      channel_nibbles(n, dir < 0 ? 0 : 15);
      channel_zero_points(n, dir < 0 ? 15 : 0);
    } else {
      channel_nibbles(n, dir < 0 ? 8 : 7);
    }
  }
};

void normal_cases(Builder& b) {
  int i = 0;
  for (auto [M, N, K, G] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 4096, 4096, 128},
                            {1, 1024, 1024, 32},
                            {1, 256, 2048, 64},
                            {1, 512, 4096, 32},
                            {4, 256, 1024, 32},
                            {16, 128, 512, 64},
                            {64, 64, 512, 128},
                            {128, 32, 256, 32}}) {
    b.add(M, N, K, G);
    if (b.int8() && i == 5) b.no_a_scales();
    ++i;
  }
}

void boundary_cases(Builder& b) {
  // K around one group and the smallest K (one byte, half of it padding when K is odd);
  // N on and off the kernels' blocks of 16 channels.
  int i = 0;
  for (auto [M, N, K, G] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 16, 31, 32},
                            {2, 17, 32, 32},
                            {3, 15, 33, 32},
                            {1, 33, 63, 64},
                            {2, 31, 65, 64},
                            {3, 16, 127, 128},
                            {1, 1, 129, 128},
                            {2, 32, 1, 32},
                            {1, 3, 2, 64},
                            {3, 48, 3, 128}}) {
    b.add(M, N, K, G);
    if (i % 2 == 0) b.extremes();
    ++i;
  }
  // Scales at their low end: zero (the group adds nothing), the smallest subnormal and the
  // smallest normal of the scales' dtype; a zero row scale.
  for (int s16 : {0, 1}) {
    b.add(3, 20, 256, 64, s16, s16);
    b.note("scale 0 / subnormal / min normal");
    b.set_scale(0, 1, 0);
    b.channel_scales(1, s16 ? 0x1p-24 : 0x1p-149);
    b.channel_scales(2, s16 ? 0x1p-14 : 0x1p-126);
    b.channel_scales(3, 0);
    if (b.int8()) {
      b.set_a_scale(2, 0);
      b.note("row 2 a_scale 0");
    }
  }
}

void overflow_cases(Builder& b) {
  // |P| = 128 · 15 · G in each group, both signs: rows a = −128 and 127 (int8) against
  // channels of d = −15, 15 (or −8, 7). A 16-bit accumulation of a whole group would wrap.
  int i = 0;
  for (auto [K, G] : {std::pair<int64_t, int64_t>{8192, 128}, {4096, 64}, {1024, 32}, {1000, 128}}) {
    b.add(4, 6, K, G, i % 2 == 0, i % 2);
    b.note("largest group sums");
    const double top = b.int8() ? 127 : 1, bottom = b.int8() ? -128 : -1;
    b.a_row(0, bottom);
    b.a_row(1, top);
    for (int64_t n = 0; n < 6; ++n) b.extreme_channel(n, n % 2 ? 1 : -1);
    // 2^−10 keeps Σ_g s · P within fp16 for int8 a (64 groups · 245760 / 1024 = 15360).
    for (int64_t n = 0; n < 6; ++n) b.channel_scales(n, 0x1p-10);
    if (b.int8()) {
      for (int64_t m = 0; m < 4; ++m) b.set_a_scale(m, 1);
    }
    ++i;
  }
  if (b.int8()) {
    // s · P = 2.5e38 per group is finite in fp32; two groups of one sign are not.
    b.add(2, 3, 256, 128, 1, 0);
    b.note("fp32 overflows in channel 0");
    b.a_row(0, -128);
    b.a_row(1, 127);
    b.extreme_channel(0, -1);
    b.channel_scales(0, 1e33);
    b.set_a_scale(0, 1);
    b.set_a_scale(1, 1);
    // y ≈ 1e5: past fp16's 65504 (only an fp16 output overflows).
    b.add(2, 3, 256, 128, 0, 1);
    b.note("fp16 overflows in channel 1");
    b.a_row(0, -128);
    b.a_row(1, 127);
    b.extreme_channel(1, 1);
    b.channel_scales(1, 0.5);
    b.set_a_scale(0, 1);
    b.set_a_scale(1, 1);
    return;
  }
  const bool half = b.dtype() == DType::float16;
  // float16 a at ±65504 against d = ±15: group sums of 1.3e8, y ≈ 1e6 overflows fp16
  // outputs only. float32 a of 1e35: group sums of 4.8e37 (finite), y ≈ 7.7e38 overflows.
  b.add(2, 4, 64, 32, 1, 0);
  b.note(half ? "fp16 overflows in channel 0" : "fp32 overflows in channel 0");
  const double big = half ? 65504 : 1e35;
  b.a_row(0, -big);
  b.a_row(1, big);
  b.extreme_channel(0, -1);
  b.channel_scales(0, half ? 0x1p-3 : 8);
  b.extreme_channel(1, 1);
  b.channel_scales(1, half ? 0x1p-20 : 1e-30);
}

void nan_inf_cases(Builder& b) {
  for (int s16 : {0, 1}) {
    // Row 2 is zero in group 3 (P = 0 there): channel 6's +Inf scale in that group makes
    // (2, 6) NaN and the other rows ±Inf.
    b.add(4, 8, 256, 64, s16, s16);
    b.note("scales nan/+inf/-inf/+inf at (1,0)/(3,2)/(5,1)/(6,3)");
    b.set_scale(1, 0, kNaN);
    b.set_scale(3, 2, kInf);
    b.set_scale(5, 1, -kInf);
    b.set_scale(6, 3, kInf);
    for (int64_t k = 192; k < 256; ++k) b.set_a(2, k, 0);
  }
  if (b.int8()) {
    // Row 2 is all zero: its +Inf row scale gives NaN there.
    b.add(4, 8, 64, 32);
    b.note("a_scales nan/+inf/-inf in rows 1/2/3, row 2 zero");
    b.a_row(2, 0);
    b.set_a_scale(1, kNaN);
    b.set_a_scale(2, kInf);
    b.set_a_scale(3, -kInf);
    return;
  }
  // a NaN, +Inf, −Inf in rows 0, 1, 2; row 3's +Inf at k = 3 meets d = 0 in channel 4 (NaN
  // there, ±Inf in the other channels).
  b.add(4, 8, 64, 32, 1);
  b.note("a nan/+inf/-inf in rows 0/1/2, row 3 +inf against d=0 in ch 4");
  b.set_a(0, 5, kNaN);
  b.set_a(1, 7, kInf);
  b.set_a(2, 9, -kInf);
  b.set_a(3, 3, kInf);
  b.set_nibble(4, 3, 9);
  b.set_zero_point(4, 0, 9);
  b.add(3, 17, 100, 64, 0);
  b.note("a +inf and -inf in row 1");
  b.set_a(1, 10, kInf);
  b.set_a(1, 90, -kInf);
}

void shape_cases(Builder& b) {
  const int64_t groups[] = {32, 64, 128};
  int i = 0;
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 4097, 64},
                         {2, 1, 4097},
                         {3, 255, 257},
                         {7, 33, 1000},
                         {17, 127, 129},
                         {33, 3, 4095},
                         {65, 65, 65},
                         {100, 17, 127},
                         {1, 11008, 128},
                         {5, 513, 1},
                         {2, 2049, 33}}) {
    b.add(M, N, K, groups[i % 3]);
    ++i;
  }
}

}  // namespace

std::vector<Case> int4_gemm_cases(InputClass input_class, DType a_dtype) {
  if (a_dtype != DType::int8 && a_dtype != DType::float32 && a_dtype != DType::float16) return {};
  Builder b(input_class, a_dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden

#endif  // NPUKIT_GOLDEN_int4_gemm


// ---- Section NPUKIT_GATE_HOOKS_int4_gemm: the gate's hooks, compiled once, into the gate (npukit_gate);
// libnpukit.so links none of this.
#ifdef NPUKIT_GATE_HOOKS_int4_gemm

// The gate's hooks for int4_gemm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/int4_gemm.cpp is the rest of the op; libnpukit.so links none of this).
// The gate's dtypes are the activations' (int8, float32, float16); each case's output dtype
// is its `out` parameter.
#include <algorithm>
#include <cmath>

#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

// The kernels sum the groups (and, for float a, each group's products) in fp32 in an order
// of their own, so an element's error is bounded by its number of fp32 roundings times 2^-24
// times the sum of its terms' magnitudes, not by its own magnitude (the terms can cancel).
// One bound per case: the largest over its elements.
golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  const bool int8 = c.inputs.at("a").dtype == DType::int8;
  const int64_t group = std::stoll(c.params.at("group"));
  const double roundings = static_cast<double>(golden::int4_gemm_roundings(c.dims.at("K"), group, int8));
  double largest = 0;
  for (double v : golden::int4_gemm_magnitude(c)) {
    if (std::isfinite(v)) largest = std::max(largest, v);
  }
  golden::Tolerance t;
  t.atol = roundings * std::ldexp(largest, -24);
  if (dtype == DType::float16) {
    t.rtol = 1e-3;
    t.atol += 6e-8;
    t.reason = "fp32 sums of the groups (and products) in the kernel's order: roundings x 2^-24 x the sum of |terms|; "
               "then one rounding to fp16 (1 fp16 ULP; 2^-24 absolute for subnormals)";
  } else {
    t.rtol = 4 * std::ldexp(1.0, -24);
    t.atol += 1e-40;
    t.reason = "fp32 sums of the groups (and products) in the kernel's order: roundings x 2^-24 x the sum of |terms|";
  }
  return t;
}

}  // namespace

GateHooks int4_gemm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::int8, DType::float32, DType::float16};
  gate.cases = golden::int4_gemm_cases;
  gate.reference = [](const golden::Case& c) {
    return std::map<std::string, std::vector<double>>{{"y", golden::int4_gemm_reference(c)}};
  };
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN scale makes its output column NaN; an infinite one +-Inf by the sign of its group's sum, NaN where that "
      "sum is 0. int8 a: a NaN a_scales[m] makes row m NaN, an infinite one +-Inf (NaN where the row's sum is 0). "
      "float a: a NaN a[m, k] makes row m NaN; an infinite one +-Inf, NaN where it meets q = zero point.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_int4_gemm
