// The fused qkv_attention op through the registry: the in/out cache role, the errors its
// entry raises, and the cache update (only positions pos ... pos+T−1 change, in place).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "golden/attention.h"
#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

// A small GQA layer: T tokens, D = 16, Hq = 4, Hkv = 2, Dh = 8, S_max positions, fp32.
struct Layer {
  int64_t T, S, D = 16, Hq = 4, Hkv = 2, Dh = 8;
  std::vector<float> x, w_qkv, w_o, k, v, y;
  Layer(int64_t T_, int64_t S_) : T(T_), S(S_) {
    auto fill = [](std::vector<float>& a, size_t n, float scale, int seed) {
      a.resize(n);
      for (size_t i = 0; i < n; ++i) a[i] = scale * std::sin(0.7f * float(i) + float(seed));
    };
    fill(x, T * D, 1.0f, 1);
    fill(w_qkv, (Hq + 2 * Hkv) * Dh * D, 0.25f, 2);
    fill(w_o, D * Hq * Dh, 0.2f, 3);
    fill(k, Hkv * S * Dh, 1.0f, 4);
    fill(v, Hkv * S * Dh, 1.0f, 5);
    y.assign(T * D, 0.0f);
  }
  std::map<std::string, TensorView> views() {
    return {{"x", {x.data(), DType::float32, {T, D}, {}}},
            {"w_qkv", {w_qkv.data(), DType::float32, {(Hq + 2 * Hkv) * Dh, D}, {}}},
            {"w_o", {w_o.data(), DType::float32, {D, Hq * Dh}, {}}},
            {"k_cache", {k.data(), DType::float32, {Hkv, S, Dh}, {}}},
            {"v_cache", {v.data(), DType::float32, {Hkv, S, Dh}, {}}},
            {"y", {y.data(), DType::float32, {T, D}, {}}}};
  }
  std::map<std::string, std::string> params(int64_t pos) const {
    return {{"pos", std::to_string(pos)}, {"heads", "4"}, {"kv_heads", "2"}, {"head_dim", "8"}, {"style", "half"}};
  }
};

template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(Errc::invalid_argument)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

const OpSpec& op() { return find_op("qkv_attention"); }

TEST(QkvAttention, CachesAreInOutAndReportedInPlace) {
  Layer l(3, 10);
  auto v = l.views();
  v.erase("y");
  const auto out = infer_outputs(op(), v, l.params(2));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out.at("y").in_place);
  EXPECT_EQ(out.at("y").shape, (std::vector<int64_t>{3, 16}));
  EXPECT_TRUE(out.at("k_cache").in_place);
  EXPECT_EQ(out.at("k_cache").shape, (std::vector<int64_t>{2, 10, 8}));
  EXPECT_TRUE(out.at("v_cache").in_place);
  v.erase("k_cache");
  EXPECT_NE(error_of([&] { infer_outputs(op(), v, l.params(2)); }).find("missing in/out tensor 'k_cache'"),
            std::string::npos);
}

TEST(QkvAttention, ErrorsNamePosTAndSMax) {
  Layer l(3, 10);
  const std::string e = error_of([&] { bind_call(op(), "cpu", l.views(), l.params(8)); });
  EXPECT_NE(e.find("pos = 8 with T = 3"), std::string::npos) << e;
  EXPECT_NE(e.find("S_max = 10"), std::string::npos) << e;
  auto p = l.params(0);
  p["kv_heads"] = "3";
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", l.views(), p); }).find("kv_heads = 3 but k_cache has Hkv = 2"),
            std::string::npos);
  p = l.params(0);
  p["heads"] = "3";
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", l.views(), p); }).find("heads * head_dim = 3 * 8 = 24"),
            std::string::npos);
  p = l.params(0);
  p["style"] = "neox";
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", l.views(), p); }).find("style"), std::string::npos);
}

TEST(QkvAttention, HeadsMustDivide) {
  // Hq = 3 query heads over Hkv = 2: w_qkv (3 + 4)·8 rows, w_o 3·8 columns.
  Layer l(1, 4);
  l.Hq = 3;
  l.w_qkv.resize((3 + 4) * 8 * 16);
  l.w_o.resize(16 * 24);
  auto p = l.params(0);
  p["heads"] = "3";
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", l.views(), p); }).find("heads = 3 is not a multiple of kv_heads = 2"),
            std::string::npos);
}

TEST(QkvAttention, WrittenCachesMustNotAlias) {
  Layer l(1, 4);
  auto v = l.views();
  v["v_cache"].data = l.k.data();
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, l.params(0)); }).find("in/out tensor k_cache overlaps v_cache"),
            std::string::npos);
  v = l.views();
  v["y"].data = l.k.data();
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, l.params(0)); }).find("output y overlaps input k_cache"),
            std::string::npos);
}

TEST(QkvAttention, UpdatesOnlyTheNewPositionsInPlace) {
  for (const char* tier : {"cpu", "cpu:avx2", "cpu:sse41"}) {
    for (int64_t pos : {0, 5, 7}) {  // 7: the last position of the cache (pos + T = S_max)
      Layer l(3, 10);
      const std::vector<float> k0 = l.k, v0 = l.v;
      run_call(bind_call(op(), tier, l.views(), l.params(pos)));
      for (int64_t g = 0; g < l.Hkv; ++g) {
        for (int64_t s = 0; s < l.S; ++s) {
          const bool is_new = s >= pos && s < pos + l.T;
          const size_t at = static_cast<size_t>((g * l.S + s) * l.Dh);
          EXPECT_EQ(std::memcmp(&l.k[at], &k0[at], l.Dh * 4) != 0, is_new) << tier << " pos " << pos << " g " << g << " s " << s;
          EXPECT_EQ(std::memcmp(&l.v[at], &v0[at], l.Dh * 4) != 0, is_new) << tier << " pos " << pos << " g " << g << " s " << s;
        }
      }
      // Against the golden reference, with the same starting caches.
      std::vector<double> x(l.x.begin(), l.x.end()), wq(l.w_qkv.begin(), l.w_qkv.end()), wo(l.w_o.begin(), l.w_o.end()),
          k(k0.begin(), k0.end()), v(v0.begin(), v0.end()), y(l.y.size());
      golden::QkvAttentionParams p;
      p.pos = pos;
      p.heads = l.Hq;
      p.kv_heads = l.Hkv;
      p.head_dim = l.Dh;
      golden::qkv_attention(x.data(), wq.data(), wo.data(), k.data(), v.data(), nullptr, l.T, l.D, l.S, p, y.data());
      for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(l.y[i], y[i], 1e-4 * (1 + std::fabs(y[i]))) << tier << " y[" << i << "]";
      for (size_t i = 0; i < k.size(); ++i) EXPECT_NEAR(l.k[i], k[i], 1e-4 * (1 + std::fabs(k[i]))) << tier << " k[" << i << "]";
    }
  }
}

}  // namespace
}  // namespace npukit
