// Prepared ops through libnpukit.so alone: the same results as npukit_run by name and by
// position, the same messages for bad input, constants packed once, and one op run from
// eight threads at once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "npukit/npukit.h"

namespace {

template <class T>
struct Tensor {
  std::vector<T> data;
  std::vector<int64_t> shape;
  DLTensor dl{};

  Tensor(std::vector<int64_t> s, DLDataType dtype, T fill = T()) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(static_cast<size_t>(n), fill);
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
  }
};

constexpr DLDataType kF32{kDLFloat, 32, 1}, kI8{kDLInt, 8, 1}, kI32{kDLInt, 32, 1};

struct OpDeleter {
  void operator()(npukit_op* op) const { npukit_op_destroy(op); }
};
using Op = std::unique_ptr<npukit_op, OpDeleter>;

Op create(const char* op, std::vector<npukit_param> params = {}, const char* target = "cpu") {
  Op p(npukit_op_create(op, target, params.data(), params.size()));
  EXPECT_NE(p, nullptr) << npukit_last_error();
  return p;
}

struct RmsNorm {
  Tensor<float> x, w, y;
  RmsNorm(int64_t rows, int64_t hidden, float seed)
      : x({rows, hidden}, kF32), w({hidden}, kF32), y({rows, hidden}, kF32, -1.0f) {
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = std::sin(seed + 0.37f * static_cast<float>(i));
    for (size_t i = 0; i < w.data.size(); ++i) w.data[i] = 0.5f + 0.01f * static_cast<float>(i % 17);
  }
  std::vector<npukit_tensor> named() { return {{"x", &x.dl}, {"weight", &w.dl}, {"y", &y.dl}}; }
  std::vector<const DLTensor*> positional() { return {&x.dl, &w.dl, &y.dl}; }
};

TEST(PreparedOp, AbiVersion) {
  EXPECT_EQ(npukit_abi_version(), NPUKIT_ABI_VERSION);
  EXPECT_EQ(NPUKIT_ABI_VERSION, 5);
}

TEST(PreparedOp, RunsLikeNpukitRunByNameAndPosition) {
  const npukit_param eps[] = {{"eps", "1e-3"}};
  Op op = create("rms_norm", {eps[0]});
  // Shapes change from run to run: nothing of one run's shape stays behind.
  for (int64_t rows : {3, 1, 5}) {
    RmsNorm ref(rows, 40, 1.0f), a(rows, 40, 1.0f), b(rows, 40, 1.0f);
    auto t = ref.named();
    ASSERT_EQ(npukit_run("rms_norm", "cpu", t.data(), t.size(), eps, 1), NPUKIT_OK) << npukit_last_error();
    auto ta = a.named();
    ASSERT_EQ(npukit_op_run(op.get(), ta.data(), ta.size()), NPUKIT_OK) << npukit_last_error();
    auto tb = b.positional();
    ASSERT_EQ(npukit_op_run_positional(op.get(), tb.data(), tb.size()), NPUKIT_OK) << npukit_last_error();
    EXPECT_EQ(a.y.data, ref.y.data) << "rows " << rows;
    EXPECT_EQ(b.y.data, ref.y.data) << "rows " << rows;
    EXPECT_NE(ref.y.data[0], -1.0f);
  }
  EXPECT_STREQ(npukit_last_error(), "");
}

// Every refusal of a run is the message npukit_run gives for the same tensors.
TEST(PreparedOp, BadTensorsGetNpukitRunsMessages) {
  Op op = create("rms_norm");
  struct Case {
    const char* what;
    void (*spoil)(RmsNorm&, std::vector<npukit_tensor>&);
    const char* message;
  };
  const Case cases[] = {
      {"wrong shape", [](RmsNorm& r, std::vector<npukit_tensor>&) { r.w.shape[0] = 7; },
       "rms_norm: tensor weight: dimension hidden = 7 but tensor x has hidden = 8; they must be equal"},
      {"wrong rank", [](RmsNorm& r, std::vector<npukit_tensor>&) { r.x.dl.ndim = 1; },
       "rms_norm: tensor x: shape [2] has rank 1; expected rank 2 (rows, hidden)"},
      {"wrong dtype", [](RmsNorm& r, std::vector<npukit_tensor>&) { r.w.dl.dtype = kI32; },
       "rms_norm: tensor weight: dtype int32 is not supported (allowed: float32, float16)"},
      {"output dtype", [](RmsNorm& r, std::vector<npukit_tensor>&) { r.y.dl.dtype = {kDLFloat, 16, 1}; },
       "rms_norm: tensor y has dtype float16 but must match x (float32)"},
      {"unknown name", [](RmsNorm&, std::vector<npukit_tensor>& t) { t[1].name = "wieght"; },
       "rms_norm: unknown tensor 'wieght' (it takes: x, weight, y)"},
      {"missing output", [](RmsNorm&, std::vector<npukit_tensor>& t) { t.pop_back(); },
       "rms_norm: missing output tensor 'y'"},
      {"given twice", [](RmsNorm&, std::vector<npukit_tensor>& t) { t[2].name = "x"; }, "tensor x given twice"},
      {"NULL name", [](RmsNorm&, std::vector<npukit_tensor>& t) { t[0].name = nullptr; }, "tensors[0].name is NULL"},
      {"NULL DLTensor", [](RmsNorm&, std::vector<npukit_tensor>& t) { t[0].tensor = nullptr; },
       "tensor x: DLTensor pointer is NULL"},
      {"NULL data", [](RmsNorm& r, std::vector<npukit_tensor>&) { r.y.dl.data = nullptr; },
       "rms_norm: tensor y: data pointer is null"},
      {"overlap", [](RmsNorm& r, std::vector<npukit_tensor>&) { r.y.dl.data = r.x.data.data() + 3; },
       "rms_norm: output y overlaps input x; npukit does not compute in place"},
      {"strided", [](RmsNorm& r, std::vector<npukit_tensor>&) {
         static int64_t strides[] = {16, 2};
         r.x.dl.strides = strides;
       },
       "rms_norm: tensor x: strides [16, 2] are not C-contiguous; npukit kernels need contiguous tensors"},
      {"lanes", [](RmsNorm& r, std::vector<npukit_tensor>&) { r.x.dl.dtype.lanes = 4; }, "tensor x: lanes = 4: must be 1"},
      {"device", [](RmsNorm& r, std::vector<npukit_tensor>&) { r.x.dl.device = {kDLCUDA, 0}; },
       "rms_norm: tensor x is CUDA device memory (kDLCUDA); target 'cpu' takes host tensors only (device tensors "
       "need target gpu-cuda)"},
  };
  for (const Case& c : cases) {
    RmsNorm r(2, 8, 0.0f);
    auto t = r.named();
    c.spoil(r, t);
    EXPECT_NE(npukit_op_run(op.get(), t.data(), t.size()), NPUKIT_OK) << c.what;
    const std::string prepared = npukit_last_error();
    EXPECT_EQ(prepared, c.message) << c.what;
    EXPECT_EQ(prepared.find('\n'), std::string::npos) << c.what;
    EXPECT_NE(npukit_run("rms_norm", "cpu", t.data(), t.size(), nullptr, 0), NPUKIT_OK) << c.what;
    EXPECT_EQ(prepared, npukit_last_error()) << c.what;
    for (float v : r.y.data) ASSERT_EQ(v, -1.0f) << c.what << ": a refused run wrote its output";
  }
}

TEST(PreparedOp, NullsAndCountsAreRefused) {
  RmsNorm r(2, 8, 0.0f);
  auto named = r.named();
  auto pos = r.positional();
  EXPECT_EQ(npukit_op_run(nullptr, named.data(), named.size()), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "op is NULL");
  EXPECT_EQ(npukit_op_run_positional(nullptr, pos.data(), pos.size()), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "op is NULL");
  EXPECT_EQ(npukit_op_set_constant(nullptr, "w", &r.x.dl), NPUKIT_INVALID_ARGUMENT);
  npukit_op_destroy(nullptr);

  Op op = create("rms_norm");
  EXPECT_EQ(npukit_op_run(op.get(), nullptr, 3), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "tensors is NULL but n_tensors > 0");
  EXPECT_EQ(npukit_op_run_positional(op.get(), nullptr, 3), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "tensors is NULL");
  EXPECT_EQ(npukit_op_run_positional(op.get(), pos.data(), 2), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(),
               "rms_norm: n_tensors = 2 but it takes 3 tensors by position (x, weight, y; NULL for an absent "
               "optional one or a constant; trailing optional ones may be left out)");
  pos[1] = nullptr;  // weight is not optional
  EXPECT_EQ(npukit_op_run_positional(op.get(), pos.data(), 3), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "rms_norm: missing input tensor 'weight'");
  EXPECT_EQ(npukit_op_run(op.get(), named.data(), 0), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "rms_norm: missing input tensor 'x'");
}

// The registry's op names through the C ABI, as its "known:" lists print them.
std::string known_ops() {
  std::string s;
  for (size_t i = 0; i < npukit_op_count(); ++i) s += (i ? ", " : "") + std::string(npukit_op_name(i));
  return s;
}

TEST(PreparedOp, CreateRefusesBadOpsTargetsAndParameters) {
  const std::string unknown = "unknown op 'softmax' (known: " + known_ops() + ")";
  struct Case {
    const char* op;
    const char* target;
    std::vector<npukit_param> params;
    const char* message;
  };
  const Case cases[] = {
      {"rms_norm", "cpu", {{"eps", "nan"}}, "rms_norm: parameter eps=nan: must be finite"},
      {"rms_norm", "cpu", {{"eps", "2"}}, "rms_norm: parameter eps=2: must be in [0, 1]"},
      {"rms_norm", "cpu", {{"eps", "1e-5x"}}, "rms_norm: parameter eps=1e-5x: not a number"},
      {"rms_norm", "cpu", {{"epsilon", "1"}}, "rms_norm: unknown parameter 'epsilon' (it takes: eps)"},
      {"rms_norm", "cpu", {{"eps", "0"}, {"eps", "1"}}, "parameter eps given twice"},
      {"rms_norm", "cpu", {{"eps", nullptr}}, "params[0] has a NULL name or value"},
      {"int8_gemm", "cpu", {{"out", "int4"}}, "int8_gemm: parameter out=int4: must be one of int32, float32, float16, int8"},
      {"softmax", "cpu", {}, unknown.c_str()},
      {nullptr, "cpu", {}, "op is NULL"},
      {"rms_norm", "tpu", {}, "rms_norm: no kernel for target 'tpu' (it has: cpu, gpu-cuda, gpu-opencl)"},
      {"rms_norm", "gpu-opencl:fast", {}, "target gpu-opencl:fast: only the cpu target takes a tier"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(npukit_op_create(c.op, c.target, c.params.data(), c.params.size()), nullptr) << c.message;
    EXPECT_STREQ(npukit_last_error(), c.message);
  }
  EXPECT_EQ(npukit_op_create("rms_norm", "cpu", nullptr, 1), nullptr);
  EXPECT_STREQ(npukit_last_error(), "params is NULL but n_params > 0");
}

// int8_gemm: w packed once; later changes to the caller's w have no effect until it is set
// again; a run that passes w is refused.
struct Gemm {
  static constexpr int64_t M = 2, K = 12, N = 20;
  Tensor<int8_t> a{{M, K}, kI8}, w{{N, K}, kI8};
  Tensor<int32_t> y{{M, N}, kI32, -7};
  Gemm() {
    for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<int8_t>(int(i * 7 % 23) - 11);
    for (size_t i = 0; i < w.data.size(); ++i) w.data[i] = static_cast<int8_t>(int(i * 5 % 31) - 15);
  }
  std::vector<int32_t> reference() const {
    std::vector<int32_t> r(M * N);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) r[m * N + n] += int32_t(a.data[m * K + k] - 3) * w.data[n * K + k];
    return r;
  }
};

TEST(PreparedOp, ConstantWeightsArePackedOnce) {
  Gemm g;
  Op op = create("int8_gemm", {{"a_zero_point", "3"}});
  ASSERT_EQ(npukit_op_set_constant(op.get(), "w", &g.w.dl), NPUKIT_OK) << npukit_last_error();
  const std::vector<int32_t> first = g.reference();
  const npukit_tensor t[] = {{"a", &g.a.dl}, {"y", &g.y.dl}};
  ASSERT_EQ(npukit_op_run(op.get(), t, 2), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(g.y.data, first);

  for (int8_t& v : g.w.data) v = static_cast<int8_t>(-v);  // the packed copy does not see this
  std::fill(g.y.data.begin(), g.y.data.end(), -7);
  // a_scales, int8_gemm's last tensor, may be left out: the array of ABI 3 still runs.
  const DLTensor* pos[] = {&g.a.dl, nullptr, nullptr, nullptr, &g.y.dl, nullptr};
  ASSERT_EQ(npukit_op_run_positional(op.get(), pos, 5), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(g.y.data, first);
  std::fill(g.y.data.begin(), g.y.data.end(), -7);
  ASSERT_EQ(npukit_op_run_positional(op.get(), pos, 6), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(g.y.data, first);
  EXPECT_EQ(npukit_op_run_positional(op.get(), pos, 4), NPUKIT_INVALID_ARGUMENT);  // y is not optional

  ASSERT_EQ(npukit_op_set_constant(op.get(), "w", &g.w.dl), NPUKIT_OK) << npukit_last_error();
  ASSERT_EQ(npukit_op_run(op.get(), t, 2), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(g.y.data, g.reference());
  EXPECT_NE(g.y.data, first);

  const char* refused =
      "int8_gemm: tensor w is a constant of this prepared op, packed once by npukit_op_set_constant: pass no "
      "tensor for it to a run (NULL at its position), or call npukit_op_set_constant again to change it";
  const npukit_tensor with_w[] = {{"a", &g.a.dl}, {"w", &g.w.dl}, {"y", &g.y.dl}};
  EXPECT_EQ(npukit_op_run(op.get(), with_w, 3), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), refused);
  const DLTensor* pos_w[] = {&g.a.dl, &g.w.dl, nullptr, nullptr, &g.y.dl};
  EXPECT_EQ(npukit_op_run_positional(op.get(), pos_w, 5), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), refused);

  // The constant's shape takes part in the run's checks.
  Tensor<int8_t> a_short({Gemm::M, 8}, kI8);
  const npukit_tensor short_k[] = {{"a", &a_short.dl}, {"y", &g.y.dl}};
  EXPECT_EQ(npukit_op_run(op.get(), short_k, 2), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "int8_gemm: tensor w: dimension K = 12 but tensor a has K = 8; they must be equal");
}

// The same on a GPU target (gpu-opencl: PoCL in CI), through npukit_op_set_constant and
// npukit_op_run as a framework calls them: the packed w goes to the device at the first run
// and stays there (that it is read from there: tests/int8_gemm_test.cpp), run after run
// the definition's bits, and set again it takes the new weights.
TEST(PreparedOp, ConstantWeightsOnAGpuTarget) {
  Gemm g;
  Op op = create("int8_gemm", {{"a_zero_point", "3"}}, "gpu-opencl");
  ASSERT_EQ(npukit_op_set_constant(op.get(), "w", &g.w.dl), NPUKIT_OK) << npukit_last_error();
  const npukit_tensor t[] = {{"a", &g.a.dl}, {"y", &g.y.dl}};
  for (int run = 0; run < 3; ++run) {
    std::fill(g.y.data.begin(), g.y.data.end(), -7);
    ASSERT_EQ(npukit_op_run(op.get(), t, 2), NPUKIT_OK) << npukit_last_error();
    EXPECT_EQ(g.y.data, g.reference()) << "run " << run;
  }
  for (int8_t& v : g.w.data) v = static_cast<int8_t>(-v);
  ASSERT_EQ(npukit_op_set_constant(op.get(), "w", &g.w.dl), NPUKIT_OK) << npukit_last_error();
  ASSERT_EQ(npukit_op_run(op.get(), t, 2), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(g.y.data, g.reference());
}

TEST(PreparedOp, ConstantsAreCheckedWhenSet) {
  Gemm g;
  Op gemm = create("int8_gemm");
  Tensor<float> wf({Gemm::N, Gemm::K}, kF32);
  EXPECT_EQ(npukit_op_set_constant(gemm.get(), "w", &wf.dl), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "int8_gemm: tensor w: dtype float32 is not supported (allowed: int8)");
  EXPECT_EQ(npukit_op_set_constant(gemm.get(), "w", nullptr), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "tensor w: DLTensor pointer is NULL");
  EXPECT_EQ(npukit_op_set_constant(gemm.get(), "a", &g.a.dl), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "int8_gemm: tensor 'a' cannot be a constant (constants: w)");
  Op norm = create("rms_norm");
  RmsNorm r(1, 8, 0.0f);
  EXPECT_EQ(npukit_op_set_constant(norm.get(), "weight", &r.w.dl), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "rms_norm: tensor 'weight' cannot be a constant (rms_norm packs no constants)");
}

// A small qkv_attention with int8 weights: one token, 2 query heads over 1 kv head of 4.
struct QkvInt8 {
  static constexpr int64_t D = 8, Hq = 2, Hkv = 1, Dh = 4, S = 6, QKV = (Hq + 2 * Hkv) * Dh;
  Tensor<float> x{{1, D}, kF32}, sq{{QKV}, kF32, 0.02f}, so{{D}, kF32, 0.03f};
  Tensor<int8_t> wq{{QKV, D}, kI8}, wo{{D, Hq * Dh}, kI8};
  struct Out {  // the caches (in/out) and y of one run
    Tensor<float> k{{Hkv, S, Dh}, kF32, 0.5f}, v{{Hkv, S, Dh}, kF32, -0.5f}, y{{1, D}, kF32, -1.0f};
  };
  QkvInt8() {
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = 0.3f * static_cast<float>(int(i % 5) - 2);
    for (size_t i = 0; i < wq.data.size(); ++i) wq.data[i] = static_cast<int8_t>(int(i * 11 % 41) - 20);
    for (size_t i = 0; i < wo.data.size(); ++i) wo.data[i] = static_cast<int8_t>(int(i * 13 % 37) - 18);
  }
};

// qkv_attention's int8 weights as constants: the same y and caches as npukit_run with the
// weights passed (and packed) on every call.
TEST(PreparedOp, QkvAttentionInt8WeightsAsConstants) {
  QkvInt8 q;
  auto &x = q.x, &sq = q.sq, &so = q.so;
  auto &wq = q.wq, &wo = q.wo;
  const int64_t D = q.D, QKV = q.QKV;
  QkvInt8::Out ref, prepared;
  const npukit_param params[] = {{"pos", "3"}};
  const npukit_tensor all[] = {{"x", &x.dl},       {"w_qkv", &wq.dl},      {"w_o", &wo.dl},
                               {"w_qkv_scale", &sq.dl}, {"w_o_scale", &so.dl}, {"k_cache", &ref.k.dl},
                               {"v_cache", &ref.v.dl},  {"y", &ref.y.dl}};
  ASSERT_EQ(npukit_run("qkv_attention", "cpu", all, 8, params, 1), NPUKIT_OK) << npukit_last_error();

  Op op = create("qkv_attention", {params[0]});
  ASSERT_EQ(npukit_op_set_constant(op.get(), "w_qkv", &wq.dl), NPUKIT_OK) << npukit_last_error();
  ASSERT_EQ(npukit_op_set_constant(op.get(), "w_o", &wo.dl), NPUKIT_OK) << npukit_last_error();
  std::fill(wq.data.begin(), wq.data.end(), int8_t(0));  // the packed copies do not see this
  const npukit_tensor rest[] = {{"x", &x.dl},           {"w_qkv_scale", &sq.dl}, {"w_o_scale", &so.dl},
                                {"k_cache", &prepared.k.dl}, {"v_cache", &prepared.v.dl}, {"y", &prepared.y.dl}};
  ASSERT_EQ(npukit_op_run(op.get(), rest, 6), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(prepared.y.data, ref.y.data);
  EXPECT_EQ(prepared.k.data, ref.k.data);
  EXPECT_EQ(prepared.v.data, ref.v.data);
  EXPECT_NE(ref.y.data[0], -1.0f);

  Tensor<float> wf({QKV, D}, kF32);
  Op float_op = create("qkv_attention");
  EXPECT_EQ(npukit_op_set_constant(float_op.get(), "w_qkv", &wf.dl), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "qkv_attention: constant w_qkv is float32: only int8 weights are packed (float "
                                    "weights are read as they are; pass them to each run)");
}

// A decode step's new pos through npukit_op_create_like: base's packed weights are reused
// (the tensor they came from has changed since, and no run passes it), the other
// parameters are base's, and the new op outlives base.
TEST(PreparedOp, CreateLikeSharesConstantsAcrossPositions) {
  QkvInt8 q;
  auto &x = q.x, &sq = q.sq, &so = q.so;
  auto &wq = q.wq, &wo = q.wo;
  using Out = QkvInt8::Out;
  // The reference: npukit_run at each position, theta 500 (base's, not the default).
  std::vector<Out> ref(2);
  for (int pos = 3; pos <= 4; ++pos) {
    const std::string p = std::to_string(pos);
    const npukit_param params[] = {{"pos", p.c_str()}, {"theta", "500"}};
    Out& r = ref[pos - 3];
    const npukit_tensor all[] = {{"x", &x.dl},          {"w_qkv", &wq.dl},      {"w_o", &wo.dl},
                                 {"w_qkv_scale", &sq.dl}, {"w_o_scale", &so.dl}, {"k_cache", &r.k.dl},
                                 {"v_cache", &r.v.dl},    {"y", &r.y.dl}};
    ASSERT_EQ(npukit_run("qkv_attention", "cpu", all, 8, params, 2), NPUKIT_OK) << npukit_last_error();
  }
  Op base = create("qkv_attention", {{"pos", "3"}, {"theta", "500"}});
  ASSERT_EQ(npukit_op_set_constant(base.get(), "w_qkv", &wq.dl), NPUKIT_OK) << npukit_last_error();
  ASSERT_EQ(npukit_op_set_constant(base.get(), "w_o", &wo.dl), NPUKIT_OK) << npukit_last_error();
  std::fill(wq.data.begin(), wq.data.end(), int8_t(0));  // a repack would see this
  std::fill(wo.data.begin(), wo.data.end(), int8_t(0));
  const npukit_param next[] = {{"pos", "4"}};
  Op like(npukit_op_create_like(base.get(), next, 1));
  ASSERT_NE(like, nullptr) << npukit_last_error();
  base.reset();
  Out got;
  const DLTensor* t[] = {&x.dl, nullptr, nullptr, &sq.dl, &so.dl, &got.k.dl, &got.v.dl, nullptr, &got.y.dl};
  ASSERT_EQ(npukit_op_run_positional(like.get(), t, 9), NPUKIT_OK) << npukit_last_error();
  EXPECT_EQ(got.y.data, ref[1].y.data);
  EXPECT_NE(got.y.data, ref[0].y.data);
  EXPECT_EQ(got.k.data, ref[1].k.data);

  EXPECT_EQ(npukit_op_create_like(nullptr, next, 1), nullptr);
  EXPECT_STREQ(npukit_last_error(), "base is NULL");
  const npukit_param bad[] = {{"pos", "-1"}};
  EXPECT_EQ(npukit_op_create_like(like.get(), bad, 1), nullptr);
  const std::string bad_message = npukit_last_error();
  EXPECT_EQ(npukit_op_create("qkv_attention", "cpu", bad, 1), nullptr);
  EXPECT_EQ(bad_message, npukit_last_error());  // create's message for the same parameter
}

// Optional inputs come and go between runs of one op (the reused call is refitted).
TEST(PreparedOp, OptionalInputsMayChangeBetweenRuns) {
  Gemm g;
  Op op = create("int8_gemm", {{"a_zero_point", "3"}, {"out", "float32"}, {"a_scale", "0.5"}});
  ASSERT_EQ(npukit_op_set_constant(op.get(), "w", &g.w.dl), NPUKIT_OK) << npukit_last_error();
  Tensor<float> scale({Gemm::N}, kF32, 2.0f), bias({Gemm::N}, kF32, 100.0f), y({Gemm::M, Gemm::N}, kF32);
  const std::vector<int32_t> acc = g.reference();
  for (int round = 0; round < 2; ++round) {
    const npukit_tensor plain[] = {{"a", &g.a.dl}, {"w_scale", &scale.dl}, {"y", &y.dl}};
    ASSERT_EQ(npukit_op_run(op.get(), plain, 3), NPUKIT_OK) << npukit_last_error();
    for (size_t i = 0; i < acc.size(); ++i) ASSERT_EQ(y.data[i], float(acc[i]) * 1.0f) << i;
    const npukit_tensor biased[] = {{"a", &g.a.dl}, {"w_scale", &scale.dl}, {"bias", &bias.dl}, {"y", &y.dl}};
    ASSERT_EQ(npukit_op_run(op.get(), biased, 4), NPUKIT_OK) << npukit_last_error();
    for (size_t i = 0; i < acc.size(); ++i) ASSERT_EQ(y.data[i], float(acc[i]) + 100.0f) << i;
  }
  // The op's own rule (check) still runs on the prepared path.
  const npukit_tensor unscaled[] = {{"a", &g.a.dl}, {"y", &y.dl}};
  EXPECT_EQ(npukit_op_run(op.get(), unscaled, 2), NPUKIT_INVALID_ARGUMENT);
  EXPECT_STREQ(npukit_last_error(), "int8_gemm: out=float32 needs input w_scale (per-channel weight scales, float32 [N])");
}

// One prepared op, eight threads at once, each on its own tensors: the serial results.
TEST(PreparedOp, EightThreadsGetTheSerialResults) {
  constexpr int kThreads = 8, kRuns = 200;
  Op op = create("rms_norm", {{"eps", "1e-6"}});
  std::vector<std::vector<float>> serial(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    RmsNorm r(1 + i % 3, 4096, static_cast<float>(i));
    auto t = r.named();
    ASSERT_EQ(npukit_op_run(op.get(), t.data(), t.size()), NPUKIT_OK) << npukit_last_error();
    serial[i] = r.y.data;
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      RmsNorm r(1 + i % 3, 4096, static_cast<float>(i));
      auto named = r.named();
      auto pos = r.positional();
      for (int k = 0; k < kRuns && failures[i].empty(); ++k) {
        std::fill(r.y.data.begin(), r.y.data.end(), -1.0f);
        const npukit_status s = k % 2 ? npukit_op_run(op.get(), named.data(), named.size())
                                      : npukit_op_run_positional(op.get(), pos.data(), pos.size());
        if (s != NPUKIT_OK) failures[i] = npukit_last_error();
        else if (r.y.data != serial[i]) failures[i] = "run " + std::to_string(k) + " differs from the serial result";
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(failures[i], "") << "thread " << i;
}

TEST(PreparedOp, EightThreadsShareOneConstant) {
  constexpr int kThreads = 8, kRuns = 100;
  Gemm g;
  Op op = create("int8_gemm", {{"a_zero_point", "3"}});
  ASSERT_EQ(npukit_op_set_constant(op.get(), "w", &g.w.dl), NPUKIT_OK) << npukit_last_error();
  const std::vector<int32_t> want = g.reference();
  std::vector<int> bad(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Tensor<int32_t> y({Gemm::M, Gemm::N}, kI32);
      const npukit_tensor t[] = {{"a", &g.a.dl}, {"y", &y.dl}};
      for (int k = 0; k < kRuns; ++k) {
        std::fill(y.data.begin(), y.data.end(), -7);
        if (npukit_op_run(op.get(), t, 2) != NPUKIT_OK || y.data != want) ++bad[i];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(bad[i], 0) << "thread " << i;
}

}  // namespace
