// The INT8 GEMM's GPU schedules (schedules/gpu/int8_gemm.cpp) through the shipped
// Generators: run on OpenCL (PoCL) against golden, and compiled for CUDA (PTX with dp4a,
// accepted by ptxas).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sys/stat.h>

#include "golden/int8_gemm.h"
#include "golden/metrics.h"
#include "golden/requantize.h"
#include "golden/tolerance.h"
#include "layouts/vnni_int8.h"
#include "tests/gpu_jit.h"

namespace npukit {
namespace {

using namespace Halide;
using gpu_test::Params;

struct GemmCase {
  int64_t M, N, K;
  int32_t zp;
  std::vector<int8_t> a, w;  // row-major [M, K], [N, K]
};

GemmCase random_case(int64_t M, int64_t N, int64_t K, int32_t zp, uint32_t seed) {
  GemmCase c{M, N, K, zp, std::vector<int8_t>(M * K), std::vector<int8_t>(N * K)};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127);
  for (auto& x : c.a) x = static_cast<int8_t>(byte(rng));
  for (auto& x : c.w) x = static_cast<int8_t>(byte(rng));
  return c;
}

// acc (N, M) from the GPU kernel, as the runtime calls it: a padded with zeros to k_pad
// (and nothing else: the GPU kernel reads rows past M through clamps, not padding).
Buffer<int32_t> run_acc(const GemmCase& c, const Target& t) {
  const layouts::PackedInt8Weights p = layouts::pack_int8_weights(c.w.data(), c.N, c.K);
  Buffer<int8_t> a(static_cast<int>(p.k_pad), static_cast<int>(c.M));
  a.fill(0);
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t k = 0; k < c.K; ++k) a(k, m) = c.a[m * c.K + k];
  Buffer<int8_t> w(p.bytes(), {4, 16, static_cast<int>(p.k_pad / 4), static_cast<int>(p.n_pad / 16)});
  Buffer<int32_t> sums(const_cast<int32_t*>(p.row_sums.data()), static_cast<int>(p.n_pad));
  Buffer<int32_t> acc(static_cast<int>(c.N), static_cast<int>(c.M));
  const Params shape{{"shape", c.M == 1 ? "decode" : "prefill"}};
  gpu_test::realize_on(gpu_test::generator_pipeline("npukit_int8_gemm_acc", t, shape, a, w, sums, c.zp, int32_t{1}), acc, t);
  return acc;
}

void expect_acc_matches_golden(const GemmCase& c) {
  const Buffer<int32_t> acc = run_acc(c, gpu_test::opencl_target());
  const std::vector<int64_t> want = golden::int8_gemm_acc(c.a.data(), c.w.data(), c.M, c.N, c.K, c.zp);
  int64_t bad = 0;
  for (int64_t m = 0; m < c.M; ++m) {
    for (int64_t n = 0; n < c.N; ++n) {
      if (acc(n, m) != want[m * c.N + n] && bad++ < 5) {
        ADD_FAILURE() << "M=" << c.M << " N=" << c.N << " K=" << c.K << " zp=" << c.zp << ": acc(n=" << n << ", m=" << m
                      << ") = " << acc(n, m) << ", golden " << want[m * c.N + n];
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

// Decode: N not a multiple of the 16-channel block, K groups (K/4) not a multiple of the
// 16 slices, K not a multiple of 4; zero points at both ends.
TEST(GpuInt8Gemm, DecodeMatchesGoldenOnOpenCL) {
  expect_acc_matches_golden(random_case(1, 40, 70, 0, 1));
  expect_acc_matches_golden(random_case(1, 256, 1024, -128, 2));
  expect_acc_matches_golden(random_case(1, 17, 3, 127, 3));
}

// Prefill: M not a multiple of the 32-row tile (nor of 8, the CPU's row padding), N not a
// multiple of the 64-channel tile, K groups not a multiple of the 8-group chunk.
TEST(GpuInt8Gemm, PrefillMatchesGoldenOnOpenCL) {
  expect_acc_matches_golden(random_case(5, 130, 200, 3, 4));
  expect_acc_matches_golden(random_case(37, 64, 36, -7, 5));
  expect_acc_matches_golden(random_case(2, 1, 4, 0, 6));
}

// The largest products (−128 · −128 and (−128 − 127) · −128 with zp = 127) over a long K:
// the shifted u8 sum and its correction stay exact.
TEST(GpuInt8Gemm, ExtremeValuesStayExactOnOpenCL) {
  for (int64_t M : {1, 3}) {
    GemmCase c{M, 20, 2000, 127, std::vector<int8_t>(M * 2000, -128), std::vector<int8_t>(20 * 2000, -128)};
    for (int64_t i = 0; i < 2000; i += 7) c.w[i] = 127;  // channel 0 mixes signs
    expect_acc_matches_golden(c);
  }
}

// The epilogues on the GPU, from the GPU's acc, against golden's whole GEMM: float32 with
// NaN / ±Inf scales and an infinite bias, and int8 in both rounding modes.
Buffer<float> run_float_epilogue(const Buffer<int32_t>& acc, const std::vector<float>& chan_scale,
                                 const std::vector<float>& bias, const Target& t) {
  const int N = acc.dim(0).extent(), M = acc.dim(1).extent();
  Buffer<float> cs(const_cast<float*>(chan_scale.data()), N), bs(const_cast<float*>(bias.data()), N);
  Buffer<int32_t> mult(N), shift(N);
  mult.fill(0);
  shift.fill(0);
  Buffer<float> rows(M);  // the op's single a_scale: every row's scale is 1
  rows.fill(1.0f);
  Buffer<float> y(N, M);
  gpu_test::realize_on(gpu_test::generator_pipeline("npukit_int8_epilogue", t, {{"mode", "scale"}, {"y.type", "float32"}},
                                                    acc, cs, rows, bs, mult, shift, int32_t(0)),
                       y, t);
  return y;
}

TEST(GpuInt8Gemm, ScaledFloat32EpilogueMatchesGoldenWithNaNAndInf) {
  const Target t = gpu_test::opencl_target();
  GemmCase c = random_case(3, 24, 64, 2, 7);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> w_scale(c.N), bias(c.N);
  for (int64_t n = 0; n < c.N; ++n) {
    w_scale[n] = 0.001f * float(n + 1);
    bias[n] = 0.25f * float(n) - 2.0f;
  }
  w_scale[1] = nan;
  w_scale[2] = inf;
  w_scale[3] = -inf;
  bias[4] = inf;
  bias[5] = nan;
  for (int64_t k = 0; k < c.K; ++k) c.a[0 * c.K + k] = static_cast<int8_t>(c.zp);  // row 0: acc = 0 → 0·Inf = NaN
  golden::Int8GemmParams params;
  params.a_zero_point = c.zp;
  params.a_scale = 0.5;
  params.out = golden::Int8GemmOut::float32;
  const float a_scale = 0.5f;
  std::vector<float> chan_scale(c.N);
  for (int64_t n = 0; n < c.N; ++n) chan_scale[n] = a_scale * w_scale[n];  // as the runtime forms it
  const Buffer<float> y = run_float_epilogue(run_acc(c, t), chan_scale, bias, t);
  const std::vector<double> want =
      golden::int8_gemm_reference(c.a.data(), c.w.data(), w_scale.data(), bias.data(), c.M, c.N, c.K, params);
  std::vector<double> got(c.M * c.N);
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t n = 0; n < c.N; ++n) got[m * c.N + n] = y(n, m);
  const golden::Tolerance tol = golden::default_tolerance(DType::float32, true);
  const golden::Metrics metrics = golden::compare(got.data(), want.data(), c.M * c.N, DType::float32, tol.atol, tol.rtol);
  const golden::Verdict v = golden::judge(metrics, tol);
  EXPECT_EQ(v.status, golden::Status::pass) << v.summary;
  EXPECT_TRUE(std::isnan(y(0, 0)) == false && std::isnan(y(2, 0)));  // 0 · Inf is NaN; 0 · finite is not
}

TEST(GpuInt8Gemm, Int8EpiloguesAreBitExactWithGolden) {
  const Target t = gpu_test::opencl_target();
  const GemmCase c = random_case(4, 33, 96, -3, 8);
  const Buffer<int32_t> acc = run_acc(c, t);
  const int N = static_cast<int>(c.N), M = static_cast<int>(c.M);
  const float a_scale = 0.02f, out_scale = 0.7f;
  const int32_t out_zp = 5;
  std::vector<float> w_scale(N), chan_scale(N), bias(N, 0.0f);
  Buffer<int32_t> mult(N), shift(N);
  for (int n = 0; n < N; ++n) {
    w_scale[n] = 0.01f * float(n + 1);
    chan_scale[n] = (a_scale * w_scale[n]) / out_scale;
    const auto q = golden::quantize_multiplier(double(a_scale) * double(w_scale[n]) / double(out_scale));
    ASSERT_TRUE(q.has_value());
    mult(n) = q->multiplier;
    shift(n) = q->shift;
  }
  Buffer<float> cs(chan_scale.data(), N), bs(bias.data(), N), rows(M);
  rows.fill(1.0f);  // unused by the int8 epilogues
  for (const char* mode : {"fixed_point", "float"}) {
    Buffer<int8_t> y(N, M);
    gpu_test::realize_on(gpu_test::generator_pipeline("npukit_int8_epilogue", t, {{"mode", mode}, {"y.type", "int8"}}, acc,
                                                      cs, rows, bs, mult, shift, out_zp),
                         y, t);
    int64_t bad = 0;
    for (int m = 0; m < M; ++m) {
      for (int n = 0; n < N; ++n) {
        const int32_t a32 = acc(n, m);
        const int8_t want = std::string(mode) == "float"
                                ? golden::requantize_float(a32, a_scale, w_scale[n], out_scale, out_zp)
                                : golden::requantize_fixed_point(a32, {mult(n), shift(n)}, out_zp);
        if (y(n, m) != want && bad++ < 5) ADD_FAILURE() << mode << ": y(" << n << ", " << m << ") = " << int(y(n, m)) << ", golden " << int(want);
      }
    }
    EXPECT_EQ(bad, 0) << mode;
  }
}

// CUDA without a GPU: the PTX of both shapes has dp4a (capability 6.1 and 8.0) and
// assembles for sm_80.
TEST(GpuInt8Gemm, CudaPtxHasDp4aAndAssembles) {
  struct stat st;
  ASSERT_EQ(stat("/usr/local/cuda/bin/ptxas", &st), 0) << "ptxas not found: install the CUDA toolkit at /usr/local/cuda";
  for (int cap : {61, 80}) {
    for (const char* shape : {"decode", "prefill"}) {
      const std::string ptx = gpu_test::generator_ptx("npukit_int8_gemm_acc", gpu_test::cuda_target(cap), {{"shape", shape}});
      ASSERT_FALSE(ptx.empty()) << shape << ": no PTX in the module";
      EXPECT_NE(ptx.find("dp4a"), std::string::npos) << shape << " sm_" << cap << ": no dp4a";
      if (cap == 80) {
        EXPECT_EQ(gpu_test::ptxas_errors(ptx, "sm_80"), "") << shape;
      }
    }
  }
  const std::string epi = gpu_test::generator_ptx("npukit_int8_epilogue", gpu_test::cuda_target(80), {{"mode", "scale"}, {"y.type", "float16"}});
  EXPECT_EQ(gpu_test::ptxas_errors(epi, "sm_80"), "");
}

}  // namespace
}  // namespace npukit
