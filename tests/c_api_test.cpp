// The C ABI as a framework uses it: libnpukit.so alone, DLPack tensors, statuses and
// messages instead of exceptions, and nothing exported but npukit_*.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "npukit/npukit.h"

namespace {

// Whether this machine has a CUDA driver (libcuda), which the kit loads at its first GPU call.
bool cuda_driver_present() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib) dlclose(lib);
  return lib != nullptr;
}

// A kDLCUDA tensor at a fake device address: reading it on the host would crash.
DLTensor fake_cuda(uintptr_t address, std::vector<int64_t>& shape, DLDataType dtype) {
  return DLTensor{reinterpret_cast<void*>(address), {kDLCUDA, 0}, static_cast<int32_t>(shape.size()), dtype,
                  shape.data(), nullptr, 0};
}

// A prepared op on gpu-cuda with host constants, run on fake device tensors: the run must
// stop at the missing device, having read no device pointer on the host.
void expect_prepared_run_finds_no_cuda(const char* op_name, const std::vector<npukit_tensor>& constants,
                                       const std::vector<npukit_tensor>& tensors) {
  npukit_op* op = npukit_op_create(op_name, "gpu-cuda", nullptr, 0);
  ASSERT_NE(op, nullptr) << npukit_last_error();
  for (const npukit_tensor& c : constants) {
    ASSERT_EQ(npukit_op_set_constant(op, c.name, c.tensor), NPUKIT_OK) << npukit_last_error();
  }
  EXPECT_EQ(npukit_op_run(op, tensors.data(), tensors.size()), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("no CUDA device was found"), std::string::npos) << npukit_last_error();
  npukit_op_destroy(op);
}

// Tests that pass fake device pointers: they must stop at the missing device.
constexpr const char* kFakePointersNeedNoDriver =
    "not runnable here: a CUDA driver is present, and these fake device pointers would reach it "
    "(bench/gpu/run_device.sh runs real ones)";

DLTensor f32_tensor(float* data, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  return t;
}

TEST(CApi, RunsRmsNormOnDlpackTensors) {
  std::vector<float> x(2 * 8), w(8, 2.0f), y(2 * 8, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 8) - 3.5f;
  std::vector<int64_t> xs{2, 8}, ws{8};
  DLTensor tx = f32_tensor(x.data(), xs), tw = f32_tensor(w.data(), ws), ty = f32_tensor(y.data(), xs);
  const npukit_tensor tensors[] = {{"x", &tx}, {"weight", &tw}, {"y", &ty}};
  const npukit_param params[] = {{"eps", "0"}};
  ASSERT_EQ(npukit_run("rms_norm", nullptr, tensors, 3, params, 1), NPUKIT_OK) << npukit_last_error();
  double ss = 0;
  for (int i = 0; i < 8; ++i) ss += x[i] * x[i];
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(y[i], x[i] / std::sqrt(ss / 8) * 2.0, 1e-5);
  EXPECT_STREQ(npukit_last_error(), "");
}

// In/out tensors: the KV caches of qkv_attention are passed once and updated in place;
// only the new position changes, and an out-of-range position writes nothing.
TEST(CApi, UpdatesInOutCachesInPlace) {
  const int64_t D = 8, Hq = 2, Hkv = 1, Dh = 4, S = 6, pos = 3;
  std::vector<float> x(D, 0.5f), wqkv((Hq + 2 * Hkv) * Dh * D), wo(D * Hq * Dh, 0.1f), k(Hkv * S * Dh, 7.0f),
      v(Hkv * S * Dh, 9.0f), y(D, -1.0f);
  for (size_t i = 0; i < wqkv.size(); ++i) wqkv[i] = 0.01f * static_cast<float>(i % 13);
  std::vector<int64_t> xs{1, D}, wqs{(Hq + 2 * Hkv) * Dh, D}, wos{D, Hq * Dh}, cs{Hkv, S, Dh};
  DLTensor tx = f32_tensor(x.data(), xs), twq = f32_tensor(wqkv.data(), wqs), two = f32_tensor(wo.data(), wos),
           tk = f32_tensor(k.data(), cs), tv = f32_tensor(v.data(), cs), ty = f32_tensor(y.data(), xs);
  const npukit_tensor tensors[] = {{"x", &tx}, {"w_qkv", &twq}, {"w_o", &two}, {"k_cache", &tk}, {"v_cache", &tv}, {"y", &ty}};
  const npukit_param bad[] = {{"pos", "6"}};
  EXPECT_EQ(npukit_run("qkv_attention", "cpu", tensors, 6, bad, 1), NPUKIT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(npukit_last_error()).find("pos = 6 with T = 1"), std::string::npos) << npukit_last_error();
  for (float f : k) EXPECT_EQ(f, 7.0f);
  const npukit_param params[] = {{"pos", "3"}, {"style", "interleaved"}};
  ASSERT_EQ(npukit_run("qkv_attention", "cpu", tensors, 6, params, 2), NPUKIT_OK) << npukit_last_error();
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t d = 0; d < Dh; ++d) {
      EXPECT_EQ(k[s * Dh + d] != 7.0f, s == pos) << "k s=" << s;
      EXPECT_EQ(v[s * Dh + d] != 9.0f, s == pos) << "v s=" << s;
    }
  }
  for (float f : y) EXPECT_TRUE(std::isfinite(f) && f != -1.0f);
}

TEST(CApi, ErrorsAreStatusesWithMessages) {
  std::vector<float> x(16), w(7), y(16);
  std::vector<int64_t> xs{2, 8}, ws{7};
  DLTensor tx = f32_tensor(x.data(), xs), tw = f32_tensor(w.data(), ws), ty = f32_tensor(y.data(), xs);
  const npukit_tensor tensors[] = {{"x", &tx}, {"weight", &tw}, {"y", &ty}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", tensors, 3, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "rms_norm: tensor weight: dimension hidden = 7 but tensor x has hidden = 8; they must be equal");

  EXPECT_EQ(npukit_run("softmax", "cpu", tensors, 3, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(npukit_last_error()).find("unknown op 'softmax'"), std::string::npos);

  DLTensor gpu = tx;
  gpu.device = {kDLCUDA, 0};
  const npukit_tensor on_gpu[] = {{"x", &gpu}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", on_gpu, 1, nullptr, 0), NPUKIT_UNSUPPORTED);
  EXPECT_STREQ(npukit_last_error(), "rms_norm: tensor x is CUDA device memory (kDLCUDA); target 'cpu' takes host "
                                    "tensors only (device tensors need target gpu-cuda)");
  EXPECT_EQ(npukit_run("rms_norm", "gpu-opencl", on_gpu, 1, nullptr, 0), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("target 'gpu-opencl' takes host tensors only"), std::string::npos);
  DLTensor opencl = tx;
  opencl.device = {kDLOpenCL, 0};
  const npukit_tensor on_opencl[] = {{"x", &opencl}};
  EXPECT_EQ(npukit_run("rms_norm", "gpu-opencl", on_opencl, 1, nullptr, 0), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("takes CPU tensors (kDLCPU), and CUDA tensors (kDLCUDA) on target gpu-cuda"),
            std::string::npos);

  const npukit_tensor null_tensor[] = {{"x", nullptr}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", null_tensor, 1, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "tensor x: DLTensor pointer is NULL");
  EXPECT_EQ(npukit_run(nullptr, "cpu", nullptr, 0, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_EQ(npukit_run("rms_norm", "cpu", nullptr, 2, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
}

// ABI 5: the machine a host's numbers come from. The tier is one the op ships, and a run
// forced to it succeeds; a bad op is NULL with a message.
TEST(CApi, NamesTheCpuAndTheTierEachOpDispatchesTo) {
  EXPECT_GT(std::strlen(npukit_cpu_model()), 0u);
  const char* tier = npukit_cpu_tier("rms_norm");
  ASSERT_NE(tier, nullptr) << npukit_last_error();
  EXPECT_TRUE(std::set<std::string>({"avx512", "avx2", "sse41"}).count(tier)) << tier;
  std::vector<float> x(16, 1.0f), w(8, 1.0f), y(16);
  std::vector<int64_t> xs{2, 8}, ws{8};
  DLTensor tx = f32_tensor(x.data(), xs), tw = f32_tensor(w.data(), ws), ty = f32_tensor(y.data(), xs);
  const npukit_tensor tensors[] = {{"x", &tx}, {"weight", &tw}, {"y", &ty}};
  EXPECT_EQ(npukit_run("rms_norm", ("cpu:" + std::string(tier)).c_str(), tensors, 3, nullptr, 0), NPUKIT_OK)
      << npukit_last_error();
  for (int i = 0; i < static_cast<int>(npukit_op_count()); ++i) {
    EXPECT_NE(npukit_cpu_tier(npukit_op_name(i)), nullptr) << npukit_op_name(i) << ": " << npukit_last_error();
  }
  EXPECT_EQ(npukit_cpu_tier("softmax"), nullptr);
  EXPECT_NE(std::string(npukit_last_error()).find("unknown op 'softmax'"), std::string::npos);
  EXPECT_EQ(npukit_cpu_tier(nullptr), nullptr);
  EXPECT_STREQ(npukit_last_error(), "npukit_cpu_tier: op is NULL");
}

// The GPU targets through the same C ABI: gpu-opencl runs on whatever OpenCL device is
// installed (PoCL in CI, with a fresh compiler cache); gpu-cuda without the CUDA driver is
// NPUKIT_UNSUPPORTED with a message, never an abort.
TEST(CApi, RunsOnGpuTargets) {
  std::vector<float> x(3 * 40), w(40, 0.5f), y(3 * 40, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) - 6.0f;
  std::vector<int64_t> xs{3, 40}, ws{40};
  DLTensor tx = f32_tensor(x.data(), xs), tw = f32_tensor(w.data(), ws), ty = f32_tensor(y.data(), xs);
  const npukit_tensor tensors[] = {{"x", &tx}, {"weight", &tw}, {"y", &ty}};
  const npukit_param params[] = {{"eps", "1e-6"}};
  ASSERT_EQ(npukit_run("rms_norm", "gpu-opencl", tensors, 3, params, 1), NPUKIT_OK) << npukit_last_error();
  for (int r = 0; r < 3; ++r) {
    double ss = 0;
    for (int i = 0; i < 40; ++i) ss += x[r * 40 + i] * x[r * 40 + i];
    for (int i = 0; i < 40; ++i) EXPECT_NEAR(y[r * 40 + i], x[r * 40 + i] / std::sqrt(ss / 40 + 1e-6) * 0.5, 1e-5);
  }
  const npukit_status cuda = npukit_run("rms_norm", "gpu-cuda", tensors, 3, params, 1);
  if (cuda_driver_present()) {
    EXPECT_EQ(cuda, NPUKIT_OK) << npukit_last_error();
  } else {
    EXPECT_EQ(cuda, NPUKIT_UNSUPPORTED);
    EXPECT_NE(std::string(npukit_last_error()).find("no CUDA device was found"), std::string::npos)
        << npukit_last_error();
  }
}

// attention takes CUDA tensors on gpu-cuda, its positions among them: those are read on the
// host (check() and the decode kernel's scalar), so they are copied there first, never read
// through the device pointer. Without a CUDA driver that copy is where the call stops.
TEST(CApi, AttentionTakesCudaTensorsAndCopiesItsPositions) {
  std::vector<int64_t> qs{1, 4, 8}, cs{2, 16, 8}, ps{1};
  const DLDataType f32{kDLFloat, 32, 1}, i32{kDLInt, 32, 1};
  DLTensor q = fake_cuda(0x10000, qs, f32), k = fake_cuda(0x20000, cs, f32), v = fake_cuda(0x30000, cs, f32),
           p = fake_cuda(0x40000, ps, i32), o = fake_cuda(0x50000, qs, f32);
  const npukit_tensor tensors[] = {{"q", &q}, {"k_cache", &k}, {"v_cache", &v}, {"positions", &p}, {"o", &o}};
  if (cuda_driver_present()) GTEST_SKIP() << kFakePointersNeedNoDriver;
  EXPECT_EQ(npukit_run("attention", "gpu-cuda", tensors, 5, nullptr, 0), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("no CUDA device was found"), std::string::npos) << npukit_last_error();
  npukit_op* op = npukit_op_create("attention", "gpu-cuda", nullptr, 0);
  ASSERT_NE(op, nullptr) << npukit_last_error();
  EXPECT_EQ(npukit_op_run(op, tensors, 5), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("no CUDA device was found"), std::string::npos) << npukit_last_error();
  npukit_op_destroy(op);
  // Another target still refuses them, naming the tensor.
  EXPECT_EQ(npukit_run("attention", "gpu-opencl", tensors, 5, nullptr, 0), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("target 'gpu-opencl' takes host tensors only"), std::string::npos);
}

// An int8 layer whose activations live on the GPU: per_token_quant and int8_gemm take CUDA
// tensors on gpu-cuda, and nothing is read through the device pointers before the device is
// looked for, which without a CUDA driver is where the call stops. int8_gemm's w (packed on
// the host by a plain call) is copied to the host first, which stops there too; a prepared
// op holds it as a host constant and keeps it on the device.
TEST(CApi, Int8LayerTakesCudaTensors) {
  if (cuda_driver_present()) GTEST_SKIP() << kFakePointersNeedNoDriver;
  std::vector<int64_t> as{2, 64}, ss{2};
  DLTensor a = fake_cuda(0x10000, as, DLDataType{kDLFloat, 32, 1});
  DLTensor q = fake_cuda(0x20000, as, DLDataType{kDLInt, 8, 1});
  DLTensor s = fake_cuda(0x30000, ss, DLDataType{kDLFloat, 32, 1});
  const npukit_tensor tensors[] = {{"a", &a}, {"q", &q}, {"scale", &s}};
  EXPECT_EQ(npukit_run("per_token_quant", "gpu-cuda", tensors, 3, nullptr, 0), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("no CUDA device was found"), std::string::npos) << npukit_last_error();

  std::vector<int64_t> ws{8, 64}, ys{2, 8};
  DLTensor w = fake_cuda(0x40000, ws, DLDataType{kDLInt, 8, 1});
  DLTensor y = fake_cuda(0x50000, ys, DLDataType{kDLInt, 32, 1});
  const npukit_tensor gemm[] = {{"a", &q}, {"w", &w}, {"y", &y}};
  EXPECT_EQ(npukit_run("int8_gemm", "gpu-cuda", gemm, 3, nullptr, 0), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("no CUDA device was found"), std::string::npos) << npukit_last_error();

  std::vector<int8_t> host_w(8 * 64, 1);
  DLTensor hw{host_w.data(), {kDLCPU, 0}, 2, {kDLInt, 8, 1}, ws.data(), nullptr, 0};
  expect_prepared_run_finds_no_cuda("int8_gemm", {{"w", &hw}}, {{"a", &q}, {"y", &y}});
}

// int4_gemm takes CUDA tensors on gpu-cuda: a prepared op holds w and scales as host
// constants (kept on the device), and the activations and output are device pointers that
// nothing reads on the host: without a CUDA driver the first upload is where the run stops.
TEST(CApi, Int4GemmTakesCudaTensors) {
  if (cuda_driver_present()) GTEST_SKIP() << kFakePointersNeedNoDriver;
  std::vector<int64_t> as{2, 64}, ws{8, 32}, ss{8, 2}, ys{2, 8};
  std::vector<uint8_t> w(8 * 32, 0x11);
  std::vector<float> scales(8 * 2, 0.5f);
  DLTensor a = fake_cuda(0x10000, as, DLDataType{kDLFloat, 32, 1});
  DLTensor y = fake_cuda(0x20000, ys, DLDataType{kDLFloat, 32, 1});
  DLTensor hw{w.data(), {kDLCPU, 0}, 2, {kDLUInt, 8, 1}, ws.data(), nullptr, 0};
  DLTensor hs{scales.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, ss.data(), nullptr, 0};
  expect_prepared_run_finds_no_cuda("int4_gemm", {{"w", &hw}, {"scales", &hs}}, {{"a", &a}, {"y", &y}});
}

// add_rms_norm takes CUDA tensors on gpu-cuda: its kernels read a device copy of the
// residual and write the caller's, so the copy is the first device work, and without a CUDA
// driver the call stops there.
TEST(CApi, AddRmsNormTakesCudaTensors) {
  if (cuda_driver_present()) GTEST_SKIP() << kFakePointersNeedNoDriver;
  std::vector<int64_t> xs{2, 64}, ws{64};
  const DLDataType f16{kDLFloat, 16, 1};
  DLTensor x = fake_cuda(0x10000, xs, f16), r = fake_cuda(0x20000, xs, f16), w = fake_cuda(0x30000, ws, f16),
           y = fake_cuda(0x40000, xs, f16);
  const npukit_tensor tensors[] = {{"x", &x}, {"residual", &r}, {"weight", &w}, {"y", &y}};
  EXPECT_EQ(npukit_run("add_rms_norm", "gpu-cuda", tensors, 4, nullptr, 0), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("no CUDA device was found"), std::string::npos) << npukit_last_error();
}

// qkv_attention takes CUDA tensors on gpu-cuda: its intermediates go to device scratch, so
// nothing is read through the device pointers, and without a CUDA driver the first device
// allocation is where the call stops.
TEST(CApi, QkvAttentionTakesCudaTensors) {
  if (cuda_driver_present()) GTEST_SKIP() << kFakePointersNeedNoDriver;
  std::vector<int64_t> xs{1, 16}, wqs{48, 16}, wos{16, 16}, cs{2, 12, 8};
  const DLDataType f32{kDLFloat, 32, 1};
  DLTensor x = fake_cuda(0x10000, xs, f32), wq = fake_cuda(0x20000, wqs, f32), wo = fake_cuda(0x30000, wos, f32),
           k = fake_cuda(0x40000, cs, f32), v = fake_cuda(0x50000, cs, f32), y = fake_cuda(0x60000, xs, f32);
  const npukit_tensor tensors[] = {{"x", &x}, {"w_qkv", &wq}, {"w_o", &wo}, {"k_cache", &k}, {"v_cache", &v}, {"y", &y}};
  const npukit_param params[] = {{"pos", "3"}, {"heads", "2"}};
  EXPECT_EQ(npukit_run("qkv_attention", "gpu-cuda", tensors, 6, params, 2), NPUKIT_UNSUPPORTED);
  EXPECT_NE(std::string(npukit_last_error()).find("no CUDA device was found"), std::string::npos) << npukit_last_error();
}

// Every declared operator (NPUKIT_OPERATOR_NAMES, tests/CMakeLists.txt), in order, listed and
// described under its own name: what hosts build their bindings from.
TEST(CApi, ListsAndDescribesEveryDeclaredOp) {
  std::vector<std::string> declared;
  std::stringstream names(NPUKIT_OPERATOR_NAMES);
  for (std::string name; std::getline(names, name, ',');) declared.push_back(name);
  ASSERT_EQ(npukit_op_count(), declared.size());
  for (size_t i = 0; i < declared.size(); ++i) {
    EXPECT_EQ(npukit_op_name(i), declared[i]);
    const npukit_op_info* info = npukit_op_describe(declared[i].c_str());
    ASSERT_NE(info, nullptr) << npukit_last_error();
    EXPECT_EQ(info->name, declared[i]);
    EXPECT_GT(info->n_tensors, 0u);
  }
  EXPECT_EQ(npukit_op_name(npukit_op_count()), nullptr);
}

// What hosts derive their bindings from (the PyTorch extension, the Python module).
TEST(CApi, DescribesOps) {
  const npukit_op_info* norm = npukit_op_describe("rms_norm");
  ASSERT_NE(norm, nullptr) << npukit_last_error();
  EXPECT_EQ(npukit_op_describe("rms_norm"), norm);  // built once
  EXPECT_STREQ(norm->name, "rms_norm");
  ASSERT_EQ(norm->n_tensors, 3u);
  const npukit_tensor_info& x = norm->tensors[0];
  EXPECT_STREQ(x.name, "x");
  EXPECT_EQ(x.role, NPUKIT_INPUT);
  ASSERT_EQ(x.ndim, 2u);
  EXPECT_STREQ(x.dims[0], "rows");
  EXPECT_STREQ(x.dims[1], "hidden");
  ASSERT_EQ(x.n_dtypes, 2u);
  EXPECT_EQ(x.dtypes[1].code, kDLFloat);
  EXPECT_EQ(x.dtypes[1].bits, 16);
  EXPECT_EQ(norm->tensors[2].role, NPUKIT_OUTPUT);
  EXPECT_STREQ(norm->tensors[2].same_dtype_as, "x");
  ASSERT_EQ(norm->n_params, 1u);
  EXPECT_STREQ(norm->params[0].name, "eps");
  EXPECT_EQ(norm->params[0].kind, NPUKIT_PARAM_REAL);
  EXPECT_STREQ(norm->params[0].default_value, "1e-5");

  const npukit_op_info* gemm = npukit_op_describe("int8_gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->tensors[1].constant, 1);  // w
  EXPECT_EQ(gemm->tensors[0].constant, 0);
  EXPECT_EQ(gemm->tensors[2].optional, 1);  // w_scale
  EXPECT_STREQ(gemm->tensors[4].dtype_param, "out");
  const npukit_param_info* out = nullptr;
  for (size_t i = 0; i < gemm->n_params; ++i) out = std::string(gemm->params[i].name) == "out" ? &gemm->params[i] : out;
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->kind, NPUKIT_PARAM_CHOICE);
  ASSERT_EQ(out->n_choices, 4u);
  EXPECT_STREQ(out->choices[0], "int32");

  const npukit_op_info* qkv = npukit_op_describe("qkv_attention");
  ASSERT_NE(qkv, nullptr);
  int inout = 0;
  for (size_t i = 0; i < qkv->n_tensors; ++i) inout += qkv->tensors[i].role == NPUKIT_INOUT;
  EXPECT_EQ(inout, 2);  // the caches

  EXPECT_EQ(npukit_op_describe("no_such_op"), nullptr);
  EXPECT_NE(std::string(npukit_last_error()).find("no_such_op"), std::string::npos) << npukit_last_error();
  EXPECT_EQ(npukit_op_describe(nullptr), nullptr);
  EXPECT_STREQ(npukit_last_error(), "op is NULL");
}

// Defects the reliability probes found (issue 15), each refused with its own message.
TEST(CApi, HugeShapesNegativeRanksZeroSizesAndUnderflowsAreRefused) {
  // In-range dimensions whose product wraps int64 (2^21 · 2^21 · 2^22 = 2^64 = 0): the size
  // and overlap checks must not see 0 elements over a 64-byte buffer.
  std::vector<float> buf(16);
  std::vector<int32_t> pos(16);
  std::vector<int64_t> huge{int64_t(1) << 21, int64_t(1) << 21, int64_t(1) << 22}, tokens{int64_t(1) << 21};
  DLTensor x = f32_tensor(buf.data(), huge), y = f32_tensor(buf.data() + 8, huge);
  DLTensor p = f32_tensor(reinterpret_cast<float*>(pos.data()), tokens);
  p.dtype = {kDLInt, 32, 1};
  const npukit_tensor rope[] = {{"x", &x}, {"positions", &p}, {"y", &y}};
  EXPECT_EQ(npukit_run("rope", "cpu", rope, 3, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "rope: tensor x: shape [2097152, 2097152, 4194304] has more than 2^31 - 1 elements, "
                                    "the kernels' limit");

  std::vector<int64_t> xs{2, 8}, ws{8}, empty{0, 8};
  DLTensor tx = f32_tensor(buf.data(), xs), tw = f32_tensor(buf.data(), ws), ty = f32_tensor(buf.data(), xs);
  DLTensor negative = tx;
  negative.ndim = -1;
  const npukit_tensor neg[] = {{"x", &negative}, {"weight", &tw}, {"y", &ty}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", neg, 3, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "tensor x: ndim = -1 is negative");
  std::vector<int64_t> nine(9, 1);
  DLTensor deep = f32_tensor(buf.data(), nine);
  const npukit_tensor too_deep[] = {{"x", &deep}, {"weight", &tw}, {"y", &ty}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", too_deep, 3, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "tensor x: ndim = 9: npukit's tensors have at most 8 dimensions");

  DLTensor zero = f32_tensor(nullptr, empty);  // numpy's zero-size array: no data
  const npukit_tensor zero_size[] = {{"x", &zero}, {"weight", &tw}, {"y", &ty}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", zero_size, 3, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "rms_norm: tensor x: dimension rows = 0 must be in [1, 2147483647]");

  std::vector<float> out(16);
  DLTensor to = f32_tensor(out.data(), xs);
  const npukit_tensor ok[] = {{"x", &tx}, {"weight", &tw}, {"y", &to}};
  const npukit_param tiny[] = {{"eps", "1e-400"}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", ok, 3, tiny, 1), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(),
               "rms_norm: parameter eps=1e-400: underflows (nonzero but below the smallest normal double, 2.2e-308)");
}

// One rms_norm row of 8 and its DLTensors, for the refusal tests below.
struct RmsNormRow {
  std::vector<float> x = std::vector<float>(8), w = std::vector<float>(8), y = std::vector<float>(8);
  std::vector<int64_t> xs{1, 8}, ws{8};
  DLTensor tx = f32_tensor(x.data(), xs), tw = f32_tensor(w.data(), ws), ty = f32_tensor(y.data(), xs);
};

// `op` on cpu refuses these tensors with `status` and a message containing `part`, by name
// (npukit_run) and by position (a prepared op's fast path).
void expect_refused_both_ways(const char* op, const std::vector<npukit_tensor>& tensors, npukit_status status,
                              const std::string& part) {
  EXPECT_EQ(npukit_run(op, "cpu", tensors.data(), tensors.size(), nullptr, 0), status);
  EXPECT_NE(std::string(npukit_last_error()).find(part), std::string::npos) << npukit_last_error();
  npukit_op* prepared = npukit_op_create(op, "cpu", nullptr, 0);
  ASSERT_NE(prepared, nullptr) << npukit_last_error();
  std::vector<const DLTensor*> positional;
  for (const npukit_tensor& t : tensors) positional.push_back(t.tensor);
  EXPECT_EQ(npukit_op_run_positional(prepared, positional.data(), positional.size()), status);
  EXPECT_NE(std::string(npukit_last_error()).find(part), std::string::npos) << npukit_last_error();
  npukit_op_destroy(prepared);
}

// Found by tests/fuzz/c_api_fuzz.cpp (UBSan): a C host may store any int32 in
// DLDevice::device_type; the kit read it as the C++ enum, which is undefined for a value
// outside the enumerators. Now an unknown device is refused by its number, on both paths.
TEST(CApi, AnUnknownDeviceTypeNumberIsRefused) {
  RmsNormRow r;
  const int32_t unknown = 99;
  static_assert(sizeof r.tx.device.device_type == sizeof unknown);
  std::memcpy(&r.tx.device.device_type, &unknown, sizeof unknown);  // what a C host's store leaves
  expect_refused_both_ways("rms_norm", {{"x", &r.tx}, {"weight", &r.tw}, {"y", &r.ty}}, NPUKIT_UNSUPPORTED,
                           "tensor x: device type 99:");
}

// Found by tests/fuzz/c_api_fuzz.cpp: a caller's tensor or parameter name holding a
// newline was echoed into npukit_last_error(), which must stay one line.
TEST(CApi, EchoedNamesKeepTheMessageOnOneLine) {
  RmsNormRow r;
  const npukit_tensor tensors[] = {{"x\n", &r.tx}, {"weight", &r.tw}, {"y", &r.ty}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", tensors, 3, nullptr, 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(npukit_last_error()).find("'x?'"), std::string::npos) << npukit_last_error();
  const npukit_tensor good[] = {{"x", &r.tx}, {"weight", &r.tw}, {"y", &r.ty}};
  const npukit_param params[] = {{"eps\r\n", "1"}};
  EXPECT_EQ(npukit_run("rms_norm", "cpu", good, 3, params, 1), NPUKIT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(npukit_last_error()).find("eps??"), std::string::npos) << npukit_last_error();
}

// Found by tests/fuzz/c_api_fuzz.cpp (UBSan): rope's positions at an odd byte offset were
// read on the host as misaligned int32. A misaligned tensor is refused on both paths.
TEST(CApi, MisalignedDataIsRefused) {
  std::vector<float> x(2 * 8), y(2 * 8);
  std::vector<int32_t> pos(4);
  std::vector<int64_t> xs{2, 1, 8}, ts{2};
  DLTensor tx = f32_tensor(x.data(), xs), ty = f32_tensor(y.data(), xs), tp = f32_tensor(nullptr, ts);
  tp.data = pos.data();
  tp.dtype = {kDLInt, 32, 1};
  tp.byte_offset = 2;
  expect_refused_both_ways("rope", {{"x", &tx}, {"positions", &tp}, {"y", &ty}}, NPUKIT_INVALID_ARGUMENT,
                           "tensor positions: data (with its byte offset) is not a multiple of 4");
}

// Found by tests/fuzz/c_api_fuzz.cpp: per_token_quant's two outputs in one buffer were
// accepted (only outputs against inputs were checked), and the kernel wrote each over the
// other. Refused on both paths.
TEST(CApi, OutputsSharingMemoryAreRefused) {
  std::vector<float> a(2 * 16, 0.5f);
  std::vector<float> out(16);  // q (2 x 16 int8 = 32 bytes) and scale (2 floats) share it
  std::vector<int64_t> as{2, 16}, ss{2};
  DLTensor ta = f32_tensor(a.data(), as), tq = f32_tensor(out.data(), as), tscale = f32_tensor(out.data(), ss);
  tq.dtype = {kDLInt, 8, 1};
  expect_refused_both_ways("per_token_quant", {{"a", &ta}, {"q", &tq}, {"scale", &tscale}}, NPUKIT_INVALID_ARGUMENT,
                           "per_token_quant: output scale overlaps output q; each output needs memory of its own");
}

// npukit_load_plugin refuses what it cannot trust, with a status and one line naming the
// path and the rule; the registry is as it was (tests/plugin_check.py loads real plug-ins).
TEST(CApi, LoadPluginRefusesWhatIsNoPlugin) {
  const size_t ops = npukit_op_count();
  EXPECT_EQ(npukit_load_plugin(nullptr), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "npukit_load_plugin: path is NULL");
  EXPECT_EQ(npukit_load_plugin("/nonexistent/libnpukit_op_x.so"), NPUKIT_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(npukit_last_error()).rfind("npukit_load_plugin /nonexistent/libnpukit_op_x.so: cannot be loaded (", 0), 0u)
      << npukit_last_error();
  // A shared library, but no operator plug-in: libnpukit.so itself.
  EXPECT_EQ(npukit_load_plugin(NPUKIT_SHARED_LIBRARY), NPUKIT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(npukit_last_error()).find(": not an npukit operator plug-in: it has no symbol npukit_operator_plugin"),
            std::string::npos)
      << npukit_last_error();
  EXPECT_EQ(std::string(npukit_last_error()).find('\n'), std::string::npos);
  EXPECT_EQ(npukit_op_count(), ops);
}

TEST(CApi, ExportsOnlyItsOwnSymbols) {
  // The Halide runtime inside must stay hidden: a host that links Halide or LLVM itself
  // would otherwise get ours.
  const std::string cmd = std::string("nm -D --defined-only ") + NPUKIT_SHARED_LIBRARY + " | awk '{print $3}'";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512];
  std::set<std::string> exported;
  while (fgets(buf, sizeof buf, p)) {
    std::string sym(buf);
    sym.erase(sym.find_last_not_of("\n") + 1);
    if (sym.empty() || sym == "_init" || sym == "_fini" || sym == "__bss_start" || sym == "_edata" || sym == "_end") {
      continue;  // the linker's own
    }
    EXPECT_EQ(sym.rfind("npukit_", 0), 0u) << "exported: " << sym;
    exported.insert(sym);
  }
  pclose(p);
  // Exactly what runtime/c_api.map lists.
  std::ifstream map(NPUKIT_EXPORT_MAP);
  std::set<std::string> listed;
  for (std::string line; std::getline(map, line);) {
    const size_t at = line.find("npukit_"), semi = line.find(';');
    if (at != std::string::npos && semi != std::string::npos && line.find("/*") == std::string::npos) {
      listed.insert(line.substr(at, semi - at));
    }
  }
  EXPECT_FALSE(listed.empty());
  EXPECT_EQ(exported, listed);
}

}  // namespace
