// INT4-weight GEMM: every input class of every activation dtype passes the gate on the best
// CPU tier (and the boundary and shape classes on the lower ones); every rule is enforced
// with a message naming the argument, the value and the rule; the layout round-trips; packed
// constants give the same bits as plain calls; weights quantized as `npukit quantize` does
// (golden::quantize_int4_group, which weight_quant_test holds bit-exact with the command)
// run to the dequantized product; int8 per-token activations track the float ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "golden/half.h"
#include "golden/weight_quant.h"
#include "layouts/int4_group.h"
#include "runtime/bind.h"
#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/gpu_memory.h"
#include "runtime/registry.h"
#include "tests/gate_matrix.h"

namespace npukit {
namespace {

class Int4GemmGate : public testing::TestWithParam<GateCell> {};

TEST_P(Int4GemmGate, EveryCasePasses) { expect_every_case_passes(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cpu, Int4GemmGate,
                         testing::ValuesIn(gate_matrix("int4_gemm", {"int8", "float32", "float16"}, {"boundary", "shape"})),
                         gate_cell_name);

// The int8-activation kernels' AVX-512 tiers, each forced, on every input class: the best
// one the CPU runs is what the cells above reach through "cpu", the other (avx512 on a CPU
// with VNNI) ships too. On a CPU that lacks a tier its cases cannot run: each must be
// refused (UNSUPPORTED, naming the missing features), and the cell says how many and which
// were not runnable here instead of passing.
class Int4GemmAvx512Gate : public testing::TestWithParam<GateCell> {};

TEST_P(Int4GemmAvx512Gate, EveryCasePassesOrIsNotRunnableHere) {
  const GateCell& cell = GetParam();
  expect_every_case_passes_or_is_not_runnable(cell, cell.target.substr(cell.target.find(':') + 1), "lacks");
}

std::vector<GateCell> avx512_cells() {
  std::vector<GateCell> out;
  for (const char* target : {"cpu:avx512_vnni", "cpu:avx512"}) {
    for (const char* cls : {"normal", "boundary", "overflow", "nan_inf", "shape"}) {
      out.push_back({"int4_gemm", target, "int8", cls});
    }
  }
  // Float activations forced onto avx512_vnni run the avx512 kernels (they have no dot
  // products for vpdpbusd, so no VNNI tier).
  for (const char* dtype : {"float32", "float16"}) {
    for (const char* cls : {"normal", "boundary"}) out.push_back({"int4_gemm", "cpu:avx512_vnni", dtype, cls});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Avx512, Int4GemmAvx512Gate, testing::ValuesIn(avx512_cells()), gate_cell_name);

// One call's tensors: a [M, K] (int8 or float32), w [N, ceil(K/2)], fp32 scales, optional
// zero points and a_scales, y float32.
struct Int4Call {
  int64_t M, N, K, G;
  std::vector<int8_t> a8;
  std::vector<float> af, scales, a_scales, y;
  std::vector<uint8_t> w, zp;
  Int4Call(int64_t m, int64_t n, int64_t k, int64_t g, uint32_t seed = 1) : M(m), N(n), K(k), G(g) {
    std::mt19937 rng(seed);
    const int64_t groups = (K + G - 1) / G;
    for (int64_t i = 0; i < M * K; ++i) a8.push_back(static_cast<int8_t>(rng()));
    for (int64_t i = 0; i < M * K; ++i) af.push_back(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 512);
    for (int64_t i = 0; i < N * ((K + 1) / 2); ++i) w.push_back(static_cast<uint8_t>(rng()));
    for (int64_t i = 0; i < N * groups; ++i) scales.push_back(0.001f * static_cast<float>(1 + rng() % 20));
    for (int64_t i = 0; i < N * groups; ++i) zp.push_back(static_cast<uint8_t>(rng() % 16));
    for (int64_t i = 0; i < M; ++i) a_scales.push_back(0.01f * static_cast<float>(1 + rng() % 5));
    y.assign(static_cast<size_t>(M * N), 0.0f);
  }
  TensorMap views(bool int8, bool asym, bool row_scales) {
    const int64_t groups = (K + G - 1) / G;
    TensorMap v = {{"w", {w.data(), DType::uint8, {N, (K + 1) / 2}, {}}},
                   {"scales", {scales.data(), DType::float32, {N, groups}, {}}},
                   {"y", {y.data(), DType::float32, {M, N}, {}}}};
    v["a"] = int8 ? TensorView{a8.data(), DType::int8, {M, K}, {}} : TensorView{af.data(), DType::float32, {M, K}, {}};
    if (asym) v["zero_points"] = {zp.data(), DType::uint8, {N, groups}, {}};
    if (row_scales) v["a_scales"] = {a_scales.data(), DType::float32, {M}, {}};
    return v;
  }
  std::map<std::string, std::string> params() const { return {{"group", std::to_string(G)}}; }
};

std::string error_of(TensorMap v, const std::map<std::string, std::string>& params) {
  try {
    run_call(bind_call(find_op("int4_gemm"), "cpu", v, params));
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(Errc::invalid_argument)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Int4GemmValidation, EveryRuleNamesTheArgumentTheValueAndTheRule) {
  Int4Call c(2, 3, 64, 32);
  EXPECT_EQ(error_of(c.views(true, true, true), {{"group", "48"}}),
            "int4_gemm: parameter group=48: must be 32, 64 or 128 (the groups of npukit quantize --scheme int4-group:G)");
  EXPECT_EQ(error_of(c.views(true, true, true), {{"group", "256"}}),
            "int4_gemm: parameter group=256: must be in [32, 128]");
  EXPECT_EQ(error_of(c.views(true, true, true), {{"group", "64"}}),
            "int4_gemm: scales have 2 groups per row, but K = 64 in groups of group=64 needs 1");
  TensorMap v = c.views(true, true, true);
  v["w"].shape = {3, 31};
  EXPECT_EQ(error_of(v, c.params()),
            "int4_gemm: w has 31 bytes per row, but K = 64 packs into 32 (two int4 per byte, low nibble = even k)");
  c.zp[4] = 16;
  EXPECT_EQ(error_of(c.views(true, true, true), c.params()),
            "int4_gemm: zero_points[2, 0] = 16: must be in [0, 15] (an unsigned int4 zero point, as npukit quantize "
            "writes them)");
  EXPECT_EQ(error_of(c.views(false, false, true), c.params()),
            "int4_gemm: input a_scales (per-row activation scales) applies to int8 a only (a is float32)");
  EXPECT_EQ(error_of(c.views(true, false, false), {{"group", "32"}, {"out", "float16"}}),
            "int4_gemm: output y has dtype float32 but must be float16");
}

TEST(Int4GemmLayout, PackRoundTripsWithZeroPadding) {
  std::mt19937 rng(5);
  for (auto [n, k_bytes] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {17, 3}, {33, 64}, {64, 2048}, {5, 65}}) {
    std::vector<uint8_t> w(static_cast<size_t>(n * k_bytes));
    for (auto& v : w) v = static_cast<uint8_t>(rng());
    const layouts::PackedInt4Weights p = layouts::pack_int4_weights(w.data(), n, k_bytes);
    EXPECT_EQ(p.layout.n_pad % 32, 0);
    EXPECT_EQ(p.layout.k_pad % 128, 0);
    EXPECT_EQ(layouts::unpack_int4_weights(p.data.get(), p.layout), w);
    int64_t nonzero = 0, want = 0;
    for (size_t i = 0; i < p.layout.weight_bytes(); ++i) nonzero += __builtin_popcount(p.data.get()[i] & 0x0F) > 0;
    for (size_t i = 0; i < p.layout.weight_bytes(); ++i) nonzero += __builtin_popcount(p.data.get()[i] & 0xF0) > 0;
    for (uint8_t v : w) want += ((v & 0x0F) != 0) + ((v & 0xF0) != 0);
    EXPECT_EQ(nonzero, want);  // padding nibbles are zero
  }
  // k = 13 of channel 17: block 1, channel 1, k block 1, byte 13 % 4 = 1, high nibble (13 % 8 >= 4).
  std::vector<uint8_t> w(static_cast<size_t>(18 * 8), 0);
  w[17 * 8 + 6] = 0xA0;  // byte 6 of row 17: k = 13 in its high nibble
  const layouts::PackedInt4Weights p = layouts::pack_int4_weights(w.data(), 18, 8);
  const size_t at = static_cast<size_t>(((1 * (p.layout.k_pad / 8) + 1) * 16 + 1) * 4 + 1);
  EXPECT_EQ(p.data.get()[at], 0xA0);
}

// The constants a prepared op packs once give the bits of a plain call; zero points above 15
// are refused when packed.
TEST(Int4GemmConstants, PackedOnceGiveThePlainCallsBits) {
  const OpSpec& op = find_op("int4_gemm");
  for (bool int8 : {true, false}) {
    for (bool asym : {true, false}) {
      Int4Call c(3, 45, 200, 64);
      run_call(bind_call(op, "cpu", c.views(int8, asym, int8), c.params()));
      const std::vector<float> plain = c.y;
      Call call = bind_call(op, "cpu", c.views(int8, asym, int8), c.params());
      PackedConstants packed;
      for (const char* name : {"w", "scales", "zero_points"}) {
        if (call.tensors.count(name)) packed[name] = op.constants.at(name)(call.tensors.at(name));
      }
      call.packed = &packed;
      std::fill(c.y.begin(), c.y.end(), 0.0f);
      run_call(call);
      EXPECT_EQ(std::memcmp(plain.data(), c.y.data(), plain.size() * sizeof(float)), 0) << int8 << asym;
    }
  }
  Int4Call c(1, 2, 32, 32);
  c.zp[1] = 200;
  try {
    op.constants.at("zero_points")(TensorView{c.zp.data(), DType::uint8, {2, 1}, {}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "int4_gemm: zero_points[1, 0] = 200: must be in [0, 15] (an unsigned int4 zero point, as npukit "
                 "quantize writes them)");
  }
}

// On a GPU target too: the packed constants give the plain call's bits, and a prepared op's
// are uploaded at its first run and read from the device after that (their host copies are
// scribbled over between runs). K = 200 is not a whole number of groups: the GPU kernels
// read `a` as given, zeros past K.
TEST(Int4GemmConstants, OnAGpuTheyStayOnTheDevice) {
  const OpSpec& op = find_op("int4_gemm");
  for (bool int8 : {true, false}) {
    Int4Call c(3, 45, 200, 64);
    run_call(bind_call(op, "cpu", c.views(int8, true, int8), c.params()));
    const std::vector<float> cpu = c.y;
    run_call(bind_call(op, "gpu-opencl", c.views(int8, true, int8), c.params()));
    const std::vector<float> plain = c.y;
    // The GPU kernels' zeros past K against the CPU's padded copy (same arithmetic per
    // element; the sums' order may differ in the last bits).
    for (size_t i = 0; i < cpu.size(); ++i) ASSERT_NEAR(plain[i], cpu[i], 1e-5f * (1 + std::fabs(cpu[i]))) << int8 << " " << i;
    Call call = bind_call(op, "gpu-opencl", c.views(int8, true, int8), c.params());
    PackedConstants packed;
    for (const char* name : {"w", "scales", "zero_points"}) {
      packed[name] = op.constants.at(name)(call.tensors.at(name));
      packed[name].gpu = std::make_shared<GpuConstantCopies>("gpu-opencl");
    }
    call.packed = &packed;
    for (int run = 0; run < 2; ++run) {
      std::fill(c.y.begin(), c.y.end(), 0.0f);
      run_call(call);
      EXPECT_EQ(std::memcmp(plain.data(), c.y.data(), plain.size() * sizeof(float)), 0) << int8 << " run " << run;
      for (auto& [name, p] : packed) {
        EXPECT_EQ(p.gpu->uploads(), 1u) << name;
        // The first bytes of each packed constant, as many as its tensor has: garbage now.
        const TensorView& t = call.tensors.at(name);
        std::memset(const_cast<void*>(p.bytes), 0x0f, static_cast<size_t>(t.numel()) * dtype_size(t.dtype));
      }
    }
  }
}

// float W → npukit quantize's int4-group:G (symmetric and asymmetric) → int4_gemm on fp32 a:
// y is a · W'ᵀ for the dequantized W' = s · (q − zp) within the kernel's fp32 sums, and
// a · Wᵀ within the quantization's error.
TEST(Int4GemmRoundTrip, QuantizedWeightsRunToTheDequantizedProduct) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0, 1);
  const int64_t M = 3, N = 40, K = 256;
  std::vector<float> W(static_cast<size_t>(N * K)), a(static_cast<size_t>(M * K));
  for (auto& v : W) v = 0.05f * normal(rng);
  W[5 * K + 9] = 1.5f;  // an outlier in channel 5
  for (auto& v : a) v = normal(rng);
  for (int64_t G : {32, 64, 128}) {
    for (bool sym : {true, false}) {
      SCOPED_TRACE("G=" + std::to_string(G) + (sym ? " symmetric" : " asymmetric"));
      const int64_t groups = K / G;
      std::vector<uint8_t> q(static_cast<size_t>(N * K / 2)), zp(static_cast<size_t>(N * groups));
      std::vector<float> s(static_cast<size_t>(N * groups)), y(static_cast<size_t>(M * N));
      golden::quantize_int4_group(W.data(), N, K, G, sym, q.data(), s.data(), zp.data());
      TensorMap v = {{"a", {a.data(), DType::float32, {M, K}, {}}},
                     {"w", {q.data(), DType::uint8, {N, K / 2}, {}}},
                     {"scales", {s.data(), DType::float32, {N, groups}, {}}},
                     {"y", {y.data(), DType::float32, {M, N}, {}}}};
      if (!sym) v["zero_points"] = {zp.data(), DType::uint8, {N, groups}, {}};
      run_call(bind_call(find_op("int4_gemm"), "cpu", v, {{"group", std::to_string(G)}}));
      double err2 = 0, ref2 = 0, max_rel_deq = 0;
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < N; ++n) {
          double deq = 0, full = 0, mag = 0;
          for (int64_t k = 0; k < K; ++k) {
            const int byte = q[static_cast<size_t>(n * K / 2 + k / 2)];
            int qv = k % 2 ? byte >> 4 : byte & 15;
            if (sym && qv >= 8) qv -= 16;
            const double z = sym ? 0 : zp[static_cast<size_t>(n * groups + k / G)];
            const double wd = double(s[static_cast<size_t>(n * groups + k / G)]) * (qv - z);
            deq += double(a[static_cast<size_t>(m * K + k)]) * wd;
            mag += std::fabs(double(a[static_cast<size_t>(m * K + k)]) * wd);
            full += double(a[static_cast<size_t>(m * K + k)]) * W[static_cast<size_t>(n * K + k)];
          }
          const double got = y[static_cast<size_t>(m * N + n)];
          max_rel_deq = std::max(max_rel_deq, std::fabs(got - deq) / mag);
          err2 += (got - full) * (got - full);
          ref2 += full * full;
        }
      }
      EXPECT_LT(max_rel_deq, 1e-5);     // fp32 sums of a few hundred terms
      EXPECT_LT(err2 / ref2, 0.05);     // int4 rounding of N(0, 0.05) weights with an outlier
    }
  }
}

// int8 per-token activations (a = q · a_scales[m], symmetric as per_token_quant gives them)
// against the same values as fp32 a: the same sums, integer against fp32.
TEST(Int4GemmActivations, Int8PerTokenEqualsTheFloatOfItsValues) {
  Int4Call c(4, 70, 300, 32);
  std::vector<float> as_float(c.a8.size());
  for (int64_t m = 0; m < c.M; ++m) {
    for (int64_t k = 0; k < c.K; ++k) {
      const size_t i = static_cast<size_t>(m * c.K + k);
      as_float[i] = static_cast<float>(c.a8[i]) * c.a_scales[static_cast<size_t>(m)];
    }
  }
  run_call(bind_call(find_op("int4_gemm"), "cpu", c.views(true, true, true), c.params()));
  const std::vector<float> from_int8 = c.y;
  c.af = as_float;
  run_call(bind_call(find_op("int4_gemm"), "cpu", c.views(false, true, false), c.params()));
  for (size_t i = 0; i < c.y.size(); ++i) EXPECT_NEAR(from_int8[i], c.y[i], 1e-4 * (1 + std::fabs(c.y[i]))) << i;
}

// fp16 scales are widened exactly: the same values as fp32 scales give the same bits.
TEST(Int4GemmScales, Fp16ScalesEqualTheirFp32Values) {
  Int4Call c(2, 33, 128, 32);
  std::vector<uint16_t> h(c.scales.size());
  for (size_t i = 0; i < h.size(); ++i) {
    h[i] = golden::float_to_half_bits(c.scales[i]);
    c.scales[i] = golden::half_bits_to_float(h[i]);
  }
  run_call(bind_call(find_op("int4_gemm"), "cpu", c.views(true, false, true), c.params()));
  const std::vector<float> f32 = c.y;
  TensorMap v = c.views(true, false, true);
  v["scales"] = {h.data(), DType::float16, {c.N, 4}, {}};
  run_call(bind_call(find_op("int4_gemm"), "cpu", v, c.params()));
  EXPECT_EQ(std::memcmp(f32.data(), c.y.data(), f32.size() * sizeof(float)), 0);
}

// Each row of one call of `rows` rows against that row's own one-row call, bit for bit.
void expect_rows_have_the_bits_of_their_own_calls(const std::string& target, DType act, int64_t rows, bool asym) {
  Int4Call c(rows, 40, 300, 32, 5);
  std::vector<uint16_t> ah(c.af.size());
  for (size_t i = 0; i < ah.size(); ++i) ah[i] = golden::float_to_half_bits(c.af[i]);
  const bool int8 = act == DType::int8;
  auto a_view = [&](int64_t first, int64_t count) -> TensorView {
    const size_t at = static_cast<size_t>(first * c.K);
    if (int8) return {c.a8.data() + at, act, {count, c.K}, {}};
    if (act == DType::float16) return {ah.data() + at, act, {count, c.K}, {}};
    return {c.af.data() + at, act, {count, c.K}, {}};
  };
  TensorMap all = c.views(int8, asym, int8);
  all["a"] = a_view(0, rows);
  run_call(bind_call(find_op("int4_gemm"), target, all, c.params()));
  const std::vector<float> together = c.y;
  for (int64_t m = 0; m < rows; ++m) {
    std::vector<float> y(static_cast<size_t>(c.N));
    TensorMap one = c.views(int8, asym, int8);
    one["a"] = a_view(m, 1);
    one["y"] = {y.data(), DType::float32, {1, c.N}, {}};
    if (int8) one["a_scales"] = {c.a_scales.data() + m, DType::float32, {1}, {}};
    run_call(bind_call(find_op("int4_gemm"), target, one, c.params()));
    EXPECT_EQ(std::memcmp(y.data(), together.data() + m * c.N, y.size() * sizeof(float)), 0)
        << target << " " << std::string(dtype_name(act)) << (asym ? " zero points" : " symmetric") << ": row " << m
        << " of " << rows;
  }
}

// A row's outputs do not depend on the rows beside it: M = 3 runs one row at a time, and on
// the AVX-512 tiers M = 4 one block of 4 rows and M = 7 two, the second past M. Every
// activation type, with and without zero points, on every x86 tier this CPU runs.
TEST(Int4GemmRows, EveryRowHasTheBitsOfItsOwnCall) {
  int tiers = 0;
  for (const char* tier : {"avx512_vnni", "avx512", "avx2", "sse41"}) {
    if (!cpu_runs_tier(tier)) continue;
    ++tiers;
    for (DType act : {DType::int8, DType::float32, DType::float16}) {
      for (int64_t rows : {3, 4, 7}) {
        for (bool asym : {false, true}) {
          expect_rows_have_the_bits_of_their_own_calls(std::string("cpu:") + tier, act, rows, asym);
        }
      }
    }
  }
  EXPECT_GT(tiers, 0);
}

}  // namespace
}  // namespace npukit
