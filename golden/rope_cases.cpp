#include "golden/rope.h"

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
