// A kernel that fails mid-call: every heap allocation the fused qkv_attention's kernels make
// through Halide (halide_malloc) is failed in turn. Each such call must end in an error, not
// a crash or a silent success; leave the KV caches as they were outside the rows it was
// writing; and the same call retried must give the bytes of a call that never failed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "tests/counting_malloc.h"
#include "tests/qkv_layer.h"

namespace npukit {
namespace {

using testing_malloc::allocations;
using testing_malloc::fail_at;
using testing_malloc::HookedMalloc;

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
