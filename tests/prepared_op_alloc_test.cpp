// A prepared op's run allocates nothing on the heap: this binary replaces malloc and its
// relatives (which operator new, the Halide runtime and libnpukit.so all reach) with
// counting wrappers around glibc's, and counts over many runs after a warm-up.
#include <gtest/gtest.h>

#include <malloc.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "kernels/rope_interleaved_f32.h"
#include "npukit/npukit.h"
#include "runtime/halide_call.h"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {

std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void count() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

extern "C" {
void* malloc(size_t n) {
  count();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  count();
  return __libc_realloc(p, n);
}
void* memalign(size_t align, size_t n) {
  count();
  return __libc_memalign(align, n);
}
void* aligned_alloc(size_t align, size_t n) {
  count();
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  count();
  *out = __libc_memalign(align, n);
  return *out ? 0 : ENOMEM;
}
void free(void* p) { __libc_free(p); }
}

namespace {

// Heap allocations made by `f` called `times` times.
template <class F>
long allocations_in(int times, F&& f) {
  allocations = 0;
  counting = true;
  for (int i = 0; i < times; ++i) f();
  counting = false;
  return allocations.load();
}

struct Tensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
  DLTensor dl{};
  explicit Tensor(std::vector<int64_t> s, DLDataType dtype = {kDLFloat, 32, 1}) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(static_cast<size_t>(n), 0.25f);
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
  }
};

TEST(PreparedOpAlloc, CounterSeesAllocations) {
  // The counter itself can fail: npukit_run parses and allocates on every call.
  Tensor x({1, 4096}), w({4096}), y({1, 4096});
  const npukit_tensor t[] = {{"x", &x.dl}, {"weight", &w.dl}, {"y", &y.dl}};
  const npukit_param p[] = {{"eps", "1e-5"}};
  ASSERT_EQ(npukit_run("rms_norm", "cpu", t, 3, p, 1), NPUKIT_OK) << npukit_last_error();
  EXPECT_GT(allocations_in(10, [&] { npukit_run("rms_norm", "cpu", t, 3, p, 1); }), 10);
}

TEST(PreparedOpAlloc, RmsNormRunsAllocateNothing) {
  Tensor x({1, 4096}), w({4096}), y({1, 4096});
  const npukit_param p[] = {{"eps", "1e-5"}};
  npukit_op* op = npukit_op_create("rms_norm", "cpu", p, 1);
  ASSERT_NE(op, nullptr) << npukit_last_error();
  const npukit_tensor named[] = {{"x", &x.dl}, {"weight", &w.dl}, {"y", &y.dl}};
  const DLTensor* pos[] = {&x.dl, &w.dl, &y.dl};
  // The first run fills the op's reused call (its maps and shape vectors).
  ASSERT_EQ(npukit_op_run(op, named, 3), NPUKIT_OK) << npukit_last_error();
  ASSERT_EQ(npukit_op_run_positional(op, pos, 3), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(allocations_in(1000, [&] { npukit_op_run(op, named, 3); }), 0);
  EXPECT_EQ(allocations_in(1000, [&] { npukit_op_run_positional(op, pos, 3); }), 0);
  EXPECT_STREQ(npukit_last_error(), "");
  EXPECT_TRUE(std::isfinite(y.data[0]) && y.data[0] != 0.25f);
  npukit_op_destroy(op);
}

// RoPE's kernel allocates its angle tables itself (Halide heap allocations inside the
// kernel): a run through the prepared op adds nothing to what the kernel alone does.
TEST(PreparedOpAlloc, RopeRunsAddNothingToTheKernel) {
  Tensor x({2, 4, 64}), positions({2}, {kDLInt, 32, 1}), y({2, 4, 64});
  reinterpret_cast<int32_t*>(positions.data.data())[0] = 5;
  reinterpret_cast<int32_t*>(positions.data.data())[1] = 6;
  const npukit_param p[] = {{"style", "interleaved"}, {"theta", "10000"}};
  npukit_op* op = npukit_op_create("rope", "cpu", p, 2);
  ASSERT_NE(op, nullptr) << npukit_last_error();
  const npukit_tensor named[] = {{"x", &x.dl}, {"positions", &positions.dl}, {"y", &y.dl}};
  ASSERT_EQ(npukit_op_run(op, named, 3), NPUKIT_OK) << npukit_last_error();

  using namespace npukit;
  const TensorView xv{x.data.data(), DType::float32, x.shape, {}}, pv{positions.data.data(), DType::int32, {2}, {}},
      yv{y.data.data(), DType::float32, y.shape, {}};
  HalideBuffer xb(xv), pb(pv), yb(yv);
  auto direct = [&] {
    call_cpu_kernel(kernels::rope_interleaved_f32, "rope_interleaved_f32", "", xb.get(), pb.get(), 10000.0,
                    int32_t(64), yb.get());
  };
  direct();
  const long kernel = allocations_in(1000, direct);
  EXPECT_EQ(allocations_in(1000, [&] { npukit_op_run(op, named, 3); }), kernel);
  npukit_op_destroy(op);
}

}  // namespace
