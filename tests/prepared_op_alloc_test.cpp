// A prepared op's run allocates nothing on the heap (or, for ops with large intermediates,
// only small bookkeeping): this binary replaces malloc and its
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
std::atomic<size_t> allocated_bytes{0};

void count(size_t bytes) {
  if (!counting.load(std::memory_order_relaxed)) return;
  allocations.fetch_add(1, std::memory_order_relaxed);
  allocated_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace

extern "C" {
void* malloc(size_t n) {
  count(n);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  count(n * size);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  count(n);
  return __libc_realloc(p, n);
}
void* memalign(size_t align, size_t n) {
  count(n);
  return __libc_memalign(align, n);
}
void* aligned_alloc(size_t align, size_t n) {
  count(n);
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  count(n);
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

// Bytes allocated per call of `f` over `times` calls, after one warm-up call.
template <class F>
size_t bytes_per_call(int times, F&& f) {
  f();
  allocated_bytes = 0;
  allocations_in(times, f);
  return allocated_bytes.load() / static_cast<size_t>(times);
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
    call_cpu_kernel(kernels::rope_interleaved_f32, "", xb.get(), pb.get(), 10000.0,
                    int32_t(64), yb.get());
  };
  direct();
  const long kernel = allocations_in(1000, direct);
  EXPECT_EQ(allocations_in(1000, [&] { npukit_op_run(op, named, 3); }), kernel);
  npukit_op_destroy(op);
}

// The large intermediates of a run come from the prepared op's arena
// (runtime/scratch_arena.h), reused from run to run: here int8_gemm's int32 accumulator.
// What remains is small bookkeeping (tensor views' shapes). (qkv_attention's q, o and
// accumulators come from the arena too, but its Halide kernels allocate per-task buffers of
// their own, about 125 KiB a decode run at D = 2048, which this counter cannot tell apart.)
TEST(PreparedOpAlloc, Int8GemmReusesItsAccumulator) {
  const int64_t M = 64, K = 256, N = 1024;  // acc: 256 KiB of int32
  Tensor a({M, K / 4}, {kDLInt, 8, 1}), w({N, K / 4}, {kDLInt, 8, 1}), ws({N}), s({M}), y({M, N});
  a.shape[1] = w.shape[1] = K;  // 4 int8 per float of storage
  const npukit_param p[] = {{"out", "float32"}};
  npukit_op* op = npukit_op_create("int8_gemm", "cpu", p, 1);
  ASSERT_NE(op, nullptr) << npukit_last_error();
  ASSERT_EQ(npukit_op_set_constant(op, "w", &w.dl), NPUKIT_OK) << npukit_last_error();
  const npukit_tensor t[] = {{"a", &a.dl}, {"w_scale", &ws.dl}, {"a_scales", &s.dl}, {"y", &y.dl}};
  const size_t bytes = bytes_per_call(5, [&] { ASSERT_EQ(npukit_op_run(op, t, 4), NPUKIT_OK) << npukit_last_error(); });
  EXPECT_LT(bytes, 4096u) << "the accumulator alone is " << M * N * 4 << " B";
  EXPECT_TRUE(std::isfinite(y.data[0]) && y.data[0] != 0.25f);
  npukit_op_destroy(op);
}

}  // namespace
