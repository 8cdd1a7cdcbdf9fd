// A prepared op's warm run allocates nothing on the heap: this binary replaces malloc and its
// relatives (which operator new, the Halide runtime and libnpukit.so all reach) with
// counting wrappers around glibc's, and counts over many runs after a warm-up. On one
// Halide thread (HL_NUM_THREADS=1, tests/CMakeLists.txt): with several, the kernels' block
// pool grows until it holds the most blocks their tasks ever had live at once, which
// depends on how the threads interleave, so the run that first reaches a new peak still
// takes a block from the system (tests/halide_memory_test.cpp covers the pool itself).
#include <gtest/gtest.h>

#include <malloc.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "npukit/npukit.h"

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

// RoPE's kernel allocates its angle tables itself (halide_malloc), from npukit's block
// pool (runtime/halide_memory.h) once it is warm: a run allocates nothing.
TEST(PreparedOpAlloc, RopeRunsAllocateNothing) {
  Tensor x({2, 4, 64}), positions({2}, {kDLInt, 32, 1}), y({2, 4, 64});
  reinterpret_cast<int32_t*>(positions.data.data())[0] = 5;
  reinterpret_cast<int32_t*>(positions.data.data())[1] = 6;
  const npukit_param p[] = {{"style", "interleaved"}, {"theta", "10000"}};
  npukit_op* op = npukit_op_create("rope", "cpu", p, 2);
  ASSERT_NE(op, nullptr) << npukit_last_error();
  const npukit_tensor named[] = {{"x", &x.dl}, {"positions", &positions.dl}, {"y", &y.dl}};
  ASSERT_EQ(npukit_op_run(op, named, 3), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(allocations_in(1000, [&] { npukit_op_run(op, named, 3); }), 0);
  EXPECT_STREQ(npukit_last_error(), "");
  npukit_op_destroy(op);
}

// The large intermediates of a run come from the prepared op's arena
// (runtime/scratch_arena.h), reused from run to run: here int8_gemm's int32 accumulator,
// and, for M = 61 (not whole row tiles), the padded copy of a.
TEST(PreparedOpAlloc, Int8GemmRunsAllocateNothing) {
  for (const int64_t M : {64, 61}) {
    const int64_t K = 256, N = 1024;  // acc: 256 KiB of int32
    Tensor a({M, K / 4}, {kDLInt, 8, 1}), w({N, K / 4}, {kDLInt, 8, 1}), ws({N}), s({M}), y({M, N});
    a.shape[1] = w.shape[1] = K;  // 4 int8 per float of storage
    const npukit_param p[] = {{"out", "float32"}};
    npukit_op* op = npukit_op_create("int8_gemm", "cpu", p, 1);
    ASSERT_NE(op, nullptr) << npukit_last_error();
    ASSERT_EQ(npukit_op_set_constant(op, "w", &w.dl), NPUKIT_OK) << npukit_last_error();
    const npukit_tensor t[] = {{"a", &a.dl}, {"w_scale", &ws.dl}, {"a_scales", &s.dl}, {"y", &y.dl}};
    ASSERT_EQ(npukit_op_run(op, t, 4), NPUKIT_OK) << npukit_last_error();
    EXPECT_EQ(allocations_in(20, [&] { npukit_op_run(op, t, 4); }), 0) << "M = " << M;
    EXPECT_STREQ(npukit_last_error(), "");
    EXPECT_TRUE(std::isfinite(y.data[0]) && y.data[0] != 0.25f);
    npukit_op_destroy(op);
  }
}

// A decode step of the fused layer (projections, RoPE, cache update, attention, output
// projection): its q, o and accumulators come from the arena, and what its Halide kernels
// allocate per task from the block pool. With float weights, and with int8 weights packed
// once as constants.
TEST(PreparedOpAlloc, QkvAttentionDecodeRunsAllocateNothing) {
  const int64_t D = 256, Hq = 4, Hkv = 2, Dh = 64, S = 64, QKV = (Hq + 2 * Hkv) * Dh;
  for (const bool int8_weights : {false, true}) {
    const DLDataType wt = int8_weights ? DLDataType{kDLInt, 8, 1} : DLDataType{kDLFloat, 32, 1};
    const int64_t per = int8_weights ? 4 : 1;  // int8 per float of storage
    Tensor x({1, D}), wq({QKV, D / per}, wt), wo({D, Hq * Dh / per}, wt), sq({QKV}), so({D});
    Tensor k({Hkv, S, Dh}), v({Hkv, S, Dh}), y({1, D});
    wq.shape[1] = D;
    wo.shape[1] = Hq * Dh;
    const npukit_param p[] = {{"pos", "17"}, {"heads", "4"}, {"kv_heads", "2"}, {"head_dim", "64"}};
    npukit_op* op = npukit_op_create("qkv_attention", "cpu", p, 4);
    ASSERT_NE(op, nullptr) << npukit_last_error();
    std::vector<npukit_tensor> t = {{"x", &x.dl}, {"k_cache", &k.dl}, {"v_cache", &v.dl}, {"y", &y.dl}};
    if (int8_weights) {
      ASSERT_EQ(npukit_op_set_constant(op, "w_qkv", &wq.dl), NPUKIT_OK) << npukit_last_error();
      ASSERT_EQ(npukit_op_set_constant(op, "w_o", &wo.dl), NPUKIT_OK) << npukit_last_error();
      t.push_back({"w_qkv_scale", &sq.dl});
      t.push_back({"w_o_scale", &so.dl});
    } else {
      t.push_back({"w_qkv", &wq.dl});
      t.push_back({"w_o", &wo.dl});
    }
    ASSERT_EQ(npukit_op_run(op, t.data(), t.size()), NPUKIT_OK) << npukit_last_error();
    EXPECT_EQ(allocations_in(50, [&] { npukit_op_run(op, t.data(), t.size()); }), 0)
        << (int8_weights ? "int8" : "float") << " weights";
    EXPECT_STREQ(npukit_last_error(), "");
    EXPECT_TRUE(std::isfinite(y.data[0]));
    npukit_op_destroy(op);
  }
}

}  // namespace
