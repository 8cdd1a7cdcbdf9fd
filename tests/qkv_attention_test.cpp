// The fused qkv_attention op through the registry: the in/out cache role, the errors its
// entry raises, and the cache update (only positions pos ... pos+T−1 change, in place).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "golden/attention.h"
#include "kernels/linear_f32_wf16_f32.h"
#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/gpu_memory.h"
#include "runtime/kernel_call.h"
#include "runtime/ops/weight_streams.h"
#include "runtime/qkv_attention_int8.h"
#include "runtime/registry.h"
#include "tests/qkv_layer.h"

namespace npukit {
namespace {

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

// The one-token projection with fp16 weights reads a block's rows one after the other or
// together (`row_streams`, which the runtime sets per CPU): the same sums in the same order,
// so the same bits on any host, and the version a CPU never picks is still checked. K with
// a tail past the 32 lanes; N past a 4-row block and a 16-row task.
TEST(QkvAttention, OneTokenRowStreamsGiveTheSameBits) {
  const int64_t K = 300, N = 39;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(K);
  std::vector<uint16_t> w(N * K);
  for (float& e : x) e = u(rng);
  for (uint16_t& e : w) e = static_cast<uint16_t>(0x3000 + (rng() % 0x1000)) | (rng() % 2 ? 0x8000 : 0);
  const TensorView xv{x.data(), DType::float32, {1, K}, {}}, wv{w.data(), DType::float16, {N, K}, {}};
  Call call;
  call.target = "cpu";
  std::vector<float> together(N, -1.0f), in_turn(N, -2.0f);
  const auto& kernel = kernels::linear_f32_wf16_f32;
  call_kernel(kernel, call, In{xv}, In{wv}, true, Out{TensorView{together.data(), DType::float32, {1, N}, {}}});
  call_kernel(kernel, call, In{xv}, In{wv}, false, Out{TensorView{in_turn.data(), DType::float32, {1, N}, {}}});
  EXPECT_EQ(std::memcmp(together.data(), in_turn.data(), N * sizeof(float)), 0);
  for (int64_t n = 0; n < N; ++n) EXPECT_TRUE(std::isfinite(together[n]) && together[n] != -1.0f) << "row " << n;
}

TEST(QkvAttention, OnlyTheMeasuredXeonReadsWeightRowsTogether) {
  CpuFeatures amd, intel_client, xeon_amx;
  intel_client.intel = true;
  xeon_amx.intel = xeon_amx.amx_tile = true;
  EXPECT_FALSE(one_token_row_streams(amd));
  EXPECT_FALSE(one_token_row_streams(intel_client));
  EXPECT_TRUE(one_token_row_streams(xeon_amx));
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

// The same layer with int8 weights and per-channel scales spanning three orders of magnitude.
struct Int8Layer : Layer {
  std::vector<int8_t> wq, wo;
  std::vector<float> sq, so;
  Int8Layer(int64_t T_, int64_t S_) : Layer(T_, S_) {
    const int64_t rows = (Hq + 2 * Hkv) * Dh;
    for (size_t i = 0; i < w_qkv.size(); ++i) wq.push_back(static_cast<int8_t>(std::lround(w_qkv[i] * 500) % 128));
    for (size_t i = 0; i < w_o.size(); ++i) wo.push_back(static_cast<int8_t>(std::lround(w_o[i] * 600) % 128));
    for (int64_t n = 0; n < rows; ++n) sq.push_back(std::ldexp(1.0f, -9 + static_cast<int>(n % 10)) / 16);
    for (int64_t n = 0; n < D; ++n) so.push_back(std::ldexp(1.0f, -9 + static_cast<int>(n % 10)) / 8);
  }
  TensorMap views() {
    auto v = Layer::views();
    v["w_qkv"] = {wq.data(), DType::int8, {(Hq + 2 * Hkv) * Dh, D}, {}};
    v["w_o"] = {wo.data(), DType::int8, {D, Hq * Dh}, {}};
    v["w_qkv_scale"] = {sq.data(), DType::float32, {(Hq + 2 * Hkv) * Dh}, {}};
    v["w_o_scale"] = {so.data(), DType::float32, {D}, {}};
    return v;
  }
};

TEST(QkvAttentionInt8, ScaleErrorsNameTheArgumentValueAndRule) {
  Int8Layer l(2, 8);
  auto v = l.views();
  v.erase("w_o_scale");
  std::string e = error_of([&] { bind_call(op(), "cpu", v, l.params(0)); });
  EXPECT_NE(e.find("w_o is int8 but input w_o_scale is missing"), std::string::npos) << e;
  v = l.views();
  l.sq[5] = -0.5f;
  e = error_of([&] { bind_call(op(), "cpu", v, l.params(0)); });
  EXPECT_NE(e.find("w_qkv_scale[5] = -0.5: every scale of int8 weights must be finite and > 0"), std::string::npos) << e;
  l.sq[5] = std::numeric_limits<float>::quiet_NaN();
  e = error_of([&] { bind_call(op(), "cpu", v, l.params(0)); });
  EXPECT_NE(e.find("w_qkv_scale[5] = nan"), std::string::npos) << e;
  l.sq[5] = 0;
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, l.params(0)); }).find("w_qkv_scale[5] = 0"), std::string::npos);
  l.sq[5] = 1;
  // Scales with float weights, and int8 with float weights mixed.
  Layer f(2, 8);
  v = f.views();
  v["w_qkv_scale"] = l.views().at("w_qkv_scale");
  e = error_of([&] { bind_call(op(), "cpu", v, f.params(0)); });
  EXPECT_NE(e.find("input w_qkv_scale is given but w_qkv is float32"), std::string::npos) << e;
  v = l.views();
  v["w_o"] = f.views().at("w_o");
  e = error_of([&] { bind_call(op(), "cpu", v, l.params(0)); });
  EXPECT_NE(e.find("w_o"), std::string::npos) << e;
  EXPECT_NE(e.find("w_qkv"), std::string::npos) << e;
}

TEST(QkvAttentionInt8, KBeyondTheExactInt32LimitIsRejected) {
  // D = 131072 > int8_k_limit(0) = 131071; Hq = Hkv = 1, Dh = 2.
  const int64_t D = 131072, T = 1, S = 2;
  std::vector<float> x(D, 1.0f), k(2 * 2, 0.0f), v(4, 0.0f), y(D), sq(6, 1.0f), so(D, 1.0f);
  std::vector<int8_t> wq(6 * D, 1), wo(D * 2, 1);
  TensorMap t = {{"x", {x.data(), DType::float32, {T, D}, {}}},
                                         {"w_qkv", {wq.data(), DType::int8, {6, D}, {}}},
                                         {"w_o", {wo.data(), DType::int8, {D, 2}, {}}},
                                         {"w_qkv_scale", {sq.data(), DType::float32, {6}, {}}},
                                         {"w_o_scale", {so.data(), DType::float32, {D}, {}}},
                                         {"k_cache", {k.data(), DType::float32, {1, S, 2}, {}}},
                                         {"v_cache", {v.data(), DType::float32, {1, S, 2}, {}}},
                                         {"y", {y.data(), DType::float32, {T, D}, {}}}};
  const std::string e = error_of([&] { bind_call(op(), "cpu", t, {{"pos", "0"}}); });
  EXPECT_NE(e.find("D (x's columns, the QKV projection's K) = 131072 exceeds 131071"), std::string::npos) << e;
}

TEST(QkvAttentionInt8, ZeroAndNaNTokensFollowTheQuantizationContract) {
  for (const char* tier : {"cpu", "cpu:avx2", "cpu:sse41"}) {
    Int8Layer l(3, 10);
    const int64_t pos = 4;
    for (int64_t c = 0; c < l.D; ++c) l.x[static_cast<size_t>(1 * l.D + c)] = 0;  // token 1: zeros
    run_call(bind_call(op(), tier, l.views(), l.params(pos)));
    for (int64_t g = 0; g < l.Hkv; ++g) {
      for (int64_t d = 0; d < l.Dh; ++d) {
        const size_t at = static_cast<size_t>((g * l.S + pos + 1) * l.Dh + d);
        EXPECT_EQ(l.k[at], 0.0f) << tier;  // scale 0: q, k and v exactly 0
        EXPECT_EQ(l.v[at], 0.0f) << tier;
      }
    }
    for (float v : l.y) EXPECT_TRUE(std::isfinite(v)) << tier;
    // A NaN in x[1, 3]: token 1's k and v rows are all NaN; queries 1 and 2 read them.
    Int8Layer n(3, 10);
    n.x[static_cast<size_t>(1 * n.D + 3)] = std::numeric_limits<float>::quiet_NaN();
    run_call(bind_call(op(), tier, n.views(), n.params(pos)));
    for (int64_t d = 0; d < n.Dh; ++d) {
      EXPECT_TRUE(std::isnan(n.k[static_cast<size_t>((pos + 1) * n.Dh + d)])) << tier;
      EXPECT_TRUE(std::isnan(n.v[static_cast<size_t>((pos + 1) * n.Dh + d)])) << tier;
      EXPECT_TRUE(std::isfinite(n.k[static_cast<size_t>(pos * n.Dh + d)])) << tier;
    }
    for (int64_t t = 0; t < n.T; ++t) {
      for (int64_t c = 0; c < n.D; ++c) {
        EXPECT_EQ(std::isnan(n.y[static_cast<size_t>(t * n.D + c)]), t >= 1) << tier << " y[" << t << ", " << c << "]";
      }
    }
  }
}

TEST(QkvAttentionInt8, PackedOnceEqualsTheRegistryCallBitForBit) {
  for (int64_t T : {1, 5}) {
    Int8Layer a(T, 12), b(T, 12);
    const Call ca = bind_call(op(), "cpu", a.views(), a.params(3));
    run_call(ca);
    const Call cb = bind_call(op(), "cpu", b.views(), b.params(3));
    const QkvInt8Weights w = pack_qkv_int8_weights(cb);
    qkv_attention_int8(cb, w);
    EXPECT_EQ(std::memcmp(a.y.data(), b.y.data(), a.y.size() * 4), 0) << T;
    EXPECT_EQ(std::memcmp(a.k.data(), b.k.data(), a.k.size() * 4), 0) << T;
    EXPECT_EQ(std::memcmp(a.v.data(), b.v.data(), a.v.size() * 4), 0) << T;
    // Packed weights of another shape are refused, not read out of bounds.
    Int8Layer c(T, 12);
    c.Hq = 2;
    c.wo.resize(static_cast<size_t>(c.D * 2 * c.Dh));
    c.wq.resize(static_cast<size_t>((2 + 4) * c.Dh * c.D));
    c.sq.resize(static_cast<size_t>((2 + 4) * c.Dh));
    auto p = c.params(3);
    p["heads"] = "2";
    const Call cc = bind_call(op(), "cpu", c.views(), p);
    EXPECT_NE(error_of([&] { qkv_attention_int8(cc, w); }).find("do not fit"), std::string::npos);
  }
}

// On a GPU target a prepared op's packed int8 weights are uploaded at its first run and read
// from the device after that: their host copies are scribbled over between two runs on the
// same inputs, and the second equals the first bit for bit. Every intermediate (quantized
// rows, accumulators, q, o) lives in device scratch.
TEST(QkvAttentionInt8, PreparedWeightsStayOnTheDeviceOnGpu) {
  for (int64_t T : {1, 5}) {
    Int8Layer first(T, 12), second(T, 12);
    PackedConstants constants;
    for (const char* name : {"w_qkv", "w_o"}) {
      PackedConstant p = op().constants.at(name)(first.views().at(name));
      p.gpu = std::make_shared<GpuConstantCopies>("gpu-opencl");
      constants[name] = std::move(p);
    }
    Call ca = bind_call(op(), "gpu-opencl", first.views(), first.params(3));
    ca.packed = &constants;
    run_call(ca);
    for (auto& [name, c] : constants) {
      EXPECT_EQ(c.gpu->uploads(), 2u) << name;  // bytes and row sums
      auto* w = static_cast<layouts::PackedInt8Weights*>(const_cast<void*>(c.value.get()));
      std::memset(w->bytes(), 0x55, w->size_bytes());
      std::fill(w->row_sums.begin(), w->row_sums.end(), 777);
    }
    Call cb = bind_call(op(), "gpu-opencl", second.views(), second.params(3));
    cb.packed = &constants;
    run_call(cb);
    EXPECT_EQ(std::memcmp(first.y.data(), second.y.data(), first.y.size() * 4), 0) << T;
    EXPECT_EQ(std::memcmp(first.k.data(), second.k.data(), first.k.size() * 4), 0) << T;
    EXPECT_EQ(std::memcmp(first.v.data(), second.v.data(), first.v.size() * 4), 0) << T;
    EXPECT_NE(first.y[0], 0.0f);
    for (auto& [name, c] : constants) EXPECT_EQ(c.gpu->uploads(), 2u) << name;
  }
}

}  // namespace
}  // namespace npukit
