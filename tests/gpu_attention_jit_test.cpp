// The attention core's GPU schedules (schedules/gpu/attention.cpp) through the shipped
// Generators, run on OpenCL (PoCL) against golden::attention_core, NaN/Inf contract
// included; and compiled for CUDA, the PTX accepted by ptxas.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "golden/attention.h"
#include "golden/metrics.h"
#include "golden/tolerance.h"
#include "schedules/gpu/attention.h"
#include "tests/gpu_jit.h"

namespace npukit {
namespace {

using namespace Halide;

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// One call's tensors in npukit's layouts (Halide dims innermost first): q, o (Dh, Hq, T),
// k, v (Dh, S_max, Hkv), mask (S_max, T), positions (T).
struct AttnCase {
  int Dh, Hq, Hkv, S, T;
  Buffer<float> q, k, v, mask;
  Buffer<int32_t> positions;
  bool masked = true;
  std::string name;
};

AttnCase random_case(int Dh, int Hq, int Hkv, int S, std::vector<int32_t> pos, uint32_t seed, std::string name) {
  const int T = static_cast<int>(pos.size());
  AttnCase c{Dh, Hq, Hkv, S, T, Buffer<float>(Dh, Hq, T), Buffer<float>(Dh, S, Hkv), Buffer<float>(Dh, S, Hkv),
             Buffer<float>(S, T), Buffer<int32_t>(T), true, std::move(name)};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  c.q.for_each_value([&](float& x) { x = 2.0f * u(rng); });
  c.k.for_each_value([&](float& x) { x = u(rng); });
  c.v.for_each_value([&](float& x) { x = u(rng); });
  c.mask.fill(0.0f);
  for (int t = 0; t < T; ++t) {
    c.positions(t) = pos[t];
    // Never live: past every token's position. NaN there must not reach the output.
    for (int s = pos[t] + 1; s < S; ++s) {
      bool later = true;
      for (int t2 = 0; t2 < T; ++t2) later = later && s > pos[t2];
      if (later)
        for (int g = 0; g < Hkv; ++g) c.k(0, s, g) = c.v(1, s, g) = kNaN;
    }
  }
  return c;
}

std::vector<double> doubles(const Buffer<float>& b) {
  std::vector<double> out;
  b.for_each_value([&](const float& x) { out.push_back(x); });
  return out;
}

// Halide's for_each_value walks dim 0 innermost: the row-major order golden uses.
std::vector<double> golden_out(const AttnCase& c) {
  std::vector<double> o(static_cast<size_t>(c.Dh) * c.Hq * c.T);
  std::vector<int64_t> pos(c.T);
  for (int t = 0; t < c.T; ++t) pos[t] = c.positions(t);
  const std::vector<double> mask = doubles(c.mask);
  golden::attention_core(doubles(c.q).data(), doubles(c.k).data(), doubles(c.v).data(), pos.data(),
                         c.masked ? mask.data() : nullptr, c.T, c.Hq, c.Hkv, c.Dh, c.S, o.data());
  return o;
}

const gpu_test::Params kFloat32{{"q.type", "float32"}, {"k.type", "float32"}, {"v.type", "float32"}, {"o.type", "float32"}};

Buffer<float> run_gpu(const AttnCase& c, const Target& t) {
  Buffer<float> o(c.Dh, c.Hq, c.T);
  if (c.T == 1) {
    gpu_test::Params p = kFloat32;
    p["masked"] = c.masked ? "true" : "false";
    const Halide::Expr prefetch = Halide::cast<bool>(1);  // the CPU's prefetch flag: a GPU schedule ignores it
    gpu_test::realize_on(gpu_test::generator_pipeline("npukit_attention_decode", t, p, c.q, c.k, c.v, c.positions(0),
                                                      c.mask, prefetch),
                         o, t);
  } else {
    gpu_test::realize_on(gpu_test::generator_pipeline("npukit_attention", t, kFloat32, c.q, c.k, c.v, c.positions, c.mask), o, t);
  }
  return o;
}

void expect_matches_golden(const AttnCase& c) {
  const Buffer<float> o = run_gpu(c, gpu_test::opencl_target());
  const std::vector<double> got = doubles(o), want = golden_out(c);
  const golden::Tolerance tol = golden::default_tolerance(DType::float32, true);
  const golden::Metrics m = golden::compare(got.data(), want.data(), static_cast<int64_t>(got.size()), DType::float32, tol.atol, tol.rtol);
  const golden::Verdict v = golden::judge(m, tol);
  std::string worst;
  for (const golden::Point& p : m.worst)
    worst += " [" + std::to_string(p.index) + "] " + std::to_string(p.actual) + " vs " + std::to_string(p.expected);
  EXPECT_EQ(v.status, golden::Status::pass) << c.name << ": " << v.summary << "; worst (index = (t·Hq + h)·Dh + d):" << worst;
}

// Decode (T = 1): positions across 1, 3 splits and the cache's last; a group of 6 heads
// (a partial head block), head_dim not a multiple of 32; masks with −inf and finite biases.
TEST(GpuAttention, DecodeMatchesGoldenOnOpenCL) {
  const int sp = schedules::gpu::kDecodeSplit;
  expect_matches_golden(random_case(64, 8, 2, 2 * sp + 88, {2 * sp + 43}, 1, "3 splits"));
  expect_matches_golden(random_case(40, 12, 2, 300, {17}, 2, "G=6, Dh=40, 1 split"));
  expect_matches_golden(random_case(32, 4, 4, 2 * sp, {2 * sp - 1}, 3, "last position, S a multiple of the split"));
  expect_matches_golden(random_case(16, 2, 1, 5, {0}, 4, "position 0"));
  AttnCase m = random_case(64, 8, 2, sp + 100, {sp + 60}, 5, "masked");
  for (int s = 0; s < sp + 100; s += 3) m.mask(s, 0) = -kInf;
  for (int s = 1; s < sp + 100; s += 5) m.mask(s, 0) = 0.5f;
  expect_matches_golden(m);
  AttnCase nm = random_case(64, 8, 2, sp + 100, {sp + 60}, 6, "unmasked kernel");
  nm.masked = false;
  nm.mask.fill(kNaN);  // never read
  expect_matches_golden(nm);
}

// The NaN/Inf contract on decode: a NaN in a live k row (its group all NaN), +Inf in one
// head's q (that head NaN), NaN in one live v element (that element), a fully masked
// token (zeros), and logits far beyond exp's range (exact by the max subtraction).
TEST(GpuAttention, DecodeKeepsTheNaNInfContractOnOpenCL) {
  const int sp = schedules::gpu::kDecodeSplit;
  AttnCase c = random_case(32, 8, 2, sp + 50, {sp + 20}, 7, "NaN/Inf");
  c.k(5, sp + 3, 0) = kNaN;
  c.q(2, 5, 0) = kInf;
  c.v(3, 10, 1) = kNaN;
  expect_matches_golden(c);
  // All zeros, which the gate's metrics rightly mistrust: checked element by element.
  AttnCase masked_all = random_case(32, 4, 1, 40, {30}, 8, "fully masked");
  masked_all.mask.fill(-kInf);
  const Buffer<float> zeros = run_gpu(masked_all, gpu_test::opencl_target());
  const std::vector<double> want = golden_out(masked_all);
  int i = 0;
  zeros.for_each_value([&](const float& x) {
    EXPECT_TRUE(x == 0.0f && want[i] == 0.0) << "fully masked: o[" << i << "] = " << x << ", golden " << want[i];
    ++i;
  });
  AttnCase big = random_case(32, 4, 2, sp + 9, {sp + 8}, 9, "huge logits");
  big.q.for_each_value([](float& x) { x *= 400.0f; });
  expect_matches_golden(big);
}

// Prefill (T > 1): tokens at arbitrary positions (repeats, out of order), a group of 6.
TEST(GpuAttention, PrefillMatchesGoldenOnOpenCL) {
  expect_matches_golden(random_case(64, 8, 2, 90, {80, 81, 82, 83, 84}, 10, "5 tokens"));
  AttnCase c = random_case(40, 12, 2, 70, {3, 69, 3, 40}, 11, "repeats, G=6");
  for (int s = 0; s < 70; s += 4) c.mask(s, 1) = -kInf;
  c.mask.for_each_element([&](int s, int t) {
    if (t == 3) c.mask(s, t) = -kInf;  // token 3 fully masked
  });
  c.k(7, 2, 0) = kNaN;   // live for tokens 1 (and 0, 2): their group-0 heads NaN
  c.v(3, 50, 1) = kInf;  // live for token 1 only
  expect_matches_golden(c);
}

TEST(GpuAttention, CudaPtxAssembles) {
  for (const char* gen : {"npukit_attention", "npukit_attention_decode"}) {
    for (const char* type : {"float32", "float16"}) {
      const gpu_test::Params p{{"q.type", type}, {"k.type", type}, {"v.type", type}, {"o.type", type}};
      const std::string ptx = gpu_test::generator_ptx(gen, gpu_test::cuda_target(80), p);
      ASSERT_FALSE(ptx.empty()) << gen << " " << type;
      EXPECT_EQ(gpu_test::ptxas_errors(ptx, "sm_80"), "") << gen << " " << type;
    }
  }
}

}  // namespace
}  // namespace npukit
