// INT8 GEMM: every input class and output type on every tier passes the gate bit-exactly
// (integers) or within tolerance (floats); the K limit and every parameter rule are
// enforced; packing round-trips; the decode and prefill kernels agree.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "kernels/int8_gemm_acc_prefill.h"
#include "kernels/int8_gemm_acc_prefill_direct.h"
#include "layouts/vnni_int8.h"
#include "runtime/bind.h"
#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/gpu_memory.h"
#include "runtime/int8_gemm.h"
#include "runtime/kernel_call.h"
#include "runtime/registry.h"
#include "runtime/text.h"
#include "tests/gate_matrix.h"
#include "tools/gate/gate.h"

namespace npukit {
namespace {

class Int8GemmGate : public testing::TestWithParam<GateCell> {};

TEST_P(Int8GemmGate, EveryCasePasses) { expect_every_case_passes(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cpu, Int8GemmGate,
                         testing::ValuesIn(gate_matrix("int8_gemm", {"int32", "float32", "float16", "int8"},
                                                       {"boundary", "overflow"})),
                         gate_cell_name);

// The AMX tier on every input class and output type. On a CPU without AMX its cases cannot
// run: each must be refused (UNSUPPORTED, naming the missing features), and the cell says
// how many and which were not runnable here instead of passing.
class Int8GemmAmxGate : public testing::TestWithParam<GateCell> {};

TEST_P(Int8GemmAmxGate, EveryCasePassesOrIsNotRunnableHere) {
  expect_every_case_passes_or_is_not_runnable(GetParam(), "avx512_amx", "amx_tile");
}

std::vector<GateCell> amx_cells() {
  std::vector<GateCell> out;
  for (const char* dtype : {"int32", "float32", "float16", "int8"}) {
    for (const char* cls : {"normal", "boundary", "overflow", "nan_inf", "shape"}) {
      out.push_back({"int8_gemm", "cpu:avx512_amx", dtype, cls});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Amx, Int8GemmAmxGate, testing::ValuesIn(amx_cells()), gate_cell_name);

// Forced onto avx512 (a Skylake's features: no VNNI), the accumulation runs its avx2 kernels
// and the epilogues their avx512 ones; on a CPU without AVX-512 the cells are refused.
class Int8GemmAvx512Gate : public testing::TestWithParam<GateCell> {};

TEST_P(Int8GemmAvx512Gate, EveryCasePassesOrIsNotRunnableHere) {
  expect_every_case_passes_or_is_not_runnable(GetParam(), "avx512", "lacks");
}

std::vector<GateCell> avx512_cells() {
  std::vector<GateCell> out;
  for (const char* dtype : {"int32", "float32"}) {
    for (const char* cls : {"normal", "boundary"}) out.push_back({"int8_gemm", "cpu:avx512", dtype, cls});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Avx512, Int8GemmAvx512Gate, testing::ValuesIn(avx512_cells()), gate_cell_name);

struct Gemm {
  int64_t m, n, k;
  std::vector<int8_t> a, w;
  std::vector<float> w_scale, bias;
  std::vector<int32_t> y32;
  std::vector<int8_t> y8;
  Gemm(int64_t m_, int64_t n_, int64_t k_, int8_t a_fill = 1, int8_t w_fill = 1)
      : m(m_), n(n_), k(k_), a(m_ * k_, a_fill), w(n_ * k_, w_fill), w_scale(n_, 0.01f), bias(n_, 0.0f),
        y32(m_ * n_), y8(m_ * n_) {}
  TensorMap views(bool with_scale, bool with_bias, DType out) {
    TensorMap v = {{"a", {a.data(), DType::int8, {m, k}, {}}},
                                           {"w", {w.data(), DType::int8, {n, k}, {}}}};
    if (with_scale) v["w_scale"] = {w_scale.data(), DType::float32, {n}, {}};
    if (with_bias) v["bias"] = {bias.data(), DType::float32, {n}, {}};
    v["y"] = out == DType::int8 ? TensorView{y8.data(), DType::int8, {m, n}, {}}
                                : TensorView{y32.data(), out, {m, n}, {}};
    return v;
  }
};

std::string error_of(TensorMap v, const std::map<std::string, std::string>& params) {
  try {
    run_call(bind_call(find_op("int8_gemm"), "cpu", v, params));
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(Errc::invalid_argument)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Int8GemmValidation, KBeyondTheOverflowLimitIsRejected) {
  EXPECT_EQ(int8_k_limit(0), 131071);
  // The worst case at the limit fits (and is computed exactly); one more k is refused.
  Gemm ok(1, 1, 131071, -128, -128);
  run_call(bind_call(find_op("int8_gemm"), "cpu", ok.views(false, false, DType::int32), {}));
  EXPECT_EQ(ok.y32[0], 131071 * 16384);
  Gemm too_big(1, 1, 131072);
  EXPECT_EQ(error_of(too_big.views(false, false, DType::int32), {}),
            "int8_gemm: K = 131072 exceeds 131071, the largest K whose int32 accumulation cannot overflow with "
            "a_zero_point = 0; split K and add the int32 partial sums in int64");
  Gemm zp(1, 1, int8_k_limit(-128) + 1);
  EXPECT_NE(error_of(zp.views(false, false, DType::int32), {{"a_zero_point", "-128"}}).find("with a_zero_point = -128"),
            std::string::npos);
}

TEST(Int8GemmValidation, ParameterRules) {
  Gemm g(2, 3, 8);
  EXPECT_EQ(error_of(g.views(false, false, DType::float32), {{"out", "float32"}}),
            "int8_gemm: out=float32 needs input w_scale (per-channel weight scales, float32 [N])");
  EXPECT_EQ(error_of(g.views(true, true, DType::int32), {}), "int8_gemm: input bias applies to float outputs only (out=int32)");
  EXPECT_EQ(error_of(g.views(false, false, DType::int32), {{"a_zero_point", "200"}}),
            "int8_gemm: parameter a_zero_point=200: must be in [-128, 127]");
  EXPECT_EQ(error_of(g.views(false, false, DType::int32), {{"out", "float32"}}),
            "int8_gemm: output y has dtype int32 but must be float32");
  g.w_scale[1] = 0;
  EXPECT_EQ(error_of(g.views(true, false, DType::int8), {{"out", "int8"}}),
            "int8_gemm: w_scale[1] = 0: must be finite and > 0 for out=int8");
  g.w_scale[1] = 1e30f;
  EXPECT_NE(error_of(g.views(true, false, DType::int8), {{"out", "int8"}}).find("channel 1: multiplier"), std::string::npos);
}

// Per-row activation scales are each row run with that row's scale as the single a_scale,
// bit for bit: both form fp32(s[m] · w_scale[n]) once (with a_scales the single a_scale is
// 1, and 1 · x is exact), on every CPU tier and both float outputs.
TEST(Int8GemmRowScales, EachRowEqualsThatRowRunWithItsScaleAsTheParameter) {
  std::mt19937 rng(23);
  const int64_t m = 5, n = 37, k = 70;
  Gemm g(m, n, k);
  for (auto& v : g.a) v = static_cast<int8_t>(rng() & 0xff);
  for (auto& v : g.w) v = static_cast<int8_t>(rng() & 0xff);
  for (int64_t c = 0; c < n; ++c) g.w_scale[c] = 0.001f * float(c + 3), g.bias[c] = 0.1f * float(c % 7) - 0.3f;
  std::vector<float> s = {0.0123f, 0.5f, 3.75e-3f, 0.0f, 0.071f};
  const OpSpec& op = find_op("int8_gemm");
  for (const std::string& tier : op.cpu_tiers) {
    if (!cpu_runs_tier(tier)) continue;  // the AMX tier's epilogue is avx512's
    for (DType out : {DType::float32, DType::float16}) {
      const std::map<std::string, std::string> params = {{"out", std::string(dtype_name(out))}, {"a_zero_point", "-3"}};
      TensorMap v = g.views(true, true, out);
      v["a_scales"] = {s.data(), DType::float32, {m}, {}};
      run_call(bind_call(op, "cpu:" + tier, v, params));
      const std::vector<int32_t> rows = g.y32;  // fp32 or fp16 bits, in y32's storage
      for (int64_t r = 0; r < m; ++r) {
        Gemm one(1, n, k);
        std::copy(g.a.begin() + r * k, g.a.begin() + (r + 1) * k, one.a.begin());
        one.w = g.w, one.w_scale = g.w_scale, one.bias = g.bias;
        auto p = params;
        if (s[r] == 0) continue;  // a_scale must be > 0; the zero row is checked below
        p["a_scale"] = fmt::format("{}", s[r]);  // shortest text that reads back as this float
        run_call(bind_call(op, "cpu:" + tier, one.views(true, true, out), p));
        const size_t bytes = out == DType::float32 ? 4 : 2;
        EXPECT_EQ(std::memcmp(reinterpret_cast<const char*>(rows.data()) + r * n * bytes, one.y32.data(), n * bytes), 0)
            << tier << " " << dtype_name(out) << " row " << r;
      }
      // s = 0: the row is its bias.
      const float* y = reinterpret_cast<const float*>(rows.data());
      if (out == DType::float32) {
        for (int64_t c = 0; c < n; ++c) EXPECT_EQ(y[3 * n + c], g.bias[c]) << tier << " column " << c;
      }
    }
  }
}

TEST(Int8GemmRowScales, AreForFloatOutputsOnly) {
  Gemm g(2, 3, 8);
  std::vector<float> s(2, 0.5f);
  TensorMap v = g.views(true, false, DType::int8);
  v["a_scales"] = {s.data(), DType::float32, {2}, {}};
  EXPECT_EQ(error_of(v, {{"out", "int8"}}),
            "int8_gemm: input a_scales (per-row activation scales) applies to float outputs only (out=int8)");
  TensorMap w = g.views(false, false, DType::int32);
  std::vector<float> s3(3, 0.5f);
  w["a_scales"] = {s3.data(), DType::float32, {3}, {}};
  EXPECT_NE(error_of(w, {}).find("a_scales"), std::string::npos);  // [3] against M = 2
}

TEST(Int8GemmLayout, PackRoundTripsAndSumsRows) {
  std::mt19937 rng(7);
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {17, 5}, {64, 4096}, {100, 33}}) {
    std::vector<int8_t> w(n * k);
    for (auto& v : w) v = static_cast<int8_t>(rng() & 0xff);
    const layouts::PackedInt8Weights p = layouts::pack_int8_weights(w.data(), n, k);
    EXPECT_EQ(p.n_pad % 64, 0);
    EXPECT_EQ(p.k_pad % 64, 0);
    EXPECT_EQ(layouts::unpack_int8_weights(p), w);
    for (int64_t r = 0; r < n; ++r) {
      int32_t sum = 0;
      for (int64_t c = 0; c < k; ++c) sum += w[r * k + c];
      ASSERT_EQ(p.row_sums[r], sum);
    }
    // Padding is zero, so the kernels may read it.
    int64_t nonzero = 0;
    for (size_t i = 0; i < p.size_bytes(); ++i) nonzero += p.bytes()[i] != 0;
    int64_t want = 0;
    for (auto v : w) want += v != 0;
    EXPECT_EQ(nonzero, want);
  }
}

// `count` int8 values from `rng`, every bit pattern alike.
std::vector<int8_t> random_int8(size_t count, std::mt19937& rng) {
  std::vector<int8_t> v(count);
  for (auto& x : v) x = static_cast<int8_t>(rng() & 0xff);
  return v;
}

// acc[r, c] as the op defines it: Σ_i (a[r, i] − zp) · w[c, i] over K = k, in int32.
int32_t definition(const std::vector<int8_t>& a, const std::vector<int8_t>& w, int64_t r, int64_t c, int64_t k,
                   int32_t zp) {
  int32_t sum = 0;
  for (int64_t i = 0; i < k; ++i) sum += (a[r * k + i] - zp) * w[c * k + i];
  return sum;
}

// An AMX prefill kernel (forced tier) for 1, 2, 3, 5 and 8 threads (its `threads` input:
// the slabs of channel blocks, some short or empty) against the definition: 48 rows (whole
// tiles, as the runtime pads them), K = 128, n channels, zero point zp, acc filled with
// `fill` first.
template <class Kernel>
void expect_exact_for_thread_counts(const Kernel& kernel, int64_t n, int32_t zp, int32_t fill, std::mt19937& rng) {
  const int64_t m = 48, k = 128;
  const std::vector<int8_t> w = random_int8(n * k, rng);
  std::vector<int8_t> a = random_int8(m * k, rng);
  const layouts::PackedInt8Weights p = layouts::pack_int8_weights(w.data(), n, k);
  const Int8WeightViews wv = int8_weight_views(p);
  Call where;
  where.target = "cpu";
  where.tier = "avx512_amx";
  for (int32_t threads : {1, 2, 3, 5, 8}) {
    std::vector<int32_t> acc(m * n, fill);
    const TensorView av{a.data(), DType::int8, {m, k}, {}}, yv{acc.data(), DType::int32, {m, n}, {}};
    call_kernel(kernel, where, In{av}, In{wv.packed}, In{wv.sums}, zp, threads, Out{yv});
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        ASSERT_EQ(acc[r * n + c], definition(a, w, r, c, k, zp)) << "threads=" << threads << " r=" << r << " c=" << c;
      }
    }
  }
}

TEST(Int8GemmKernels, DecodeAndPrefillAgreeAcrossTheCrossover) {
  std::mt19937 rng(11);
  const int64_t n = 80, k = 259;
  const std::vector<int8_t> w = random_int8(n * k, rng);
  const layouts::PackedInt8Weights p = layouts::pack_int8_weights(w.data(), n, k);
  for (int64_t m : {1, 16, 31, 32, 33, 67}) {
    std::vector<int8_t> a = random_int8(m * k, rng);
    std::vector<int32_t> acc(m * n);
    int8_gemm_accumulate({a.data(), DType::int8, {m, k}, {}}, p, 5, {acc.data(), DType::int32, {m, n}, {}});
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        ASSERT_EQ(acc[r * n + c], definition(a, w, r, c, k, 5)) << "m=" << m << " r=" << r << " c=" << c;
      }
    }
  }
}

// The AMX tier's tiles (16 rows, K in steps of 64 bytes, k_pad padded to them), forced,
// against the definition: row counts around the tile, the crossover to VNNI (8 | 9), an odd
// number of row tiles (33: the last pair shifted inwards) and more than one 256-row block
// (300: the last block shifted inwards); K with and without padding; 80 channels (a last
// task of one channel tile). Where the CPU has no AMX the forced tier is a one-line refusal
// naming the features.
TEST(Int8GemmKernels, AmxTierMatchesTheDefinitionAtTileEdges) {
  std::mt19937 rng(13);
  const int64_t n = 80;
  for (int64_t k : {64, 259, 4100}) {
    const std::vector<int8_t> w = random_int8(n * k, rng);
    const layouts::PackedInt8Weights p = layouts::pack_int8_weights(w.data(), n, k);
    for (int64_t m : {1, 8, 9, 15, 16, 17, 33, 48, 300}) {
      std::vector<int8_t> a = random_int8(m * k, rng);
      std::vector<int32_t> acc(m * n);
      const TensorView av{a.data(), DType::int8, {m, k}, {}}, yv{acc.data(), DType::int32, {m, n}, {}};
      if (!cpu_runs_tier("avx512_amx")) {
        try {
          int8_gemm_accumulate(av, p, -3, yv, "avx512_amx");
          ADD_FAILURE() << "avx512_amx ran on a CPU without AMX";
        } catch (const Error& e) {
          EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
          // The missing features are listed (AVX-512's first on a CPU without it; the tile data
          // alone where the CPU has AMX and the OS withholds its state).
          const std::string what = e.what();
          const std::string missing = join_names(missing_for_tier(cpu_features(), "avx512_amx"));
          EXPECT_NE(what.find("tier 'avx512_amx' needs " + missing + ", which this machine lacks"), std::string::npos)
              << what;
        }
        continue;
      }
      int8_gemm_accumulate(av, p, -3, yv, "avx512_amx");
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t c = 0; c < n; ++c) {
          ASSERT_EQ(acc[r * n + c], definition(a, w, r, c, k, -3)) << "k=" << k << " m=" << m << " r=" << r << " c=" << c;
        }
      }
    }
  }
  if (!cpu_runs_tier("avx512_amx")) GTEST_SKIP() << "not runnable on this CPU (no AMX): 27 shapes, the refusal checked instead";
}

// Without a zero point, with N a multiple of 32 and M of at least 16, the AMX tier stores
// its tiles straight into acc (int8_gemm_acc_prefill_direct): against the definition at one
// tile, a row tile shifted inwards (17, 300), an odd number of tiles (48: the last pair
// shifted inwards), one and more 256-row blocks (272, 528: the last block shifted inwards),
// into an acc whose rows are 16 channels apart more than N, which keeps its padding; `a`'s
// rows unpadded. A zero point on such a shape takes the buffer kernel (the direct one does
// not read it). Slabs of channel blocks for 1 to 8 threads. The kernel itself refuses N not
// a multiple of 32 and M below 16 (Halide's constraint or bounds check, one line).
TEST(Int8GemmKernels, AmxDirectKernelStoresTilesIntoAcc) {
  if (!cpu_runs_tier("avx512_amx")) GTEST_SKIP() << "not runnable on this CPU (no AMX): 38 shapes and 2 refusals";
  std::mt19937 rng(17);
  constexpr int32_t kPad = 0x7eadbeef;
  for (int64_t k : {64, 4100}) {
    for (int64_t n : {32, 96}) {
      const std::vector<int8_t> w = random_int8(n * k, rng);
      const layouts::PackedInt8Weights p = layouts::pack_int8_weights(w.data(), n, k);
      for (int64_t m : {16, 17, 32, 48, 256, 272, 300, 528}) {
        std::vector<int8_t> a = random_int8(m * k, rng);
        const int64_t stride = n + 16;
        std::vector<int32_t> acc(m * stride, kPad);
        int8_gemm_accumulate({a.data(), DType::int8, {m, k}, {}}, p, 0,
                             {acc.data(), DType::int32, {m, n}, {stride, 1}}, "avx512_amx");
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t c = 0; c < stride; ++c) {
            const int32_t want = c < n ? definition(a, w, r, c, k, 0) : kPad;
            ASSERT_EQ(acc[r * stride + c], want) << "k=" << k << " n=" << n << " m=" << m << " r=" << r << " c=" << c;
          }
        }
      }
    }
  }
  // A zero point on the same shapes takes the buffer kernel (the direct one does not read it).
  {
    const int64_t m = 48, n = 32, k = 64;
    const std::vector<int8_t> w = random_int8(n * k, rng);
    std::vector<int8_t> a = random_int8(m * k, rng);
    const layouts::PackedInt8Weights p = layouts::pack_int8_weights(w.data(), n, k);
    std::vector<int32_t> acc(m * n);
    int8_gemm_accumulate({a.data(), DType::int8, {m, k}, {}}, p, 5, {acc.data(), DType::int32, {m, n}, {}},
                         "avx512_amx");
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        ASSERT_EQ(acc[r * n + c], definition(a, w, r, c, k, 5)) << "zero point 5, r=" << r << " c=" << c;
      }
    }
  }
  // Each thread takes a slab of channel blocks: 5 blocks in slabs for 1, 2, 3 (a short last
  // slab), 5 and 8 threads (empty slabs).
  expect_exact_for_thread_counts(kernels::int8_gemm_acc_prefill_direct, 160, 0, kPad, rng);
  Call where;
  where.target = "cpu";
  where.tier = "avx512_amx";
  const int64_t k = 64;
  std::vector<int8_t> w(64 * k, 1), a(32 * k, 1);
  const layouts::PackedInt8Weights p = layouts::pack_int8_weights(w.data(), 64, k);
  const Int8WeightViews wv = int8_weight_views(p);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{15, 32}, {16, 48}}) {
    std::vector<int32_t> acc(m * n);
    const TensorView av{a.data(), DType::int8, {m, k}, {}}, yv{acc.data(), DType::int32, {m, n}, {}};
    try {
      call_kernel(kernels::int8_gemm_acc_prefill_direct, where, In{av}, In{wv.packed}, In{wv.sums}, int32_t{0},
                  int32_t{1}, Out{yv});
      ADD_FAILURE() << "the direct kernel took acc of " << m << " x " << n;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find("int8_gemm_acc_prefill_direct (avx512_amx) failed"), std::string::npos) << what;
    }
  }
}

// The buffer kernel (a zero point, or N not a multiple of 32) gives each thread a slab of
// channel blocks too (its `threads` input): 3 blocks, the last one channel tile, in slabs
// for 1, 2 (a short last slab), 3, 5 and 8 threads (empty slabs), zero point 5, `a`'s rows
// whole tiles as the runtime pads them.
TEST(Int8GemmKernels, AmxBufferKernelSlabsForAnyThreadCount) {
  if (!cpu_runs_tier("avx512_amx")) GTEST_SKIP() << "not runnable on this CPU (no AMX): 5 thread counts";
  std::mt19937 rng(19);
  expect_exact_for_thread_counts(kernels::int8_gemm_acc_prefill, 80, 5, 0, rng);
}

// On a GPU target a prepared op's packed weights are uploaded at its first run and read
// from the device after that: the host copy is scribbled over between runs and the results
// stay exact. `a` goes to the kernels as given (K = 37, no padded copy); the prefill run's
// float output reads the int32 accumulator from device scratch.
TEST(Int8GemmGpu, PreparedWeightsStayOnTheDevice) {
  std::mt19937 rng(17);
  const int64_t n = 20, k = 37;
  std::vector<int8_t> w(n * k);
  for (auto& v : w) v = static_cast<int8_t>(rng() & 0xff);
  auto packed = std::make_shared<layouts::PackedInt8Weights>(layouts::pack_int8_weights(w.data(), n, k));
  PackedConstants constants;
  constants["w"] = PackedConstant(packed, packed->bytes());
  auto copies = std::make_shared<GpuConstantCopies>("gpu-opencl");
  constants["w"].gpu = copies;
  const OpSpec& spec = find_op("int8_gemm");
  for (int64_t m : {3, 1}) {
    std::vector<int8_t> a(m * k);
    for (auto& v : a) v = static_cast<int8_t>(rng() & 0xff);
    std::vector<int32_t> want(m * n);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        for (int64_t i = 0; i < k; ++i) want[r * n + c] += (a[r * k + i] - 2) * w[c * k + i];
      }
    }
    std::vector<int32_t> y(m * n, -1);
    std::vector<float> yf(m * n, -1.0f), w_scale(n, 0.5f);
    TensorMap t{{"a", {a.data(), DType::int8, {m, k}, {}}},
                {"w", {w.data(), DType::int8, {n, k}, {}}},
                {"w_scale", {w_scale.data(), DType::float32, {n}, {}}},
                {"y", {y.data(), DType::int32, {m, n}, {}}}};
    Call call = bind_call(spec, "gpu-opencl", t, {{"a_zero_point", "2"}});
    call.packed = &constants;
    run_call(call);
    EXPECT_EQ(y, want) << "m=" << m;
    t["y"] = {yf.data(), DType::float32, {m, n}, {}};
    Call scaled = bind_call(spec, "gpu-opencl", t, {{"a_zero_point", "2"}, {"out", "float32"}, {"a_scale", "0.25"}});
    scaled.packed = &constants;
    run_call(scaled);
    for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(yf[i], static_cast<float>(want[i]) * 0.125f) << "m=" << m << " i=" << i;
    EXPECT_EQ(copies->uploads(), 2u);  // the bytes and the row sums, once
    // What a later run would read, were it read from the host: garbage.
    std::memset(packed->bytes(), 0x55, packed->size_bytes());
    std::fill(packed->row_sums.begin(), packed->row_sums.end(), 12345);
  }
}

}  // namespace
}  // namespace npukit
