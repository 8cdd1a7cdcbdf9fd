// golden/attention and golden/attention_cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "golden/attention.h"
#include "golden/half.h"
#include "golden/rope.h"
#include "tests/golden_case_checks.h"

namespace npukit::golden {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

struct Core {
  int64_t Hq = 1, Hkv = 1, Dh = 2, S = 2;
  std::vector<double> q, k, v, mask;  // mask empty: none
  std::vector<int64_t> positions;

  std::vector<double> run() const {
    std::vector<double> o(positions.size() * static_cast<size_t>(Hq * Dh), -1);
    attention_core(q.data(), k.data(), v.data(), positions.data(),
                   mask.empty() ? nullptr : mask.data(), static_cast<int64_t>(positions.size()),
                   Hq, Hkv, Dh, S, o.data());
    return o;
  }
};

// Deterministic non-trivial values without the generators.
std::vector<double> wave(size_t n, double f, double phase = 0) {
  std::vector<double> x(n);
  for (size_t k = 0; k < n; ++k) x[k] = std::sin(static_cast<double>(k) * f + phase);
  return x;
}

Core random_core(int64_t T, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S, int64_t first) {
  Core c{Hq, Hkv, Dh, S, {}, {}, {}, {}, {}};
  c.q = wave(static_cast<size_t>(T * Hq * Dh), 0.77, 0.1);
  c.k = wave(static_cast<size_t>(Hkv * S * Dh), 1.31, 0.2);
  c.v = wave(static_cast<size_t>(Hkv * S * Dh), 0.53, 0.3);
  for (int64_t t = 0; t < T; ++t) c.positions.push_back(first + t);
  return c;
}

size_t at(const Core& c, int64_t g, int64_t j, int64_t d) {
  return static_cast<size_t>((g * c.S + j) * c.Dh + d);
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool all_same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (!same(a[k], b[k])) return false;
  }
  return true;
}

TEST(GoldenAttention, HandComputedOneHead) {
  // q = (1, 1), k0 = (0, 0), k1 = (1, 1): scores 0 and 2/√2 = √2; v0 = (1, 0), v1 = (0, 1).
  Core c;
  c.q = {1, 1, 1, 1};
  c.k = {0, 0, 1, 1};
  c.v = {1, 0, 0, 1};
  c.positions = {1, 0};
  const std::vector<double> o = c.run();
  const double e = std::exp(std::sqrt(2.0));
  EXPECT_NEAR(o[0], 1 / (1 + e), 1e-15);
  EXPECT_NEAR(o[1], e / (1 + e), 1e-15);
  // Position 0 sees only itself: exactly v0.
  EXPECT_EQ(o[2], 1);
  EXPECT_EQ(o[3], 0);
  // Equal scores average: q ⟂ both keys.
  c.q = {1, -1};
  c.k = {1, 1, 2, 2};
  c.v = {3, 5, 7, -1};
  c.positions = {1};
  const std::vector<double> avg = c.run();
  EXPECT_EQ(avg[0], 5);
  EXPECT_EQ(avg[1], 2);
}

TEST(GoldenAttention, GroupedQueryHeadMapping) {
  // Hq = 6, Hkv = 2: heads 0..2 read kv head 0, heads 3..5 kv head 1. With one cache
  // position the output is exactly that head's v row.
  Core c = random_core(1, 6, 2, 4, 1, 0);
  const std::vector<double> o = c.run();
  for (int64_t h = 0; h < 6; ++h) {
    for (int64_t d = 0; d < 4; ++d) EXPECT_EQ(o[static_cast<size_t>(h * 4 + d)], c.v[at(c, h / 3, 0, d)]);
  }
  // With several positions, each query head equals a one-head call on its kv head.
  Core g = random_core(3, 6, 2, 8, 9, 5);
  const std::vector<double> og = g.run();
  for (int64_t h = 0; h < 6; ++h) {
    Core one = g;
    one.Hq = one.Hkv = 1;
    one.q.clear();
    for (int64_t t = 0; t < 3; ++t) {
      for (int64_t d = 0; d < 8; ++d) one.q.push_back(g.q[static_cast<size_t>((t * 6 + h) * 8 + d)]);
    }
    one.k.assign(g.k.begin() + (h / 3) * 9 * 8, g.k.begin() + (h / 3 + 1) * 9 * 8);
    one.v.assign(g.v.begin() + (h / 3) * 9 * 8, g.v.begin() + (h / 3 + 1) * 9 * 8);
    const std::vector<double> oo = one.run();
    for (int64_t t = 0; t < 3; ++t) {
      for (int64_t d = 0; d < 8; ++d) {
        ASSERT_EQ(og[static_cast<size_t>((t * 6 + h) * 8 + d)], oo[static_cast<size_t>(t * 8 + d)]);
      }
    }
  }
}

TEST(GoldenAttention, FutureCachePositionsChangeNothing) {
  Core c = random_core(4, 4, 2, 8, 16, 6);  // positions 6..9
  const std::vector<double> before = c.run();
  for (int64_t g = 0; g < 2; ++g) {
    for (int64_t j = 10; j < 16; ++j) {
      for (int64_t d = 0; d < 8; ++d) {
        c.k[at(c, g, j, d)] = j % 2 ? kNaN : 1e300;
        c.v[at(c, g, j, d)] = j % 3 ? kInf : -kInf;
      }
    }
  }
  EXPECT_EQ(c.run(), before);
  // Position 8 is the future of queries 6 and 7 only.
  Core d = random_core(4, 4, 2, 8, 16, 6);
  d.k[at(d, 0, 8, 0)] = 1e3;
  const std::vector<double> after = d.run();
  for (size_t k = 0; k < after.size(); ++k) {
    const int64_t t = static_cast<int64_t>(k) / (4 * 8), h = (static_cast<int64_t>(k) / 8) % 4;
    if (t < 2 || h >= 2) {
      EXPECT_EQ(after[k], before[k]) << k;
    } else {
      EXPECT_NE(after[k], before[k]) << k;
    }
  }
}

TEST(GoldenAttention, MaskedPositionsAreSkipped) {
  // Masking j in {1, 4, 5} equals a cache without those rows, bit for bit.
  Core c = random_core(2, 2, 1, 4, 8, 6);  // positions 6, 7
  c.mask.assign(2 * 8, 0);
  for (int64_t j : {1, 4, 5}) {
    for (int64_t t = 0; t < 2; ++t) c.mask[static_cast<size_t>(t * 8 + j)] = -kInf;
    for (int64_t d = 0; d < 4; ++d) c.k[at(c, 0, j, d)] = kNaN;  // never read
  }
  Core compact = c;
  compact.mask.clear();
  compact.k.clear();
  compact.v.clear();
  for (int64_t j : {0, 2, 3, 6, 7}) {
    for (int64_t d = 0; d < 4; ++d) {
      compact.k.push_back(c.k[at(c, 0, j, d)]);
      compact.v.push_back(c.v[at(c, 0, j, d)]);
    }
  }
  compact.S = 5;
  compact.positions = {3, 4};
  EXPECT_EQ(c.run(), compact.run());
  // The mask cannot re-open the future: a 0 there changes nothing (it already is 0).
  Core f = random_core(1, 1, 1, 4, 8, 3);
  const std::vector<double> plain = f.run();
  f.mask.assign(8, 0);
  EXPECT_EQ(f.run(), plain);
}

TEST(GoldenAttention, FullyMaskedRowIsZero) {
  Core c = random_core(3, 2, 1, 4, 8, 2);  // positions 2, 3, 4
  c.mask.assign(3 * 8, 0);
  for (int64_t j = 0; j < 8; ++j) c.mask[static_cast<size_t>(8 + j)] = -kInf;  // row 1
  for (int64_t j = 0; j <= 4; ++j) c.mask[static_cast<size_t>(16 + j)] = -kInf;  // row 2 up to 4
  for (int64_t d = 0; d < 4; ++d) c.k[at(c, 0, 0, d)] = kNaN;  // live only for row 0
  const std::vector<double> o = c.run();
  for (size_t k = 0; k < 8; ++k) EXPECT_TRUE(std::isnan(o[k])) << k;
  for (size_t k = 8; k < o.size(); ++k) {
    EXPECT_EQ(o[k], 0) << k;
    EXPECT_FALSE(std::signbit(o[k])) << k;
  }
}

TEST(GoldenAttention, NanInLivePositionPropagatesToItsHeadsOnly) {
  Core c = random_core(2, 4, 2, 4, 8, 3);  // positions 3, 4; heads 0,1 -> g0, 2,3 -> g1
  const std::vector<double> clean = c.run();
  c.k[at(c, 1, 4, 2)] = kNaN;  // live for query 1 only, kv head 1
  c.v[at(c, 0, 0, 3)] = kNaN;  // live for both, kv head 0, dim 3
  const std::vector<double> o = c.run();
  for (int64_t t = 0; t < 2; ++t) {
    for (int64_t h = 0; h < 4; ++h) {
      for (int64_t d = 0; d < 4; ++d) {
        const size_t k = static_cast<size_t>((t * 4 + h) * 4 + d);
        const bool k_nan = t == 1 && h >= 2, v_nan = h < 2 && d == 3;
        if (k_nan || v_nan) {
          EXPECT_TRUE(std::isnan(o[k])) << t << h << d;
        } else {
          EXPECT_EQ(o[k], clean[k]) << t << h << d;
        }
      }
    }
  }
  // A NaN in v stays even where its weight underflows to 0.
  Core u = random_core(1, 1, 1, 2, 2, 1);
  u.q = {1000, 0};
  u.k = {-1, 0, 1, 0};  // s0 − s1 = −2000/√2: e0 = 0
  u.v = {kNaN, 1, 2, 3};
  const std::vector<double> ou = u.run();
  EXPECT_TRUE(std::isnan(ou[0]));
  EXPECT_EQ(ou[1], 3);
}

TEST(GoldenAttention, MaxSubtractionKeepsHugeLogitsExact) {
  if (std::numeric_limits<long double>::max_exponent < 16384) {
    GTEST_SKIP() << "long double has no wider exponent here";
  }
  // Logits in the thousands: exp overflows fp16 (11.09), fp32 (88.7) and double (709.8); long
  // double holds exp(±3000) without any subtraction.
  const int64_t Dh = 16, S = 40;
  Core c = random_core(1, 1, 1, Dh, S, S - 1);
  for (double& x : c.q) x *= 60;
  for (double& x : c.k) x *= 60;
  for (double& x : c.q) x = std::round(x);  // exact products in long double
  const std::vector<double> o = c.run();
  std::vector<long double> e(S);
  long double l = 0;
  for (int64_t j = 0; j < S; ++j) {
    long double dot = 0;
    for (int64_t d = 0; d < Dh; ++d) dot += static_cast<long double>(c.q[d]) * c.k[at(c, 0, j, d)];
    e[j] = std::exp(dot / std::sqrt(static_cast<long double>(Dh)));
    l += e[j];
  }
  double max_logit = 0;
  for (int64_t j = 0; j < S; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < Dh; ++d) dot += c.q[d] * c.k[at(c, 0, j, d)];
    max_logit = std::max(max_logit, std::fabs(dot / 4));
  }
  ASSERT_GT(max_logit, 800);
  for (int64_t d = 0; d < Dh; ++d) {
    long double acc = 0;
    for (int64_t j = 0; j < S; ++j) acc += e[j] * c.v[at(c, 0, j, d)];
    const auto want = static_cast<double>(acc / l);
    ASSERT_TRUE(std::isfinite(o[d]));
    EXPECT_NEAR(o[d], want, 1e-12 * (1 + std::fabs(want))) << d;
  }
}

TEST(GoldenAttention, RejectsBadArguments) {
  Core c = random_core(1, 4, 3, 2, 4, 0);
  EXPECT_THROW(c.run(), std::invalid_argument);  // 4 % 3
  c = random_core(1, 2, 1, 2, 4, 4);
  EXPECT_THROW(c.run(), std::invalid_argument);  // position 4 >= S_max
  c = random_core(1, 2, 1, 2, 4, 1);
  c.mask.assign(4, kNaN);
  EXPECT_THROW(c.run(), std::invalid_argument);
  try {
    c = random_core(1, 2, 1, 2, 4, -1);
    c.run();
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("positions[0]"), std::string::npos) << e.what();
  }
}

// --- the fused op ---

struct Fused {
  int64_t T, D, S;
  QkvAttentionParams p;
  std::vector<double> x, w_qkv, w_o, k_cache, v_cache, mask;
};

Fused random_fused(int64_t T, int64_t D, int64_t S, QkvAttentionParams p) {
  const int64_t rows = (p.heads + 2 * p.kv_heads) * p.head_dim;
  Fused f{T, D, S, p, {}, {}, {}, {}, {}, {}};
  f.x = wave(static_cast<size_t>(T * D), 0.91, 0.4);
  f.w_qkv = wave(static_cast<size_t>(rows * D), 0.37, 0.5);
  for (double& w : f.w_qkv) w /= std::sqrt(static_cast<double>(D));
  f.w_o = wave(static_cast<size_t>(D * p.heads * p.head_dim), 1.13, 0.6);
  f.k_cache = wave(static_cast<size_t>(p.kv_heads * S * p.head_dim), 0.29, 0.7);
  f.v_cache = wave(static_cast<size_t>(p.kv_heads * S * p.head_dim), 0.61, 0.8);
  return f;
}

std::vector<double> run_fused(Fused& f) {
  std::vector<double> y(static_cast<size_t>(f.T * f.D));
  qkv_attention(f.x.data(), f.w_qkv.data(), f.w_o.data(), f.k_cache.data(), f.v_cache.data(),
                f.mask.empty() ? nullptr : f.mask.data(), f.T, f.D, f.S, f.p, y.data());
  return y;
}

// The composition written out here: projection, golden::rope, cache write, core, projection.
struct ByHand {
  std::vector<double> y, k_cache, v_cache, k_new, v_new;
};

ByHand by_hand(const Fused& f) {
  const int64_t T = f.T, D = f.D, Hq = f.p.heads, Hkv = f.p.kv_heads, Dh = f.p.head_dim;
  const int64_t rows = (Hq + 2 * Hkv) * Dh;
  std::vector<double> q(static_cast<size_t>(T * Hq * Dh));
  ByHand r{{}, f.k_cache, f.v_cache, std::vector<double>(static_cast<size_t>(T * Hkv * Dh)),
           std::vector<double>(static_cast<size_t>(T * Hkv * Dh))};
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t row = 0; row < rows; ++row) {
      double acc = 0;
      for (int64_t c = 0; c < D; ++c) acc += f.x[t * D + c] * f.w_qkv[row * D + c];
      if (row < Hq * Dh) {
        q[t * Hq * Dh + row] = acc;
      } else if (row < (Hq + Hkv) * Dh) {
        r.k_new[t * Hkv * Dh + row - Hq * Dh] = acc;
      } else {
        r.v_new[t * Hkv * Dh + row - (Hq + Hkv) * Dh] = acc;
      }
    }
  }
  std::vector<int64_t> pos;
  for (int64_t t = 0; t < T; ++t) pos.push_back(f.p.pos + t);
  rope(q.data(), pos.data(), T, Hq, Dh, Dh, f.p.theta, f.p.style, q.data());
  rope(r.k_new.data(), pos.data(), T, Hkv, Dh, Dh, f.p.theta, f.p.style, r.k_new.data());
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t g = 0; g < Hkv; ++g) {
      for (int64_t d = 0; d < Dh; ++d) {
        r.k_cache[(g * f.S + pos[t]) * Dh + d] = r.k_new[(t * Hkv + g) * Dh + d];
        r.v_cache[(g * f.S + pos[t]) * Dh + d] = r.v_new[(t * Hkv + g) * Dh + d];
      }
    }
  }
  std::vector<double> o(q.size());
  attention_core(q.data(), r.k_cache.data(), r.v_cache.data(), pos.data(),
                 f.mask.empty() ? nullptr : f.mask.data(), T, Hq, Hkv, Dh, f.S, o.data());
  r.y.resize(static_cast<size_t>(T * D));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t c = 0; c < D; ++c) {
      double acc = 0;
      for (int64_t i = 0; i < Hq * Dh; ++i) acc += o[t * Hq * Dh + i] * f.w_o[c * Hq * Dh + i];
      r.y[t * D + c] = acc;
    }
  }
  return r;
}

TEST(GoldenQkvAttention, EqualsTheCompositionByHand) {
  for (RopeStyle style : {RopeStyle::interleaved, RopeStyle::half}) {
    QkvAttentionParams p{5, 6, 2, 8, 500000, style};
    Fused f = random_fused(3, 12, 10, p);
    f.mask.assign(3 * 10, 0);
    f.mask[1 * 10 + 2] = -kInf;
    const ByHand want = by_hand(f);
    EXPECT_EQ(run_fused(f), want.y);
    EXPECT_EQ(f.k_cache, want.k_cache);
    EXPECT_EQ(f.v_cache, want.v_cache);
  }
  // And on generated cases of every class (NaN-aware: nan_inf has NaN outputs).
  for (InputClass cls : all_input_classes()) {
    for (const Case& c : qkv_attention_cases(cls, DType::float32)) {
      if (c.inputs.count("w_qkv_scale")) continue;  // int8 weights: GoldenQkvAttention.Int8*
      Fused f{c.dims.at("T"), c.dims.at("D"), c.dims.at("S_max"), qkv_attention_params(c),
              c.inputs.at("x").values, c.inputs.at("w_qkv").values, c.inputs.at("w_o").values,
              c.inputs.at("k_cache").values, c.inputs.at("v_cache").values,
              c.inputs.count("mask") ? c.inputs.at("mask").values : std::vector<double>{}};
      const ByHand want = by_hand(f);
      const QkvAttentionResult got = qkv_attention_reference(c);
      ASSERT_TRUE(all_same(got.y, want.y)) << cls << " / " << c.name;
      ASSERT_TRUE(all_same(got.k_cache, want.k_cache)) << cls << " / " << c.name;
      ASSERT_TRUE(all_same(got.v_cache, want.v_cache)) << cls << " / " << c.name;
    }
  }
}

TEST(GoldenQkvAttention, WritesRotatedKAndPlainVAtTheirPositionsOnly) {
  QkvAttentionParams p{4, 4, 2, 6, 10000, RopeStyle::half};
  Fused f = random_fused(3, 10, 9, p);  // writes positions 4, 5, 6
  f.k_cache[0] = kNaN;                  // old rows stay as they were, NaN or not
  f.v_cache[f.v_cache.size() - 1] = kNaN;
  const Fused before = f;
  const ByHand want = by_hand(f);
  run_fused(f);
  for (int64_t g = 0; g < 2; ++g) {
    for (int64_t j = 0; j < 9; ++j) {
      for (int64_t d = 0; d < 6; ++d) {
        const size_t k = static_cast<size_t>((g * 9 + j) * 6 + d);
        if (j >= 4 && j < 7) {
          const size_t n = static_cast<size_t>(((j - 4) * 2 + g) * 6 + d);
          EXPECT_EQ(f.k_cache[k], want.k_new[n]);
          EXPECT_EQ(f.v_cache[k], want.v_new[n]);
        } else {
          EXPECT_EQ(std::memcmp(&f.k_cache[k], &before.k_cache[k], sizeof(double)), 0) << j;
          EXPECT_EQ(std::memcmp(&f.v_cache[k], &before.v_cache[k], sizeof(double)), 0) << j;
        }
      }
    }
  }
  // v is the plain projection: with w_v rows = unit vectors, v = x columns.
  QkvAttentionParams one{0, 1, 1, 2, 10000, RopeStyle::interleaved};
  Fused u = random_fused(1, 2, 1, one);
  u.w_qkv = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
  u.x = {3, -4};
  const std::vector<double> y = run_fused(u);
  EXPECT_EQ(u.k_cache, (std::vector<double>{3, -4}));  // position 0: no rotation
  EXPECT_EQ(u.v_cache, (std::vector<double>{3, -4}));
  EXPECT_EQ(y.size(), 2u);
}

TEST(GoldenQkvAttention, GarbageAtAndPastPosNeverLeaks) {
  QkvAttentionParams p{3, 4, 2, 4, 10000, RopeStyle::interleaved};
  Fused f = random_fused(2, 8, 8, p);
  Fused g = f;
  for (int64_t gg = 0; gg < 2; ++gg) {
    for (int64_t j = 3; j < 8; ++j) {
      for (int64_t d = 0; d < 4; ++d) {
        g.k_cache[static_cast<size_t>((gg * 8 + j) * 4 + d)] = kNaN;
        g.v_cache[static_cast<size_t>((gg * 8 + j) * 4 + d)] = j % 2 ? kInf : kNaN;
      }
    }
  }
  EXPECT_EQ(run_fused(g), run_fused(f));
}

TEST(GoldenQkvAttention, RejectsBadArguments) {
  QkvAttentionParams p{0, 4, 2, 4, 10000, RopeStyle::half};
  const auto message = [&](QkvAttentionParams q, int64_t T, int64_t S) -> std::string {
    Fused f = random_fused(T, 4, S, q);
    try {
      run_fused(f);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message(p, 2, 4), "");
  QkvAttentionParams bad = p;
  bad.kv_heads = 3;
  EXPECT_NE(message(bad, 1, 4).find("kv_heads"), std::string::npos);
  bad = p;
  bad.pos = 3;
  EXPECT_NE(message(bad, 2, 4).find("S_max"), std::string::npos);  // position 4 >= 4
  EXPECT_EQ(message(bad, 1, 4), "");
  bad = p;
  bad.head_dim = 3;
  EXPECT_NE(message(bad, 1, 4).find("head_dim"), std::string::npos);
  bad = p;
  bad.theta = 0.5;
  EXPECT_NE(message(bad, 1, 4).find("theta"), std::string::npos);
  bad = p;
  bad.pos = -1;
  EXPECT_NE(message(bad, 1, 4).find("pos"), std::string::npos);
  Case c;
  c.params = {{"style", "neox"}};
  EXPECT_THROW(qkv_attention_params(c), std::invalid_argument);
  c.params = {{"pos", "1e3"}};
  EXPECT_THROW(qkv_attention_params(c), std::invalid_argument);
}

// --- cases ---

// Golden multiply-adds of a case.
double core_cost(const Case& c) {
  double live = 0;
  for (double p : c.inputs.at("positions").values) live += p + 1;
  return 2 * live * static_cast<double>(c.dims.at("Hq") * c.dims.at("Dh"));
}

double fused_cost(const Case& c) {
  const auto d = [&](const char* n) { return static_cast<double>(c.dims.at(n)); };
  const double pos = std::stod(c.params.at("pos"));
  double live = 0;
  for (int64_t t = 0; t < c.dims.at("T"); ++t) live += pos + static_cast<double>(t) + 1;
  return d("T") * d("D") * (d("QKV") + d("HqDh")) + 2 * live * d("Hq") * d("Dh");
}

void check_cases_well_formed(bool fused) {
  for (DType t : {DType::float32, DType::float16, DType::float64}) {
    for (InputClass cls : all_input_classes()) {
      const std::vector<Case> a = fused ? qkv_attention_cases(cls, t) : attention_cases(cls, t);
      const std::vector<Case> b = fused ? qkv_attention_cases(cls, t) : attention_cases(cls, t);
      SCOPED_TRACE(cls);
      expect_same_cases(a, b);
      double cost = 0;
      for (const Case& c : a) {
        SCOPED_TRACE(c.name);
        for (const auto& [name, arr] : c.inputs) {
          const bool int8 = c.inputs.count("w_qkv_scale") > 0;
          const bool weight = name == "w_qkv" || name == "w_o";
          EXPECT_EQ(int8, c.name.rfind("w=int8 ", 0) == 0);
          const DType want = name == "positions"                                ? DType::int32
                             : name == "mask" || name.find("_scale") != std::string::npos ? DType::float32
                             : weight && int8                                    ? DType::int8
                                                                                 : t;
          EXPECT_EQ(arr.dtype, want) << name;
          EXPECT_EQ(static_cast<int64_t>(arr.values.size()), arr.size()) << name;
          for (double v : arr.values) ASSERT_TRUE(representable(v, arr.dtype)) << name;
        }
        if (c.inputs.count("mask")) {
          for (double v : c.inputs.at("mask").values) ASSERT_TRUE(v == 0 || v == -kInf);
          EXPECT_EQ(c.inputs.at("mask").shape,
                    (std::vector<int64_t>{c.dims.at("T"), c.dims.at("S_max")}));
        }
        const int64_t T = c.dims.at("T"), Hq = c.dims.at("Hq"), Hkv = c.dims.at("Hkv"),
                      Dh = c.dims.at("Dh"), S = c.dims.at("S_max");
        const std::vector<int64_t> cache = {Hkv, S, Dh};
        EXPECT_EQ(c.inputs.at("k_cache").shape, cache);
        EXPECT_EQ(c.inputs.at("v_cache").shape, cache);
        if (fused) {
          const int64_t D = c.dims.at("D");
          const QkvAttentionParams p = qkv_attention_params(c);
          EXPECT_EQ(c.dims.size(), 8u);
          EXPECT_EQ(c.params.size(), 6u);
          EXPECT_EQ(p.heads, Hq);
          EXPECT_EQ(p.kv_heads, Hkv);
          EXPECT_EQ(p.head_dim, Dh);
          EXPECT_EQ(number_text(p.theta), c.params.at("theta"));
          EXPECT_LE(p.pos + T, S);
          EXPECT_EQ(c.dims.at("QKV"), (Hq + 2 * Hkv) * Dh);
          EXPECT_EQ(c.dims.at("HqDh"), Hq * Dh);
          EXPECT_EQ(c.inputs.at("x").shape, (std::vector<int64_t>{T, D}));
          EXPECT_EQ(c.inputs.at("w_qkv").shape, (std::vector<int64_t>{(Hq + 2 * Hkv) * Dh, D}));
          EXPECT_EQ(c.inputs.at("w_o").shape, (std::vector<int64_t>{D, Hq * Dh}));
          cost += fused_cost(c);
        } else {
          EXPECT_EQ(c.dims.size(), 5u);
          EXPECT_TRUE(c.params.empty());
          EXPECT_EQ(c.inputs.at("q").shape, (std::vector<int64_t>{T, Hq, Dh}));
          EXPECT_EQ(c.inputs.at("positions").shape, (std::vector<int64_t>{T}));
          for (double p : c.inputs.at("positions").values) {
            ASSERT_TRUE(p >= 0 && p < static_cast<double>(S)) << p;
          }
          cost += core_cost(c);
        }
      }
      EXPECT_LE(cost, 2e8) << cls;
    }
  }
  const auto gen = fused ? qkv_attention_cases : attention_cases;
  EXPECT_TRUE(gen(InputClass::normal, DType::int8).empty());
}

TEST(GoldenAttentionCases, DeterministicAndWellFormed) { check_cases_well_formed(false); }
TEST(GoldenQkvAttentionCases, DeterministicAndWellFormed) { check_cases_well_formed(true); }

TEST(GoldenAttentionCases, BoundaryAndShapeCoverTheIssue) {
  for (bool fused : {false, true}) {
    const auto gen = fused ? qkv_attention_cases : attention_cases;
    const std::vector<Case> boundary = gen(InputClass::boundary, DType::float16);
    bool len1 = false, full = false, mha = false, gqa8 = false, mqa = false;
    for (const Case& c : boundary) {
      const int64_t Hq = c.dims.at("Hq"), Hkv = c.dims.at("Hkv"), S = c.dims.at("S_max");
      mha |= Hq == Hkv;
      gqa8 |= Hq == 8 * Hkv && Hkv > 1;
      mqa |= Hkv == 1 && Hq > 1;
      len1 |= S == 1;
      if (fused) {
        full |= std::stoll(c.params.at("pos")) + c.dims.at("T") == S;
      } else {
        for (double p : c.inputs.at("positions").values) full |= p == static_cast<double>(S - 1);
      }
    }
    EXPECT_TRUE(len1 && full && mha && gqa8 && mqa) << fused;
    const std::set<int64_t> dh = dim_values(boundary, "Dh");
    EXPECT_TRUE(dh.count(64) && dh.count(128)) << fused;
    const std::vector<Case> shape = gen(InputClass::shape, DType::float32);
    const std::set<int64_t> T = dim_values(shape, "T");
    EXPECT_TRUE(T.count(1) && T.count(7) && T.count(64)) << fused;
    for (int64_t s : dim_values(shape, "S_max")) EXPECT_NE(s % 64, 0) << s;
  }
}

// The inputs of a case with every cache row that the contract says is not read (past each
// query's position, or masked for it) set to 0: the golden must not change.
TEST(GoldenAttentionCases, NanInfNeverLeaksFromUnreadRows) {
  for (DType t : {DType::float32, DType::float16}) {
    bool some_nan = false, some_zero_row = false, unread_nonfinite = false;
    for (const Case& c : attention_cases(InputClass::nan_inf, t)) {
      SCOPED_TRACE(c.name);
      const int64_t T = c.dims.at("T"), Hq = c.dims.at("Hq"), Dh = c.dims.at("Dh"),
                    S = c.dims.at("S_max"), Hkv = c.dims.at("Hkv");
      const std::vector<double> o = attention_reference(c);
      const std::vector<double>& pos = c.inputs.at("positions").values;
      const std::vector<double>* mask = c.inputs.count("mask") ? &c.inputs.at("mask").values : nullptr;
      // A row read by no query at all.
      Case clean = c;
      for (int64_t j = 0; j < S; ++j) {
        bool read = false;
        for (int64_t q = 0; q < T; ++q) {
          read |= static_cast<double>(j) <= pos[q] && (!mask || (*mask)[q * S + j] == 0);
        }
        if (read) continue;
        for (int64_t g = 0; g < Hkv; ++g) {
          for (int64_t d = 0; d < Dh; ++d) {
            const size_t k = static_cast<size_t>((g * S + j) * Dh + d);
            for (const char* n : {"k_cache", "v_cache"}) {
              unread_nonfinite |= !std::isfinite(clean.inputs.at(n).values[k]);
              clean.inputs.at(n).values[k] = 0;
            }
          }
        }
      }
      ASSERT_TRUE(all_same(attention_reference(clean), o));
      for (int64_t row = 0; row < T * Hq; ++row) {
        bool zero = true;
        for (int64_t d = 0; d < Dh; ++d) {
          some_nan |= std::isnan(o[row * Dh + d]);
          zero &= o[row * Dh + d] == 0;
        }
        some_zero_row |= zero;
      }
    }
    EXPECT_TRUE(some_nan && some_zero_row && unread_nonfinite);
    bool fused_nan = false, fused_zero_row = false;
    for (const Case& c : qkv_attention_cases(InputClass::nan_inf, t)) {
      SCOPED_TRACE(c.name);
      const int64_t T = c.dims.at("T"), D = c.dims.at("D"), S = c.dims.at("S_max");
      const int64_t pos = std::stoll(c.params.at("pos"));
      const std::vector<double> y = qkv_attention_reference(c).y;
      Case clean = c;
      const std::vector<double>* mask = c.inputs.count("mask") ? &c.inputs.at("mask").values : nullptr;
      for (const char* n : {"k_cache", "v_cache"}) {
        Array& a = clean.inputs.at(n);
        const int64_t Dh = a.shape[2];
        for (int64_t g = 0; g < a.shape[0]; ++g) {
          for (int64_t j = 0; j < S; ++j) {
            bool masked_for_all = mask != nullptr;
            for (int64_t q = 0; q < T && mask; ++q) masked_for_all &= (*mask)[q * S + j] != 0;
            if (j < pos && !masked_for_all) continue;
            for (int64_t d = 0; d < Dh; ++d) a.values[static_cast<size_t>((g * S + j) * Dh + d)] = 0;
          }
        }
      }
      ASSERT_TRUE(all_same(qkv_attention_reference(clean).y, y));
      for (int64_t row = 0; row < T; ++row) {
        bool zero = true;
        for (int64_t k = 0; k < D; ++k) {
          fused_nan |= std::isnan(y[row * D + k]);
          zero &= y[row * D + k] == 0;
        }
        fused_zero_row |= zero;
      }
    }
    EXPECT_TRUE(fused_nan && fused_zero_row);
  }
}

TEST(GoldenAttentionCases, OverflowNeedsMaxSubtractionAndStaysFinite) {
  for (DType t : {DType::float16, DType::float32}) {
    double max_logit = 0, max_v = 0;
    for (const Case& c : attention_cases(InputClass::overflow, t)) {
      SCOPED_TRACE(c.name);
      const int64_t T = c.dims.at("T"), Hq = c.dims.at("Hq"), Hkv = c.dims.at("Hkv"),
                    Dh = c.dims.at("Dh"), S = c.dims.at("S_max");
      const std::vector<double>& q = c.inputs.at("q").values;
      const std::vector<double>& k = c.inputs.at("k_cache").values;
      for (int64_t tt = 0; tt < T; ++tt) {
        const auto p = static_cast<int64_t>(c.inputs.at("positions").values[tt]);
        for (int64_t h = 0; h < Hq; ++h) {
          const int64_t g = h / (Hq / Hkv);
          for (int64_t j = 0; j <= p; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < Dh; ++d) dot += q[(tt * Hq + h) * Dh + d] * k[(g * S + j) * Dh + d];
            max_logit = std::max(max_logit, std::fabs(dot) / std::sqrt(static_cast<double>(Dh)));
            for (int64_t d = 0; d < Dh; ++d) {
              max_v = std::max(max_v, std::fabs(c.inputs.at("v_cache").values[(g * S + j) * Dh + d]));
            }
          }
        }
      }
      for (double v : attention_reference(c)) ASSERT_TRUE(std::isfinite(round_to_dtype(v, t)));
    }
    EXPECT_GT(max_logit, 709.8) << "past double's exp range";
    EXPECT_GE(max_v, 60000);
    for (const Case& c : qkv_attention_cases(InputClass::overflow, t)) {
      for (double v : qkv_attention_reference(c).y) {
        ASSERT_TRUE(std::isfinite(round_to_dtype(v, t))) << c.name;
      }
    }
  }
}

TEST(GoldenAttentionCases, FiniteOutsideTheNanInfClass) {
  for (DType t : {DType::float16, DType::float32}) {
    for (InputClass cls : {InputClass::normal, InputClass::boundary, InputClass::shape}) {
      for (const Case& c : attention_cases(cls, t)) {
        for (double v : attention_reference(c)) {
          ASSERT_TRUE(std::isfinite(round_to_dtype(v, t))) << cls << " / " << c.name;
        }
      }
      for (const Case& c : qkv_attention_cases(cls, t)) {
        for (double v : qkv_attention_reference(c).y) {
          ASSERT_TRUE(std::isfinite(round_to_dtype(v, t))) << cls << " / " << c.name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace npukit::golden
