// The per-token quantization kernels of the int8-weight path, on every CPU tier this machine
// runs and on gpu-opencl (PoCL in CI: the GPU schedules), bit for bit against the golden contract (golden/per_token_quant.h): zero, NaN, Inf
// and underflowing rows, ties, fp16 rows, row lengths with vector tails; and the per-row
// dequantization.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "golden/half.h"
#include "golden/per_token_quant.h"
#include "kernels/dequantize_rows_f32.h"
#include "kernels/dequantize_rows_f32_gpu.h"
#include "kernels/quantize_rows_f16.h"
#include "kernels/quantize_rows_f16_gpu.h"
#include "kernels/quantize_rows_f32.h"
#include "kernels/quantize_rows_f32_gpu.h"
#include "runtime/cpu_features.h"
#include "runtime/gpu_call.h"
#include "runtime/halide_call.h"

namespace npukit {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Every CPU tier this machine runs, then gpu-opencl.
std::vector<std::string> tiers() {
  std::vector<std::string> t;
  for (const char* tier : {"avx512", "avx2", "sse41"}) {
    if (missing_for_tier(cpu_features(), tier).empty()) t.push_back(tier);
  }
  t.push_back("gpu-opencl");
  return t;
}

void quantize(const std::string& tier, const TensorView& a, const TensorView& q, const TensorView& s) {
  const bool f16 = a.dtype == DType::float16;
  if (is_gpu_family(tier)) {
    auto run = [&](const auto& kernel) {
      GpuCall g(kernel, tier);
      g.run(g.in(a), g.out(q), g.out(s));
    };
    f16 ? run(kernels::quantize_rows_f16_gpu) : run(kernels::quantize_rows_f32_gpu);
    return;
  }
  HalideBuffer in(a), qb(q), sb(s);
  if (f16) {
    call_cpu_kernel(kernels::quantize_rows_f16, tier, in.get(), qb.get(), sb.get());
  } else {
    call_cpu_kernel(kernels::quantize_rows_f32, tier, in.get(), qb.get(), sb.get());
  }
}

void dequantize(const std::string& tier, const TensorView& acc, const TensorView& rs, const TensorView& ws,
                const TensorView& y) {
  if (is_gpu_family(tier)) {
    GpuCall g(kernels::dequantize_rows_f32_gpu, tier);
    g.run(g.in(acc), g.in(rs), g.in(ws), g.out(y));
    return;
  }
  HalideBuffer ab(acc), rb(rs), wb(ws), yb(y);
  call_cpu_kernel(kernels::dequantize_rows_f32, tier, ab.get(), rb.get(), wb.get(), yb.get());
}

// Rows of K values: the edge cases of the contract, then random rows.
std::vector<std::vector<float>> edge_rows(int64_t K) {
  std::vector<std::vector<float>> rows;
  std::mt19937 rng(static_cast<unsigned>(K));
  std::normal_distribution<float> normal(0, 1);
  auto random_row = [&](float scale) {
    std::vector<float> r(static_cast<size_t>(K));
    for (float& v : r) v = scale * normal(rng);
    return r;
  };
  rows.push_back(std::vector<float>(static_cast<size_t>(K), 0.0f));  // zero row
  rows.push_back(random_row(1));
  rows.back()[static_cast<size_t>(K / 2)] = kNaN;                     // NaN row
  rows.push_back(random_row(1));
  rows.back()[static_cast<size_t>(K - 1)] = -kInf;                    // Inf in the tail
  rows.push_back(std::vector<float>(static_cast<size_t>(K), std::ldexp(1.0f, -149) * 60));  // s underflows
  std::vector<float> ties(static_cast<size_t>(K));                    // s = 1: exact ties
  for (int64_t k = 0; k < K; ++k) ties[static_cast<size_t>(k)] = static_cast<float>(k % 9) - 4.0f + 0.5f;
  ties[0] = 127;
  rows.push_back(ties);
  for (float scale : {1.0f, 1e-30f, 3e30f, 1e-40f}) rows.push_back(random_row(scale));
  return rows;
}

TEST(PerTokenQuant, KernelsMatchTheGoldenBitForBit) {
  for (const std::string& tier : tiers()) {
    for (int64_t K : {1, 3, 17, 64, 250, 4096}) {
      const std::vector<std::vector<float>> rows = edge_rows(K);
      const int64_t T = static_cast<int64_t>(rows.size());
      for (const bool f16 : {false, true}) {
        std::vector<float> a;
        std::vector<uint16_t> h;
        for (const auto& r : rows) {
          for (float v : r) {
            h.push_back(golden::float_to_half_bits(v));
            a.push_back(f16 ? golden::half_bits_to_float(h.back()) : v);
          }
        }
        std::vector<int8_t> q(static_cast<size_t>(T * K), 99);
        std::vector<float> s(static_cast<size_t>(T), -1);
        quantize(tier, f16 ? TensorView{h.data(), DType::float16, {T, K}, {}} : TensorView{a.data(), DType::float32, {T, K}, {}},
                 TensorView{q.data(), DType::int8, {T, K}, {}}, TensorView{s.data(), DType::float32, {T}, {}});
        for (int64_t t = 0; t < T; ++t) {
          std::vector<int8_t> want(static_cast<size_t>(K));
          const float ws = golden::quantize_token(a.data() + t * K, K, want.data());
          const std::string where = tier + (f16 ? " f16" : " f32") + " K=" + std::to_string(K) + " row " + std::to_string(t);
          if (std::isnan(ws)) {
            EXPECT_TRUE(std::isnan(s[static_cast<size_t>(t)])) << where;
          } else {
            EXPECT_EQ(std::memcmp(&ws, &s[static_cast<size_t>(t)], 4), 0) << where << ": " << ws << " vs " << s[t];
          }
          EXPECT_EQ(std::memcmp(want.data(), q.data() + t * K, static_cast<size_t>(K)), 0) << where;
        }
      }
    }
  }
}

// Rows of K fp16 values for the enumeration below: each row holds a maximum m, then the
// next values a with |a| ≤ m (each magnitude, then its negative), zero-padded; m runs over
// every positive finite fp16. `m` and `next` carry the position from batch to batch.
// Returns the rows filled (up to T, 0 when done) and counts the (a, m) pairs in `pairs`.
// O2 (the tests build at -O0): this runs over a billion values.
struct Fp16Enumeration {
  uint32_t m = 1, next = 0;
  int64_t pairs = 0;
};
__attribute__((optimize("O2"))) int64_t fill_fp16_rows(Fp16Enumeration& e, uint16_t* h, float* a, int64_t T, int64_t K) {
  int64_t rows = 0;
  for (; rows < T && e.m < 0x7c00; ++rows) {
    uint16_t* row = h + rows * K;
    row[0] = static_cast<uint16_t>(e.m);
    int64_t k = 1;
    for (; k + 1 < K && e.next <= e.m; k += 2, ++e.next) {
      row[k] = static_cast<uint16_t>(e.next);
      row[k + 1] = static_cast<uint16_t>(e.next | 0x8000u);
    }
    e.pairs += k - 1;
    std::fill(row + k, row + K, uint16_t{0});
    if (e.next > e.m) ++e.m, e.next = 0;
  }
  static const std::vector<float> value = [] {
    std::vector<float> v(65536);
    for (uint32_t b = 0; b < 65536; ++b) v[b] = golden::half_bits_to_float(static_cast<uint16_t>(b));
    return v;
  }();
  const float* v = value.data();  // not operator[]: its -O0 instantiation is a call per value
  for (int64_t i = 0; i < rows * K; ++i) a[i] = v[h[i]];
  return rows;
}

// The first index where `got` differs from `want`, or n.
int64_t first_difference(const int8_t* want, const int8_t* got, int64_t n) {
  if (std::memcmp(want, got, static_cast<size_t>(n)) == 0) return n;
  int64_t i = 0;
  while (want[i] == got[i]) ++i;
  return i;
}

// The fp16 kernels divide by one reciprocal per row and correct each quotient with an exact
// remainder (ops/per_token_quant.h, Division::reciprocal_fma), which is shown correct by
// enumeration, not by a proof: every finite fp16 value a against every row maximum m ≥ |a|
// (about 1e9 pairs), on every CPU tier, against the golden's IEEE division; it also covers the
// x86 kernels' missing clamp to ±127 for fp16 rows (ops/per_token_quant.h).
TEST(PerTokenQuant, Fp16KernelsMatchIeeeDivisionForEveryValueAndRowMaximum) {
  const int64_t K = 4096, T = 2048;  // a batch: 16 MiB of fp16
  std::vector<std::string> cpu_tiers = tiers();
  cpu_tiers.pop_back();  // gpu-opencl divides in IEEE fp32 (Division::ieee)
  std::vector<uint16_t> h(static_cast<size_t>(T * K));
  std::vector<float> a(h.size());
  std::vector<int8_t> want(h.size()), got(h.size());
  std::vector<float> want_s(static_cast<size_t>(T)), got_s(static_cast<size_t>(T));
  Fp16Enumeration e;
  while (const int64_t rows = fill_fp16_rows(e, h.data(), a.data(), T, K)) {
    for (int64_t t = 0; t < rows; ++t) want_s[static_cast<size_t>(t)] = golden::quantize_token(a.data() + t * K, K, want.data() + t * K);
    for (const std::string& tier : cpu_tiers) {
      quantize(tier, TensorView{h.data(), DType::float16, {rows, K}, {}}, TensorView{got.data(), DType::int8, {rows, K}, {}},
               TensorView{got_s.data(), DType::float32, {rows}, {}});
      ASSERT_EQ(std::memcmp(want_s.data(), got_s.data(), static_cast<size_t>(rows) * 4), 0) << tier << ", m < " << e.m;
      const int64_t i = first_difference(want.data(), got.data(), rows * K);
      ASSERT_EQ(i, rows * K) << tier << ": a = " << a[static_cast<size_t>(i)] << " in a row with maximum "
                             << a[static_cast<size_t>(i / K * K)] << " gives " << int(got[static_cast<size_t>(i)])
                             << ", not " << int(want[static_cast<size_t>(i)]);
    }
  }
  EXPECT_EQ(e.pairs, int64_t{0x7bff} * 0x7c00 + 2 * int64_t{0x7bff});  // Σ over m of 2(m + 1)
}

TEST(PerTokenQuant, TiesRoundToEvenAndRowsOfZerosAndNaN) {
  const std::vector<float> a = {127, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f,  // s = 1
                                0, 0, 0, 0, 0, 0, 0, 0,                            // zero row
                                1, 2, kNaN, 4, 5, 6, 7, 8};                         // NaN row
  for (const std::string& tier : tiers()) {
    std::vector<int8_t> q(24, 99);
    std::vector<float> s(3, -1);
    quantize(tier, TensorView{const_cast<float*>(a.data()), DType::float32, {3, 8}, {}},
             TensorView{q.data(), DType::int8, {3, 8}, {}}, TensorView{s.data(), DType::float32, {3}, {}});
    EXPECT_EQ(std::vector<int>(q.begin(), q.begin() + 8), (std::vector<int>{127, 0, 2, 2, 0, -2, -2, 4})) << tier;
    EXPECT_EQ(s[0], 1.0f) << tier;
    EXPECT_EQ(std::vector<int>(q.begin() + 8, q.end()), std::vector<int>(16, 0)) << tier;
    EXPECT_EQ(s[1], 0.0f) << tier;
    EXPECT_TRUE(std::isnan(s[2])) << tier;
  }
}

TEST(PerTokenQuant, DequantizeRowsIsAccTimesRowScaleTimesChannelScaleInFp32) {
  const int64_t T = 3, N = 37;
  std::vector<int32_t> acc(static_cast<size_t>(T * N));
  std::vector<float> rs = {0.25f, 0.0f, kNaN}, ws(static_cast<size_t>(N));
  for (int64_t i = 0; i < T * N; ++i) acc[static_cast<size_t>(i)] = static_cast<int32_t>(i * 977 - 20000) * 1000 + 3;
  for (int64_t n = 0; n < N; ++n) ws[static_cast<size_t>(n)] = std::ldexp(1.1f + float(n), static_cast<int>(n % 7) - 3);
  for (const std::string& tier : tiers()) {
    std::vector<float> y(static_cast<size_t>(T * N), -1);
    dequantize(tier, TensorView{acc.data(), DType::int32, {T, N}, {}}, TensorView{rs.data(), DType::float32, {T}, {}},
               TensorView{ws.data(), DType::float32, {N}, {}}, TensorView{y.data(), DType::float32, {T, N}, {}});
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t n = 0; n < N; ++n) {
        const float want = golden::dequantize_token(acc[static_cast<size_t>(t * N + n)], rs[static_cast<size_t>(t)],
                                                    ws[static_cast<size_t>(n)]);
        const float got = y[static_cast<size_t>(t * N + n)];
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << tier << " " << t << " " << n;
        } else {
          EXPECT_EQ(got, want) << tier << " " << t << " " << n;
        }
      }
    }
  }
}

}  // namespace
}  // namespace npukit
