#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>

#include "golden/case_builder.h"
#include "golden/int4_gemm.h"

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
