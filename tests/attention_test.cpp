// The attention core on the CPU: every input class and dtype on every tier passes the
// gate; grouped-query and position rules are enforced.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "golden/attention.h"
#include "kernels/attention_decode_f32_unmasked.h"
#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/kernel_call.h"
#include "runtime/ops/split_attention.h"
#include "tests/counting_malloc.h"
#include "tests/gate_matrix.h"

namespace npukit {
namespace {

class AttentionGate : public testing::TestWithParam<GateCell> {};

TEST_P(AttentionGate, EveryCasePasses) { expect_every_case_passes(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cpu, AttentionGate,
                         testing::ValuesIn(gate_matrix("attention", {"float32", "float16"},
                                                       {"boundary", "nan_inf", "overflow"})),
                         gate_cell_name);

// The split kernel with and without its software prefetch (the `prefetch` argument, which
// the runtime sets per CPU, position and thread count; the version without reads its
// scores in runs) gives the same bits on any host, so that the version a CPU never picks
// is still checked: positions past the short-cache version (32), with runs of uneven
// length (41 and 101 positions), past the Xeon's switch (1024), one split and two.
TEST(AttentionDecode, PrefetchVersionsGiveTheSameBits) {
  const int64_t Hq = 8, Hkv = 2, Dh = 128, S = 2500;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> q(Hq * Dh), k(Hkv * S * Dh), v(Hkv * S * Dh);
  for (auto* x : {&q, &k, &v}) {
    for (float& e : *x) e = u(rng);
  }
  float zero = 0.0f;
  const TensorView qv{q.data(), DType::float32, {1, Hq, Dh}, {}}, kv{k.data(), DType::float32, {Hkv, S, Dh}, {}},
      vv{v.data(), DType::float32, {Hkv, S, Dh}, {}}, no_mask{&zero, DType::float32, {1, 1}, {}};
  Call call;
  call.target = "cpu";
  for (int32_t position : {40, 100, 1023, 1200, 2400}) {
    std::vector<float> with(Hq * Dh, -1.0f), without(Hq * Dh, -2.0f);
    const TensorView ow{with.data(), DType::float32, {1, Hq, Dh}, {}};
    const TensorView oo{without.data(), DType::float32, {1, Hq, Dh}, {}};
    const auto& kernel = kernels::attention_decode_f32_unmasked;
    call_kernel(kernel, call, In{qv}, In{kv}, In{vv}, position, In{no_mask}, true, Out{ow});
    call_kernel(kernel, call, In{qv}, In{kv}, In{vv}, position, In{no_mask}, false, Out{oo});
    EXPECT_EQ(std::memcmp(with.data(), without.data(), with.size() * sizeof(float)), 0) << "position " << position;
    EXPECT_TRUE(std::isfinite(with[0])) << "position " << position;
  }
}

TEST(AttentionDecode, OnlyTheMeasuredXeonLeavesThePrefetchToTheHardware) {
  CpuFeatures amd, intel_client, xeon_amx;
  intel_client.intel = true;
  xeon_amx.intel = xeon_amx.amx_tile = true;
  for (int threads : {1, 2}) {
    EXPECT_TRUE(decode_attention_prefetches(amd, 5000, threads));
    EXPECT_TRUE(decode_attention_prefetches(intel_client, 5000, threads));
    EXPECT_FALSE(decode_attention_prefetches(xeon_amx, 1024, threads));
    EXPECT_FALSE(decode_attention_prefetches(xeon_amx, 32767, threads));
  }
  EXPECT_TRUE(decode_attention_prefetches(xeon_amx, 511, 2));
  EXPECT_FALSE(decode_attention_prefetches(xeon_amx, 511, 1));
}

std::string error_of(int64_t hq, int64_t hkv, int32_t position) {
  const int64_t T = 1, Dh = 4, S = 8;
  std::vector<float> q(T * hq * Dh), k(hkv * S * Dh), v(hkv * S * Dh), o(T * hq * Dh);
  std::vector<int32_t> pos(T, position);
  TensorMap t = {{"q", {q.data(), DType::float32, {T, hq, Dh}, {}}},
                                         {"k_cache", {k.data(), DType::float32, {hkv, S, Dh}, {}}},
                                         {"v_cache", {v.data(), DType::float32, {hkv, S, Dh}, {}}},
                                         {"positions", {pos.data(), DType::int32, {T}, {}}},
                                         {"o", {o.data(), DType::float32, {T, hq, Dh}, {}}}};
  try {
    run_call(bind_call(find_op("attention"), "cpu", t, {}));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AttentionValidation, GroupsAndPositions) {
  EXPECT_EQ(error_of(4, 2, 3), "");
  EXPECT_EQ(error_of(3, 2, 3),
            "attention: Hq = 3 is not a multiple of Hkv = 2 (query head h reads kv head h / (Hq / Hkv))");
  EXPECT_EQ(error_of(2, 1, 8), "attention: positions[0] = 8: must be in [0, S_max = 8)");
  EXPECT_EQ(error_of(2, 1, -1), "attention: positions[0] = -1: must be in [0, S_max = 8)");
}

// The tensors of one fp32 decode call (T = 1) over a cache of S positions: `position`
// (which must outlive the map) and, where given, a mask row of S values.
TensorMap decode_tensors(std::vector<float>& q, std::vector<float>& k, std::vector<float>& v, int32_t* position,
                         float* mask, std::vector<float>& o, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S) {
  TensorMap t = {{"q", {q.data(), DType::float32, {1, Hq, Dh}, {}}},
                 {"k_cache", {k.data(), DType::float32, {Hkv, S, Dh}, {}}},
                 {"v_cache", {v.data(), DType::float32, {Hkv, S, Dh}, {}}},
                 {"positions", {position, DType::int32, {1}, {}}},
                 {"o", {o.data(), DType::float32, {1, Hq, Dh}, {}}}};
  if (mask) t["mask"] = {mask, DType::float32, {1, S}, {}};
  return t;
}

// Checks o against the reference: NaN where it is NaN, else within the tolerance of the
// fp32 kernels. Returns the reference's NaN count.
int expect_like_reference(const std::vector<float>& o, const std::vector<double>& want, const std::string& where) {
  int nans = 0;
  for (size_t i = 0; i < o.size(); ++i) {
    if (std::isnan(want[i])) {
      ++nans;
      EXPECT_TRUE(std::isnan(o[i])) << where << " o[" << i << "] = " << o[i] << ", want NaN";
    } else {
      EXPECT_NEAR(o[i], want[i], 1e-5 + 1e-4 * std::abs(want[i])) << where << " o[" << i << "]";
    }
  }
  return nans;
}

// Decode (T = 1) runs the split kernel, whose splits are too long (1024) for most gate
// cases to have more than two. Here: three splits, the last one short and ending past the
// position; split 0 entirely masked, with NaN in its k and v; kv head 1's split 1 all −inf
// scores (its k[., 0] = −inf, q[., 0] = 1), so that it must add exactly nothing; larger
// logits in split 2, so that the others are rescaled by tiny factors; NaN past the
// position; and one live NaN in v (kv head 0, row 1800, d 5).
TEST(AttentionDecode, SplitsCombineLikeTheUnsplitFormula) {
  const int64_t Hq = 8, Hkv = 2, Dh = 64, S = 3000, pos = 2500;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  uint32_t state = 12345;
  auto uniform = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / float(1 << 24) * 2 - 1;
  };
  std::vector<float> q(Hq * Dh), k(Hkv * S * Dh), v(Hkv * S * Dh), mask(S, 0.0f), o(Hq * Dh);
  for (float& x : q) x = uniform();
  for (float& x : k) x = uniform();
  for (float& x : v) x = uniform();
  auto at = [&](std::vector<float>& c, int64_t g, int64_t j, int64_t d) -> float& { return c[(g * S + j) * Dh + d]; };
  for (int64_t j = 0; j < 1024; ++j) mask[j] = -inf;
  for (int64_t g = 0; g < Hkv; ++g) {
    for (int64_t d = 0; d < Dh; ++d) {
      for (int64_t j = 100; j < 200; ++j) at(k, g, j, d) = at(v, g, j, d) = nan;
      for (int64_t j = pos + 1; j < S; ++j) at(k, g, j, d) = at(v, g, j, d) = nan;
      for (int64_t j = 2048; j <= pos; ++j) at(k, g, j, d) *= 8;
    }
  }
  for (int64_t h = Hq / 2; h < Hq; ++h) q[h * Dh] = 1;
  for (int64_t j = 1024; j < 2048; ++j) at(k, 1, j, 0) = -inf;
  at(v, 0, 1800, 5) = nan;

  std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end()),
      md(mask.begin(), mask.end()), want(o.size());
  const int64_t posd = pos;
  golden::attention_core(qd.data(), kd.data(), vd.data(), &posd, md.data(), 1, Hq, Hkv, Dh, S, want.data());

  for (const char* target : {"cpu", "cpu:avx2", "cpu:sse41"}) {
    int32_t p = static_cast<int32_t>(pos);
    TensorMap t = decode_tensors(q, k, v, &p, mask.data(), o, Hq, Hkv, Dh, S);
    run_call(bind_call(find_op("attention"), target, t, {}));
    EXPECT_EQ(expect_like_reference(o, want, target), Hq / Hkv) << "the reference: NaN in element 5 of kv head 0's query heads only";
  }
}

// The split's stats are one max of a key per head (ops/attention.h: NaN as +Inf, −Inf as
// −FLT_MAX, −Inf where nothing is live), which must still tell "every live score −Inf"
// (NaN, as the golden formula's −Inf − −Inf) from "no live position" (0). Kv head 0: every
// score −Inf (q[., 0] = 1, k[., 0] = −Inf); kv head 1: every score −Inf but row 7's, so
// that its heads give v's row 7; kv head 2: finite scores. With a mask, every position
// but 5 … 9 masked out; in one split (S = 64) and over two (S = 3000, position 2500).
TEST(AttentionDecode, AllLiveScoresMinusInfGiveNaNNoLivePositionGivesZero) {
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t Hq = 6, Hkv = 3, Dh = 64;
  for (const int64_t S : {int64_t{64}, int64_t{3000}}) {
    const int64_t pos = S == 64 ? 40 : 2500;
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> q(Hq * Dh), k(Hkv * S * Dh), v(Hkv * S * Dh), o(Hq * Dh);
    for (auto* x : {&q, &k, &v}) {
      for (float& e : *x) e = u(rng);
    }
    for (int64_t h = 0; h < 4; ++h) q[h * Dh] = 1;
    for (int64_t g = 0; g < 2; ++g) {
      for (int64_t j = 0; j < S; ++j) k[(g * S + j) * Dh] = g == 1 && j == 7 ? 0.5f : -inf;
    }
    std::vector<float> window(S, -inf);
    for (int64_t j = 5; j <= 9; ++j) window[j] = 0;
    for (const bool masked : {false, true}) {
      std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end()),
          md(window.begin(), window.end()), want(o.size());
      const int64_t posd = pos;
      golden::attention_core(qd.data(), kd.data(), vd.data(), &posd, masked ? md.data() : nullptr, 1, Hq, Hkv, Dh, S,
                             want.data());
      for (int64_t i = 0; i < 2 * Dh; ++i) ASSERT_TRUE(std::isnan(want[i])) << "the reference, kv head 0";
      for (const char* target : {"cpu", "cpu:avx2", "cpu:sse41"}) {
        int32_t p = static_cast<int32_t>(pos);
        TensorMap t = decode_tensors(q, k, v, &p, masked ? window.data() : nullptr, o, Hq, Hkv, Dh, S);
        run_call(bind_call(find_op("attention"), target, t, {}));
        expect_like_reference(o, want, std::string(target) + " S = " + std::to_string(S) + (masked ? " masked" : ""));
      }
    }
    // Nothing live: every position masked out gives 0 for every head.
    std::vector<float> none(S, -inf);
    int32_t p = static_cast<int32_t>(pos);
    TensorMap t = decode_tensors(q, k, v, &p, none.data(), o, Hq, Hkv, Dh, S);
    for (const char* target : {"cpu", "cpu:avx2", "cpu:sse41"}) {
      std::fill(o.begin(), o.end(), -1.0f);
      run_call(bind_call(find_op("attention"), target, t, {}));
      for (size_t i = 0; i < o.size(); ++i) ASSERT_EQ(o[i], 0.0f) << target << " S = " << S << " o[" << i << "]";
    }
  }
}

// The decode kernel is specialized for Dh = 64 and 128, which every gate case uses; the
// general path here, with query groups that are not a multiple of its head block (6), a
// cache whose length is not a multiple of its position blocks (4 for scores, 16 for v), and
// NaN rows right after the position, inside the position's last block.
TEST(AttentionDecode, OtherHeadDimsAndRaggedEnds) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Shape {
    int64_t Hq, Hkv, Dh, S, pos;
  };
  // The last two: one kv head for 64 query heads at Dh = 256, whose per-head buffers (64 KB
  // of q rows) outgrow Halide's stack allocations and come from the heap, on a short cache
  // (serial tasks) and a longer one.
  for (const Shape& sh : {Shape{12, 2, 96, 2051, 2049}, Shape{6, 1, 40, 4099, 4098}, Shape{8, 2, 128, 37, 33},
                          Shape{8, 8, 64, 18, 16}, Shape{64, 1, 256, 20, 19}, Shape{64, 1, 256, 100, 70}}) {
    uint32_t state = 777;
    auto uniform = [&] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>(state >> 8) / float(1 << 24) * 2 - 1;
    };
    const int64_t Hq = sh.Hq, Hkv = sh.Hkv, Dh = sh.Dh, S = sh.S;
    std::vector<float> q(Hq * Dh), k(Hkv * S * Dh), v(Hkv * S * Dh), mask(S, 0.0f), o(Hq * Dh);
    for (float& x : q) x = uniform();
    for (float& x : k) x = uniform();
    for (float& x : v) x = uniform();
    for (size_t i = (sh.pos + 1) * Dh; i < k.size(); ++i) {
      if (i % (S * Dh) >= static_cast<size_t>((sh.pos + 1) * Dh)) k[i] = v[i] = nan;
    }
    std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end()),
        md(mask.begin(), mask.end()), want(o.size());
    const int64_t posd = sh.pos;
    golden::attention_core(qd.data(), kd.data(), vd.data(), &posd, md.data(), 1, Hq, Hkv, Dh, S, want.data());
    for (const char* target : {"cpu", "cpu:avx2", "cpu:sse41"}) {
      int32_t p = static_cast<int32_t>(sh.pos);
      TensorMap t = decode_tensors(q, k, v, &p, nullptr, o, Hq, Hkv, Dh, S);
      run_call(bind_call(find_op("attention"), target, t, {}));
      for (size_t i = 0; i < o.size(); ++i) {
        EXPECT_NEAR(o[i], want[i], 1e-5 + 1e-4 * std::abs(want[i]))
            << target << " Dh = " << Dh << " S = " << S << " pos = " << sh.pos << " o[" << i << "]";
      }
    }
  }
}

// A short cache's call keeps each task's per-head buffers (q rows, stats,
// sums, Σ weight · v) on the stack: the heap serves only the scores and weights, sized by
// the positions (two per task), and the partials (one buffer). With all twelve per task
// from the heap they were 9% of the call (docs/performance.md).
TEST(AttentionDecode, ShortCacheTakesTwoHeapBlocksPerTask) {
  const int64_t Hq = 32, Hkv = 8, Dh = 128, S = 16;
  std::vector<float> q(Hq * Dh, 0.5f), k(Hkv * S * Dh, 0.25f), v(Hkv * S * Dh, 1.0f), o(Hq * Dh);
  int32_t p = static_cast<int32_t>(S - 1);
  TensorMap t = decode_tensors(q, k, v, &p, nullptr, o, Hq, Hkv, Dh, S);
  testing_malloc::HookedMalloc hook;
  for (const char* target : {"cpu", "cpu:avx2", "cpu:sse41"}) {
    const Call call = bind_call(find_op("attention"), target, t, {});
    testing_malloc::allocations = 0;
    run_call(call);
    EXPECT_EQ(testing_malloc::allocations.load(), 2 * Hkv + 1) << target;
    for (float x : o) ASSERT_EQ(x, 1.0f) << target << ": every v row is 1";
  }
}

}  // namespace
}  // namespace npukit
