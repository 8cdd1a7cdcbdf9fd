// The qkv_attention op's own GPU kernels (schedules/gpu/qkv_attention.cpp) through the
// shipped Generators on OpenCL (PoCL): the output projection (npukit_linear), the QKV
// projection with RoPE and the new cache rows (npukit_qkv_rope) and its int8 variant from
// accumulators (npukit_qkv_rope_dequant), against golden's RoPE and dequantization over
// projections summed in double here; and compiled for CUDA, the PTX accepted by ptxas.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "golden/metrics.h"
#include "golden/per_token_quant.h"
#include "golden/rope.h"
#include "golden/tolerance.h"
#include "tests/gpu_jit.h"

namespace npukit {
namespace {

using namespace Halide;

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// An Input<bool> takes a bool Expr: a plain bool would arrive as an int32 one.
Expr as_bool(bool b) { return Internal::make_bool(b); }

Buffer<float> random_buffer(std::vector<int> shape, uint32_t seed) {
  Buffer<float> b(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  b.for_each_value([&](float& x) { x = u(rng); });
  return b;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const golden::Tolerance tol = golden::default_tolerance(DType::float32, true);
  const golden::Metrics m = golden::compare(got.data(), want.data(), static_cast<int64_t>(got.size()), DType::float32, tol.atol, tol.rtol);
  const golden::Verdict v = golden::judge(m, tol);
  EXPECT_EQ(v.status, golden::Status::pass) << what << ": " << v.summary;
}

// y(n, t) = Σ_k x(k, t) · w(k, n), in double, k in order.
std::vector<double> project(const Buffer<float>& x, const Buffer<float>& w) {
  const int K = x.dim(0).extent(), T = x.dim(1).extent(), N = w.dim(1).extent();
  std::vector<double> y(static_cast<size_t>(N) * T);
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(x(k, t)) * double(w(k, n));
      y[t * N + n] = s;
    }
  return y;
}

std::vector<double> doubles(const Buffer<float>& b) {
  std::vector<double> out;
  b.for_each_value([&](const float& x) { out.push_back(x); });
  return out;
}

const gpu_test::Params kLinearF32{{"x.type", "float32"}, {"w.type", "float32"}, {"y.type", "float32"}};

// K with a tail past the 32 lanes, N at, above and below the 8-row block, one and several
// tokens; a NaN in one token's x makes its row NaN and no other.
TEST(GpuQkvAttention, LinearMatchesDoubleSumsOnOpenCL) {
  const Target t = gpu_test::opencl_target();
  struct Shape { int K, N, T; };
  for (Shape s : {Shape{70, 13, 1}, Shape{40, 5, 3}, Shape{256, 64, 2}, Shape{31, 8, 1}}) {
    Buffer<float> x = random_buffer({s.K, s.T}, 1), w = random_buffer({s.K, s.N}, 2);
    if (s.T > 1) x(3, 1) = kNaN;
    Buffer<float> y(s.N, s.T);
    gpu_test::realize_on(gpu_test::generator_pipeline("npukit_linear", t, kLinearF32, x, w, as_bool(false)), y, t);
    expect_close(doubles(y), project(x, w), "K=" + std::to_string(s.K) + " N=" + std::to_string(s.N) + " T=" + std::to_string(s.T));
  }
}

struct QkvShape { int Hq, Hkv, Dh, T, pos; };

// Rotated q (Dh, Hq, T) and k, v as cache rows (Dh, T, Hkv) from projected rows (R, T).
void expect_qkv_matches(const std::vector<double>& rows, const QkvShape& s, bool interleaved, const Buffer<float>& q,
                        const Buffer<float>& k, const Buffer<float>& v, const std::string& what) {
  const int R = (s.Hq + 2 * s.Hkv) * s.Dh;
  std::vector<double> q_in, k_in, v_want;
  for (int t = 0; t < s.T; ++t) {
    for (int r = 0; r < s.Hq * s.Dh; ++r) q_in.push_back(rows[t * R + r]);
    for (int r = 0; r < s.Hkv * s.Dh; ++r) k_in.push_back(rows[t * R + s.Hq * s.Dh + r]);
  }
  std::vector<int64_t> positions(s.T);
  for (int t = 0; t < s.T; ++t) positions[t] = s.pos + t;
  const golden::RopeStyle style = interleaved ? golden::RopeStyle::interleaved : golden::RopeStyle::half;
  std::vector<double> q_want(q_in.size()), k_rot(k_in.size());
  golden::rope(q_in.data(), positions.data(), s.T, s.Hq, s.Dh, s.Dh, 10000.0, style, q_want.data());
  golden::rope(k_in.data(), positions.data(), s.T, s.Hkv, s.Dh, s.Dh, 10000.0, style, k_rot.data());
  // The cache rows are (d, t, g): g outermost.
  std::vector<double> k_want, k_got, v_got;
  for (int g = 0; g < s.Hkv; ++g)
    for (int t = 0; t < s.T; ++t)
      for (int d = 0; d < s.Dh; ++d) {
        k_want.push_back(k_rot[(t * s.Hkv + g) * s.Dh + d]);
        v_want.push_back(rows[t * R + (s.Hq + s.Hkv + g) * s.Dh + d]);
        k_got.push_back(k(d, t, g));
        v_got.push_back(v(d, t, g));
      }
  expect_close(doubles(q), q_want, what + " q");
  expect_close(k_got, k_want, what + " k");
  expect_close(v_got, v_want, what + " v");
}

const gpu_test::Params kQkvF32{{"x.type", "float32"}, {"w.type", "float32"}, {"k_new.type", "float32"}, {"v_new.type", "float32"}};

// Both RoPE styles; decode and a few prefill tokens at a late position; G = 3.
TEST(GpuQkvAttention, QkvRopeMatchesGoldenOnOpenCL) {
  const Target t = gpu_test::opencl_target();
  for (QkvShape s : {QkvShape{6, 2, 16, 1, 77}, QkvShape{4, 1, 10, 3, 1000}}) {
    for (bool interleaved : {false, true}) {
      const int D = 45, R = (s.Hq + 2 * s.Hkv) * s.Dh;
      Buffer<float> x = random_buffer({D, s.T}, 3), w = random_buffer({D, R}, 4);
      Buffer<float> q(s.Dh, s.Hq, s.T), k(s.Dh, s.T, s.Hkv), v(s.Dh, s.T, s.Hkv);
      gpu_test::realize_all_on(gpu_test::generator_pipeline("npukit_qkv_rope", t, kQkvF32, x, w, s.Hq, s.Dh, s.Hkv, s.pos,
                                                            10000.0, as_bool(interleaved), as_bool(false)),
                               {q, k, v}, t);
      expect_qkv_matches(project(x, w), s, interleaved, q, k, v,
                         "T=" + std::to_string(s.T) + (interleaved ? " interleaved" : " half"));
    }
  }
}

TEST(GpuQkvAttention, QkvRopeDequantMatchesGoldenOnOpenCL) {
  const Target t = gpu_test::opencl_target();
  const QkvShape s{4, 2, 8, 2, 5};
  const int R = (s.Hq + 2 * s.Hkv) * s.Dh;
  Buffer<int32_t> acc(R, s.T);
  Buffer<float> x_scale(s.T), w_scale(R);
  std::mt19937 rng(5);
  acc.for_each_value([&](int32_t& a) { a = static_cast<int32_t>(rng() % 2000001) - 1000000; });
  for (int tt = 0; tt < s.T; ++tt) x_scale(tt) = 0.001f * float(tt + 1);
  for (int r = 0; r < R; ++r) w_scale(r) = 0.01f + 0.0001f * float(r);
  std::vector<double> rows(static_cast<size_t>(R) * s.T);
  for (int tt = 0; tt < s.T; ++tt)
    for (int r = 0; r < R; ++r) rows[tt * R + r] = golden::dequantize_token(acc(r, tt), x_scale(tt), w_scale(r));
  Buffer<float> q(s.Dh, s.Hq, s.T), k(s.Dh, s.T, s.Hkv), v(s.Dh, s.T, s.Hkv);
  gpu_test::realize_all_on(gpu_test::generator_pipeline("npukit_qkv_rope_dequant", t, {{"k_new.type", "float32"}, {"v_new.type", "float32"}},
                                                        acc, x_scale, w_scale, s.Hq, s.Dh, s.Hkv, s.pos, 10000.0, as_bool(false)),
                           {q, k, v}, t);
  expect_qkv_matches(rows, s, false, q, k, v, "dequant");
}

TEST(GpuQkvAttention, CudaPtxAssembles) {
  for (const char* type : {"float32", "float16"}) {
    const std::string ty = type;
    const std::vector<std::pair<std::string, gpu_test::Params>> gens = {
        {"npukit_linear", {{"x.type", "float32"}, {"w.type", ty}, {"y.type", ty}}},
        {"npukit_qkv_rope", {{"x.type", ty}, {"w.type", ty}, {"k_new.type", ty}, {"v_new.type", ty}}},
        {"npukit_qkv_rope_dequant", {{"k_new.type", ty}, {"v_new.type", ty}}}};
    for (const auto& [gen, params] : gens) {
      const std::string ptx = gpu_test::generator_ptx(gen, gpu_test::cuda_target(80), params);
      ASSERT_FALSE(ptx.empty()) << gen << " " << type;
      EXPECT_EQ(gpu_test::ptxas_errors(ptx, "sm_80"), "") << gen << " " << type;
    }
  }
}

}  // namespace
}  // namespace npukit
