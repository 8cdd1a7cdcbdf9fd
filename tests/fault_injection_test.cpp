// A kernel that fails mid-call: every heap allocation the fused qkv_attention's kernels make
// through Halide (halide_malloc) is failed in turn. Each such call must end in an error, not
// a crash or a silent success; leave the KV caches as they were outside the rows it was
// writing; and the same call retried must give the bytes of a call that never failed.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "HalideRuntime.h"
#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/halide_call.h"
#include "runtime/registry.h"
#include "tests/qkv_layer.h"

namespace npukit {
namespace {

// Counts halide_malloc calls, and fails the one numbered `fail_at` (1-based; 0: none).
// Zero-byte requests are not counted and get no block: Halide asks for 0 bytes where a
// stage the call skips would have had its buffer (the one-split decode's combine), and a
// null result there is no failure.
std::atomic<int> allocations{0};
std::atomic<int> fail_at{0};

void* counting_malloc(void*, size_t bytes) {
  if (bytes == 0) return nullptr;
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
  // npukit's own allocator is installed first, so that the first kernel call does not
  // replace this hook, and the destructor puts it back.
  HookedMalloc()
      : malloc_((install_halide_handlers(), halide_set_custom_malloc(counting_malloc))),
        free_(halide_set_custom_free(counting_free)) {}
  ~HookedMalloc() {
    halide_set_custom_malloc(malloc_);
    halide_set_custom_free(free_);
  }

 private:
  halide_malloc_t malloc_;
  halide_free_t free_;
};

// Whether cache `now` equals `before` outside rows [pos, pos + T) of every head of `l`.
bool untouched_outside_new_rows(const Layer& l, int64_t pos, const std::vector<float>& now,
                                const std::vector<float>& before) {
  for (int64_t h = 0; h < l.Hkv; ++h) {
    for (int64_t s = 0; s < l.S; ++s) {
      if (s >= pos && s < pos + l.T) continue;
      const size_t at = static_cast<size_t>((h * l.S + s) * l.Dh);
      if (std::memcmp(&now[at], &before[at], l.Dh * sizeof(float)) != 0) return false;
    }
  }
  return true;
}

Call call_of(Layer& l, int64_t pos) { return bind_call(find_op("qkv_attention"), "cpu", l.views(), l.params(pos)); }

void check_every_allocation_failure(int64_t T, int64_t pos) {
  HookedMalloc hook;
  const int64_t S = 24;
  Layer clean(T, S);
  allocations = 0;
  fail_at = 0;
  run_call(call_of(clean, pos));
  const int total = allocations.load();
  std::printf("T = %lld: %d heap allocations through halide_malloc, each failed in turn\n", static_cast<long long>(T), total);
  // T > 1 materialises the projected rows and the attention's scores on the heap: a call
  // that allocates nothing would make this test check nothing.
  ASSERT_GE(total, T > 1 ? 2 : 1) << "T = " << T << ": the kernels made no heap allocation";
  for (int k = 1; k <= total; ++k) {
    Layer l(T, S);
    const std::vector<float> k_before = l.k, v_before = l.v;
    allocations = 0;
    fail_at = k;
    bool failed = false;
    try {
      run_call(call_of(l, pos));
    } catch (const Error& e) {
      failed = true;
      EXPECT_EQ(e.code(), Errc::kernel_failed) << "allocation " << k << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("failed (Halide status"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(failed) << "allocation " << k << " of " << total << " failed, yet the call reported success";
    EXPECT_TRUE(untouched_outside_new_rows(l, pos, l.k, k_before)) << "allocation " << k << ": k_cache changed outside its new rows";
    EXPECT_TRUE(untouched_outside_new_rows(l, pos, l.v, v_before)) << "allocation " << k << ": v_cache changed outside its new rows";
    fail_at = 0;
    run_call(call_of(l, pos));  // the retry, on the caches as the failed call left them
    EXPECT_EQ(std::memcmp(l.y.data(), clean.y.data(), l.y.size() * sizeof(float)), 0) << "allocation " << k << ": y";
    EXPECT_EQ(l.k, clean.k) << "allocation " << k << ": k_cache after the retry";
    EXPECT_EQ(l.v, clean.v) << "allocation " << k << ": v_cache after the retry";
  }
}

TEST(FaultInjection, EveryFailedAllocationOfPrefillIsAnErrorAndTheRetryIsExact) { check_every_allocation_failure(5, 7); }

TEST(FaultInjection, EveryFailedAllocationOfDecodeIsAnErrorAndTheRetryIsExact) { check_every_allocation_failure(1, 11); }

}  // namespace
}  // namespace npukit
