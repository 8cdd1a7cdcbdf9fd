// A kernel that fails mid-call: every heap allocation the fused qkv_attention's kernels make
// through Halide (halide_malloc) is failed in turn. Each such call must end in an error, not
// a crash or a silent success; leave the KV caches as they were outside the rows it was
// writing; and the same call retried must give the bytes of a call that never failed.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "HalideRuntime.h"
#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

// Counts halide_malloc calls, and fails the one numbered `fail_at` (1-based; 0: none).
std::atomic<int> allocations{0};
std::atomic<int> fail_at{0};

void* counting_malloc(void*, size_t bytes) {
  const int n = ++allocations;
  if (n == fail_at.load()) return nullptr;
  // Halide's own default aligns to 128 bytes and keeps the base just before the block.
  void* base = std::malloc(bytes + 128 + sizeof(void*));
  if (base == nullptr) return nullptr;
  auto aligned = (reinterpret_cast<uintptr_t>(base) + sizeof(void*) + 127) & ~uintptr_t(127);
  reinterpret_cast<void**>(aligned)[-1] = base;
  return reinterpret_cast<void*>(aligned);
}

void counting_free(void*, void* p) {
  if (p != nullptr) std::free(reinterpret_cast<void**>(p)[-1]);
}

class HookedMalloc {
 public:
  HookedMalloc() : malloc_(halide_set_custom_malloc(counting_malloc)), free_(halide_set_custom_free(counting_free)) {}
  ~HookedMalloc() {
    halide_set_custom_malloc(malloc_);
    halide_set_custom_free(free_);
  }

 private:
  halide_malloc_t malloc_;
  halide_free_t free_;
};

// A GQA layer with T new tokens at `pos` of an S-position cache, fp32.
struct Layer {
  int64_t T, S = 24, D = 32, Hq = 4, Hkv = 2, Dh = 8, pos;
  std::vector<float> x, w_qkv, w_o, k, v, y;
  Layer(int64_t T_, int64_t pos_) : T(T_), pos(pos_) {
    auto fill = [](std::vector<float>& a, size_t n, float scale, int seed) {
      a.resize(n);
      for (size_t i = 0; i < n; ++i) a[i] = scale * std::sin(0.37f * float(i) + float(seed));
    };
    fill(x, T * D, 1.0f, 1);
    fill(w_qkv, (Hq + 2 * Hkv) * Dh * D, 0.2f, 2);
    fill(w_o, D * Hq * Dh, 0.2f, 3);
    fill(k, Hkv * S * Dh, 1.0f, 4);
    fill(v, Hkv * S * Dh, 1.0f, 5);
    y.assign(T * D, std::nanf(""));
  }
  Call call() {
    const TensorMap views = {{"x", {x.data(), DType::float32, {T, D}, {}}},
                             {"w_qkv", {w_qkv.data(), DType::float32, {(Hq + 2 * Hkv) * Dh, D}, {}}},
                             {"w_o", {w_o.data(), DType::float32, {D, Hq * Dh}, {}}},
                             {"k_cache", {k.data(), DType::float32, {Hkv, S, Dh}, {}}},
                             {"v_cache", {v.data(), DType::float32, {Hkv, S, Dh}, {}}},
                             {"y", {y.data(), DType::float32, {T, D}, {}}}};
    return bind_call(find_op("qkv_attention"), "cpu", views, {{"pos", std::to_string(pos)}});
  }
  // Whether cache `now` equals `before` outside rows [pos, pos + T) of every head.
  bool untouched_outside_new_rows(const std::vector<float>& now, const std::vector<float>& before) const {
    for (int64_t h = 0; h < Hkv; ++h) {
      for (int64_t s = 0; s < S; ++s) {
        if (s >= pos && s < pos + T) continue;
        const size_t at = static_cast<size_t>((h * S + s) * Dh);
        if (std::memcmp(&now[at], &before[at], Dh * sizeof(float)) != 0) return false;
      }
    }
    return true;
  }
};

void check_every_allocation_failure(int64_t T, int64_t pos) {
  HookedMalloc hook;
  Layer clean(T, pos);
  allocations = 0;
  fail_at = 0;
  run_call(clean.call());
  const int total = allocations.load();
  std::printf("T = %lld: %d heap allocations through halide_malloc, each failed in turn\n", static_cast<long long>(T), total);
  // T > 1 materialises the projected rows and the attention's scores on the heap: a call
  // that allocates nothing would make this test check nothing.
  ASSERT_GE(total, T > 1 ? 2 : 1) << "T = " << T << ": the kernels made no heap allocation";
  for (int k = 1; k <= total; ++k) {
    Layer l(T, pos);
    const std::vector<float> k_before = l.k, v_before = l.v;
    allocations = 0;
    fail_at = k;
    bool failed = false;
    try {
      run_call(l.call());
    } catch (const Error& e) {
      failed = true;
      EXPECT_EQ(e.code(), Errc::kernel_failed) << "allocation " << k << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("failed (Halide status"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(failed) << "allocation " << k << " of " << total << " failed, yet the call reported success";
    EXPECT_TRUE(l.untouched_outside_new_rows(l.k, k_before)) << "allocation " << k << ": k_cache changed outside its new rows";
    EXPECT_TRUE(l.untouched_outside_new_rows(l.v, v_before)) << "allocation " << k << ": v_cache changed outside its new rows";
    fail_at = 0;
    run_call(l.call());  // the retry, on the caches as the failed call left them
    EXPECT_EQ(std::memcmp(l.y.data(), clean.y.data(), l.y.size() * sizeof(float)), 0) << "allocation " << k << ": y";
    EXPECT_EQ(l.k, clean.k) << "allocation " << k << ": k_cache after the retry";
    EXPECT_EQ(l.v, clean.v) << "allocation " << k << ": v_cache after the retry";
  }
}

TEST(FaultInjection, EveryFailedAllocationOfPrefillIsAnErrorAndTheRetryIsExact) { check_every_allocation_failure(5, 7); }

TEST(FaultInjection, EveryFailedAllocationOfDecodeIsAnErrorAndTheRetryIsExact) { check_every_allocation_failure(1, 11); }

}  // namespace
}  // namespace npukit
