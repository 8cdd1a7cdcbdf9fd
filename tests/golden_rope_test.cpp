// golden/rope and golden/rope_cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "golden/half.h"
#include "golden/rope.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");
constexpr RopeStyle kInterleaved = RopeStyle::interleaved;
constexpr RopeStyle kHalf = RopeStyle::half;

std::vector<double> rotate(const std::vector<double>& x, const std::vector<int64_t>& positions,
                           int64_t heads, int64_t head_dim, int64_t rotary_dim, double theta,
                           RopeStyle style) {
  std::vector<double> y(x.size());
  rope(x.data(), positions.data(), static_cast<int64_t>(positions.size()), heads, head_dim,
       rotary_dim, theta, style, y.data());
  return y;
}

TEST(GoldenRope, HandComputedInterleaved) {
  // d = 4: pair (0, 1) turns by p·1, pair (2, 3) by p·10000^(-2/4) = p·0.01.
  const std::vector<double> y = rotate({1, 2, 3, 4}, {3}, 1, 4, 4, 10000, kInterleaved);
  const double c0 = std::cos(3.0), s0 = std::sin(3.0);
  const double c1 = std::cos(3 * 0.01), s1 = std::sin(3 * 0.01);
  EXPECT_DOUBLE_EQ(y[0], 1 * c0 - 2 * s0);
  EXPECT_DOUBLE_EQ(y[1], 1 * s0 + 2 * c0);
  EXPECT_DOUBLE_EQ(y[2], 3 * c1 - 4 * s1);
  EXPECT_DOUBLE_EQ(y[3], 3 * s1 + 4 * c1);
  // (1, 0) at p = 1 is (cos 1, sin 1): counter-clockwise, a first.
  const std::vector<double> z = rotate({1, 0, 0, 1}, {1}, 1, 4, 4, 10000, kInterleaved);
  EXPECT_NEAR(z[0], 0.54030230586813972, 1e-16);
  EXPECT_NEAR(z[1], 0.84147098480789651, 1e-16);
  EXPECT_NEAR(z[2], -0.0099998333341666665, 1e-17);  // -sin 0.01
  EXPECT_NEAR(z[3], 0.99995000041666526, 1e-16);     // cos 0.01
}

TEST(GoldenRope, HandComputedHalf) {
  // d = 4: pairs (0, 2) and (1, 3).
  const std::vector<double> y = rotate({1, 2, 3, 4}, {3}, 1, 4, 4, 10000, kHalf);
  const double c0 = std::cos(3.0), s0 = std::sin(3.0);
  const double c1 = std::cos(3 * 0.01), s1 = std::sin(3 * 0.01);
  EXPECT_DOUBLE_EQ(y[0], 1 * c0 - 3 * s0);
  EXPECT_DOUBLE_EQ(y[2], 1 * s0 + 3 * c0);
  EXPECT_DOUBLE_EQ(y[1], 2 * c1 - 4 * s1);
  EXPECT_DOUBLE_EQ(y[3], 2 * s1 + 4 * c1);
  const std::vector<double> z = rotate({1, 0, 0, 0}, {1}, 1, 4, 4, 10000, kHalf);
  EXPECT_NEAR(z[0], 0.54030230586813972, 1e-16);
  EXPECT_NEAR(z[2], 0.84147098480789651, 1e-16);
  EXPECT_EQ(z[1], 0);
  EXPECT_EQ(z[3], 0);
}

// The styles differ only in where the pairs live: half is interleaved under a permutation
// of dims, bit for bit, for every head and token.
TEST(GoldenRope, StylesArePermutationsOfEachOther) {
  const int64_t heads = 3, d = 10, rd = 8;
  const std::vector<int64_t> pos = {0, 17, 1048575};
  std::vector<double> x(pos.size() * heads * d);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(static_cast<double>(k) * 1.7) * 3;
  // interleaved dim 2i holds half dim i, 2i + 1 holds i + rd/2; dims >= rd stay.
  auto to_interleaved = [&](int64_t dim) {
    if (dim >= rd) return dim;
    return dim < rd / 2 ? 2 * dim : 2 * (dim - rd / 2) + 1;
  };
  std::vector<double> xi(x.size());
  for (size_t row = 0; row < x.size() / d; ++row) {
    for (int64_t k = 0; k < d; ++k) xi[row * d + to_interleaved(k)] = x[row * d + k];
  }
  const std::vector<double> yh = rotate(x, pos, heads, d, rd, 500000, kHalf);
  const std::vector<double> yi = rotate(xi, pos, heads, d, rd, 500000, kInterleaved);
  for (size_t row = 0; row < x.size() / d; ++row) {
    for (int64_t k = 0; k < d; ++k) ASSERT_EQ(yh[row * d + k], yi[row * d + to_interleaved(k)]);
  }
}

TEST(GoldenRope, DimsPastRotaryDimPassThrough) {
  for (RopeStyle style : {kInterleaved, kHalf}) {
    const std::vector<double> x = {1, 2, 3, 4, 5, -6, kNaN, kInf,
                                   7, 8, 9, 10, -0.0, 1e300, -kInf, 3};
    const std::vector<double> y = rotate(x, {123456, 5}, 1, 8, 4, 10000, style);
    for (int t = 0; t < 2; ++t) {
      for (int k = 4; k < 8; ++k) {
        EXPECT_EQ(std::memcmp(&y[t * 8 + k], &x[t * 8 + k], sizeof(double)), 0) << t << k;
      }
      for (int k = 0; k < 4; ++k) EXPECT_NE(y[t * 8 + k], x[t * 8 + k]) << t << k;
    }
    // rotary_dim = 0: nothing turns.
    const std::vector<double> z = rotate(x, {9, 9}, 2, 4, 0, 10000, style);
    for (size_t k = 0; k < x.size(); ++k) {
      EXPECT_EQ(std::memcmp(&z[k], &x[k], sizeof(double)), 0) << k;
    }
  }
}

TEST(GoldenRope, PositionZeroIsIdentity) {
  std::vector<double> x(2 * 4 * 64);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::cos(static_cast<double>(k) * 0.37) * 1e3;
  x[5] = 1e300;
  x[6] = -1e-310;
  for (RopeStyle style : {kInterleaved, kHalf}) {
    for (double theta : {10000.0, 500000.0}) {
      const std::vector<double> y = rotate(x, {0, 0}, 4, 64, 64, theta, style);
      for (size_t k = 0; k < x.size(); ++k) ASSERT_EQ(y[k], x[k]) << k;
    }
  }
}

TEST(GoldenRope, InPlaceMatchesOutOfPlace) {
  std::vector<double> x(3 * 2 * 6);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<double>(k) - 17.5;
  const std::vector<int64_t> pos = {4, 1000000, 2};
  const std::vector<double> y = rotate(x, pos, 2, 6, 6, 10000, kHalf);
  rope(x.data(), pos.data(), 3, 2, 6, 6, 10000, kHalf, x.data());
  EXPECT_EQ(x, y);
}

// p = 2^20 − 1 against an angle formed in long double: the plain double product p·inv_freq
// is off by up to 6e-11 rad there, the long double one by at most 2^-45 (64-bit mantissa).
TEST(GoldenRope, AccurateAtTheLastPosition) {
  if (std::numeric_limits<long double>::digits < 64) {
    GTEST_SKIP() << "long double has only " << std::numeric_limits<long double>::digits
                 << " bits here";
  }
  const int64_t d = 128, p = (int64_t{1} << 20) - 1;
  std::vector<double> x(d);
  for (int64_t i = 0; i < d / 2; ++i) x[2 * i] = 1;  // (1, 0) turns into (cos φ, sin φ)
  for (double theta : {10000.0, 500000.0}) {
    const std::vector<double> y = rotate(x, {p}, 1, d, d, theta, kInterleaved);
    double worst = 0, worst_naive = 0;
    for (int64_t i = 0; i < d / 2; ++i) {
      const double inv_freq = std::pow(theta, -static_cast<double>(2 * i) / static_cast<double>(d));
      const long double phi = static_cast<long double>(p) * static_cast<long double>(inv_freq);
      const auto c = static_cast<double>(std::cos(phi));
      const auto s = static_cast<double>(std::sin(phi));
      worst = std::max({worst, std::fabs(y[2 * i] - c), std::fabs(y[2 * i + 1] - s)});
      const double naive = static_cast<double>(p) * inv_freq;
      worst_naive = std::max({worst_naive, std::fabs(std::cos(naive) - c),
                              std::fabs(std::sin(naive) - s)});
    }
    EXPECT_LT(worst, 1e-13) << theta;
    // The check has teeth: a kernel-style double angle fails it.
    EXPECT_GT(worst_naive, 1e-11) << theta;
  }
}

// Angles add exactly (p1·w + p2·w = (p1 + p2)·w for the same double w), so turning by
// 2^19 and then by 2^19 − 1 must agree with one turn by 2^20 − 1, and turning back by −p
// must restore x, each to rounding: this needs no wider type.
TEST(GoldenRope, TurnsCompose) {
  const int64_t heads = 2, d = 128;
  std::vector<double> x(heads * d);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(static_cast<double>(k) * 0.91 + 0.3);
  for (RopeStyle style : {kInterleaved, kHalf}) {
    for (double theta : {10000.0, 500000.0}) {
      const auto turn = [&](const std::vector<double>& v, int64_t p) {
        return rotate(v, {p}, heads, d, d, theta, style);
      };
      const std::vector<double> once = turn(x, (1 << 20) - 1);
      const std::vector<double> twice = turn(turn(x, 1 << 19), (1 << 19) - 1);
      const std::vector<double> back = turn(once, -((1 << 20) - 1));
      for (size_t k = 0; k < x.size(); ++k) {
        ASSERT_NEAR(twice[k], once[k], 1e-14) << k;
        ASSERT_NEAR(back[k], x[k], 1e-14) << k;
      }
    }
  }
}

TEST(GoldenRope, NanAndInfStayInTheirPair) {
  // Interleaved, p = 5: pairs (0, 1) and (2, 3).
  std::vector<double> y = rotate({kNaN, 1, 2, 3}, {5}, 1, 4, 4, 10000, kInterleaved);
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  const std::vector<double> clean = rotate({0, 1, 2, 3}, {5}, 1, 4, 4, 10000, kInterleaved);
  EXPECT_EQ(y[2], clean[2]);
  EXPECT_EQ(y[3], clean[3]);
  // +Inf in b at p = 5: −Inf·sin 5 and Inf·cos 5, sin 5 < 0 < cos 5.
  y = rotate({1, kInf, 2, 3}, {5}, 1, 4, 4, 10000, kInterleaved);
  EXPECT_EQ(y[0], kInf);
  EXPECT_EQ(y[1], kInf);
  EXPECT_EQ(y[2], clean[2]);
  // At p = 0 sin φ = 0, and Inf·0 is NaN: a = Inf gives (Inf, NaN), b = −Inf (NaN, −Inf).
  y = rotate({kInf, 1, 2, -kInf}, {0}, 1, 4, 4, 10000, kInterleaved);
  EXPECT_EQ(y[0], kInf);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[3], -kInf);
  // Half, d = 4: pairs (0, 2) and (1, 3); Inf in both halves of a pair may give NaN.
  y = rotate({1, kNaN, 2, 3, kInf, 1, -kInf, 0}, {7, 7}, 1, 4, 4, 10000, kHalf);
  EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[3]));
  EXPECT_TRUE(std::isfinite(y[0]) && std::isfinite(y[2]));
  EXPECT_FALSE(std::isfinite(y[4]) || std::isfinite(y[6]));
  EXPECT_TRUE(std::isfinite(y[5]) && std::isfinite(y[7]));
}

TEST(GoldenRope, RejectsWhatItCannotComputeAccurately) {
  const std::vector<double> x(8);
  std::vector<double> y(8);
  const int64_t p0 = 0, p_big = (int64_t{1} << 31) + 1, p_max = int64_t{1} << 31;
  EXPECT_THROW(rope(x.data(), &p0, 1, 1, 8, 3, 10000, kHalf, y.data()), std::invalid_argument);
  EXPECT_THROW(rope(x.data(), &p0, 1, 1, 8, 10, 10000, kHalf, y.data()), std::invalid_argument);
  EXPECT_THROW(rope(x.data(), &p0, 1, 1, 8, 8, 0.5, kHalf, y.data()), std::invalid_argument);
  EXPECT_THROW(rope(x.data(), &p0, 1, 1, 8, 8, kNaN, kHalf, y.data()), std::invalid_argument);
  EXPECT_THROW(rope(x.data(), &p_big, 1, 1, 8, 8, 10000, kHalf, y.data()),
               std::invalid_argument);
  EXPECT_NO_THROW(rope(x.data(), &p_max, 1, 1, 8, 8, 10000, kHalf, y.data()));
  EXPECT_EQ(rope_style_from_name("half"), kHalf);
  EXPECT_EQ(rope_style_from_name("interleaved"), kInterleaved);
  EXPECT_FALSE(rope_style_from_name("neox").has_value());
}

// --- cases ---

struct Call {
  int64_t tokens, heads, head_dim, rotary_dim, max_position;
  double theta;
  RopeStyle style;
  std::vector<int64_t> positions;
};

Call call_of(const Case& c) {
  Call r{c.dims.at("tokens"), c.dims.at("heads"), c.dims.at("head_dim"),
        std::stoll(c.params.at("rotary_dim")), std::stoll(c.params.at("max_position")),
        std::stod(c.params.at("theta")), *rope_style_from_name(c.params.at("style")), {}};
  for (double p : c.inputs.at("positions").values) r.positions.push_back(static_cast<int64_t>(p));
  return r;
}

std::vector<double> golden_of(const Case& c) {
  const Call r = call_of(c);
  const Array& x = c.inputs.at("x");
  std::vector<double> y(x.values.size());
  rope(x.values.data(), r.positions.data(), r.tokens, r.heads, r.head_dim, r.rotary_dim,
       r.theta, r.style, y.data());
  return y;
}

// The pair (or, past rotary_dim, the lone dim) that dim belongs to, as its lowest dim.
int64_t pair_of(const Call& r, int64_t dim) {
  if (dim >= r.rotary_dim) return dim;
  if (r.style == kInterleaved) return dim - dim % 2;
  return dim % (r.rotary_dim / 2);
}

TEST(GoldenRopeCases, DeterministicAndWellFormed) {
  for (DType t : {DType::float32, DType::float16, DType::float64}) {
    for (InputClass cls : all_input_classes()) {
      const std::vector<Case> a = rope_cases(cls, t);
      const std::vector<Case> b = rope_cases(cls, t);
      SCOPED_TRACE(cls);
      expect_same_cases(a, b);
      int64_t elements = 0;
      for (const Case& c : a) {
        SCOPED_TRACE(c.name);
        EXPECT_EQ(c.dims.size(), 3u);
        EXPECT_EQ(c.params.size(), 4u);
        EXPECT_EQ(c.inputs.size(), 2u);
        const Call r = call_of(c);
        EXPECT_EQ(number_text(r.theta), c.params.at("theta"));
        EXPECT_TRUE(r.theta == 10000 || r.theta == 500000);
        EXPECT_EQ(std::to_string(r.rotary_dim), c.params.at("rotary_dim"));
        EXPECT_EQ(std::to_string(r.max_position), c.params.at("max_position"));
        EXPECT_TRUE(r.rotary_dim > 0 && r.rotary_dim <= r.head_dim && r.rotary_dim % 2 == 0);
        const Array& x = c.inputs.at("x");
        const Array& pos = c.inputs.at("positions");
        EXPECT_EQ(x.shape, (std::vector<int64_t>{r.tokens, r.heads, r.head_dim}));
        EXPECT_EQ(pos.shape, (std::vector<int64_t>{r.tokens}));
        EXPECT_EQ(x.dtype, t);
        EXPECT_EQ(pos.dtype, DType::int32);
        for (double v : x.values) ASSERT_TRUE(representable(v, t));
        for (double p : pos.values) {
          ASSERT_TRUE(p == std::floor(p) && p >= 0 && p < static_cast<double>(r.max_position))
              << p;
        }
        elements += r.tokens * r.heads * r.head_dim;
      }
      EXPECT_LE(elements, 8 << 20) << cls;
    }
  }
  EXPECT_TRUE(rope_cases(InputClass::normal, DType::int8).empty());
}

TEST(GoldenRopeCases, NormalCoversDecodeChunksStylesAndThetas) {
  for (DType t : {DType::float32, DType::float16}) {
    std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
    std::set<std::pair<RopeStyle, double>> variants;
    bool in_order = false, shuffled = false;
    for (const Case& c : rope_cases(InputClass::normal, t)) {
      const Call r = call_of(c);
      shapes.insert({r.tokens, r.heads, r.head_dim});
      variants.insert({r.style, r.theta});
      if (r.tokens > 1) {
        const bool sorted = std::is_sorted(r.positions.begin(), r.positions.end());
        in_order |= sorted && r.positions.back() - r.positions.front() == r.tokens - 1;
        shuffled |= !sorted && std::set<int64_t>(r.positions.begin(), r.positions.end()).size() ==
                                   r.positions.size();
      }
    }
    EXPECT_TRUE(shapes.count({1, 32, 128}) && shapes.count({17, 8, 64}));
    EXPECT_EQ(variants.size(), 4u) << "both styles with both thetas";
    EXPECT_TRUE(in_order && shuffled);
  }
}

TEST(GoldenRopeCases, BoundaryHasTheEdgePositionsAndDims) {
  for (DType t : {DType::float32, DType::float16}) {
    const std::vector<Case> cases = rope_cases(InputClass::boundary, t);
    EXPECT_TRUE(contains_all(dim_values(cases, "head_dim"), {64, 80, 128, 256}));
    std::set<std::pair<int64_t, int64_t>> partial;  // (head_dim, rotary_dim)
    bool only_zero = false, last = false, small_last = false, rd2 = false;
    for (const Case& c : cases) {
      const Call r = call_of(c);
      partial.insert({r.head_dim, r.rotary_dim});
      rd2 |= r.rotary_dim == 2;
      only_zero |= std::all_of(r.positions.begin(), r.positions.end(),
                               [](int64_t p) { return p == 0; });
      for (int64_t p : r.positions) {
        last |= r.max_position == 1048576 && p == 1048575;
        small_last |= r.max_position == 4096 && p == 4095;
      }
    }
    EXPECT_TRUE(partial.count({128, 32}) && partial.count({80, 64}));
    EXPECT_TRUE(only_zero && last && small_last && rd2);
  }
}

TEST(GoldenRopeCases, ShapeCoversOddSizes) {
  for (DType t : {DType::float32, DType::float16}) {
    const std::vector<Case> cases = rope_cases(InputClass::shape, t);
    EXPECT_TRUE(contains_all(dim_values(cases, "tokens"), {1, 2, 7, 64, 257, 4097}));
    EXPECT_TRUE(contains_all(dim_values(cases, "heads"), {1, 3, 64}));
    EXPECT_TRUE(contains_all(dim_values(cases, "head_dim"), {2, 6, 64}));
  }
}

// Rotations reach √2·max|x|: stored in dtype, some outputs of the class are legitimately
// ±Inf, and a case whose |x| stays below max/√2 has none.
TEST(GoldenRopeCases, OverflowOverflowsStorageOnlyWhereTheRotationDoes) {
  for (DType t : {DType::float16, DType::float32}) {
    const double max = t == DType::float16 ? 65504 : std::numeric_limits<float>::max();
    bool overflowed = false, safe_case = false, long_context = false;
    for (const Case& c : rope_cases(InputClass::overflow, t)) {
      SCOPED_TRACE(c.name);
      const Call r = call_of(c);
      const Array& x = c.inputs.at("x");
      double max_x = 0;
      for (double v : x.values) {
        ASSERT_TRUE(std::isfinite(v));
        max_x = std::max(max_x, std::fabs(v));
      }
      size_t inf = 0;
      for (double v : golden_of(c)) {
        ASSERT_TRUE(std::isfinite(v));
        ASSERT_LE(std::fabs(v), std::sqrt(2.0) * max_x * (1 + 1e-14));
        inf += std::isinf(round_to_dtype(v, t)) ? 1 : 0;
      }
      if (max_x > max * 0.75) overflowed |= inf > 0;
      if (max_x > max * 0.4 && max_x < max / std::sqrt(2.0)) {
        safe_case = true;
        EXPECT_EQ(inf, 0u);
      }
      long_context |= r.theta == 500000 &&
                      *std::min_element(r.positions.begin(), r.positions.end()) >=
                          (int64_t{1} << 20) - 4096;
    }
    EXPECT_TRUE(overflowed && safe_case && long_context) << dtype_name(t);
  }
}

TEST(GoldenRopeCases, NanInfStaysInsideItsPairs) {
  for (DType t : {DType::float32, DType::float16}) {
    bool nan = false, pos_inf = false, neg_inf = false, at_zero = false, past_rd = false;
    for (const Case& c : rope_cases(InputClass::nan_inf, t)) {
      SCOPED_TRACE(c.name);
      const Call r = call_of(c);
      const Array& x = c.inputs.at("x");
      const std::vector<double> y = golden_of(c);
      for (int64_t row = 0; row < r.tokens * r.heads; ++row) {
        std::set<int64_t> tainted, nan_pairs;
        for (int64_t k = 0; k < r.head_dim; ++k) {
          const double v = x.values[row * r.head_dim + k];
          nan |= std::isnan(v);
          pos_inf |= v == kInf;
          neg_inf |= v == -kInf;
          if (std::isfinite(v)) continue;
          tainted.insert(pair_of(r, k));
          if (std::isnan(v)) nan_pairs.insert(pair_of(r, k));
          at_zero |= r.positions[row / r.heads] == 0;
          past_rd |= k >= r.rotary_dim;
        }
        for (int64_t k = 0; k < r.head_dim; ++k) {
          const double v = y[row * r.head_dim + k];
          if (!std::isfinite(v)) {
            ASSERT_TRUE(tainted.count(pair_of(r, k))) << row << " " << k;
          }
          if (nan_pairs.count(pair_of(r, k))) {
            ASSERT_TRUE(std::isnan(v)) << row << " " << k;
          }
        }
      }
    }
    EXPECT_TRUE(nan && pos_inf && neg_inf && at_zero && past_rd) << dtype_name(t);
  }
}

TEST(GoldenRopeCases, FiniteOutsideTheNanInfAndOverflowClasses) {
  for (DType t : {DType::float16, DType::float32}) {
    for (InputClass cls : {InputClass::normal, InputClass::boundary, InputClass::shape}) {
      for (const Case& c : rope_cases(cls, t)) {
        for (double v : golden_of(c)) {
          ASSERT_TRUE(std::isfinite(round_to_dtype(v, t))) << cls << " / " << c.name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace npukit::golden
