// INT4-weight GEMM, decode's GEMV (M = 1) and prefill chunks, against two anchors, each
// timed right after every call in the same process and on the same threads: a plain read
// of the same number of bytes (the weights, scales and zero points the kernel streams, as
// packed), and int8_gemm on the same shape (its int32 accumulation over packed int8
// weights). The weights, scales and zero points are packed once per copy, as a prepared op
// holds them (npukit_op_set_constant), and rotated over more than 256 MiB so that each
// call streams them from DRAM; so are the int8 weights. Reported: the kernel's GB/s and
// GOP/s, vs_read (the median over calls of the read's time for the kernel's bytes over the
// kernel's time) and vs_int8 (the median of the int8 GEMM's time over the int4 one's).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/copy_anchor.h"
#include "bench/machine_context.h"
#include "bench/timed_calls.h"
#include "layouts/vnni_int8.h"
#include "runtime/bind.h"
#include "runtime/int8_gemm.h"
#include "runtime/halide_threads.h"
#include "runtime/registry.h"

namespace npukit::bench {
namespace {

// NPUKIT_BENCH_SMOKE (set by the ctest smoke run) keeps two copies: enough to run every
// path, far from cold.
bool smoke() { return std::getenv("NPUKIT_BENCH_SMOKE") != nullptr; }

size_t copies_for(size_t bytes) { return smoke() ? 2 : std::max<size_t>(2, (kColdBytes + bytes - 1) / bytes); }

template <class Fn>
double seconds_of(Fn fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Args: M (rows of a: 1 is decode's GEMV, more a prefill chunk), N, K, G, zero points (0
// symmetric, 1 asymmetric), activations (0 int8, 1 fp16, 2 fp32).
void BM_int4_gemm(benchmark::State& state) {
  const int64_t M = state.range(0), N = state.range(1), K = state.range(2), G = state.range(3),
                groups = (K + G - 1) / G;
  const bool asym = state.range(4) != 0, int8 = state.range(5) == 0;
  const DType act = int8 ? DType::int8 : state.range(5) == 1 ? DType::float16 : DType::float32;
  std::mt19937 rng(3);
  std::vector<uint8_t> w(size_t(N) * (K + 1) / 2), zp(size_t(N) * groups);
  for (auto& v : w) v = static_cast<uint8_t>(rng());
  for (auto& v : zp) v = static_cast<uint8_t>(rng() % 16);
  std::vector<uint16_t> scales(size_t(N) * groups, 0x2000);  // fp16 0.0078125, as the planner's fp16 scales
  std::vector<uint8_t> a(size_t(M) * K * dtype_size(act), int8 ? 3 : 0);
  if (act == DType::float16) {
    std::fill(reinterpret_cast<uint16_t*>(a.data()), reinterpret_cast<uint16_t*>(a.data()) + M * K, 0x3000);
  } else if (act == DType::float32) {
    std::fill(reinterpret_cast<float*>(a.data()), reinterpret_cast<float*>(a.data()) + M * K, 0.125f);
  }
  std::vector<float> a_scales(static_cast<size_t>(M), 0.01f), y(static_cast<size_t>(M * N));
  TensorMap t = {{"a", {a.data(), act, {M, K}, {}}},
                 {"w", {w.data(), DType::uint8, {N, (K + 1) / 2}, {}}},
                 {"scales", {scales.data(), DType::float16, {N, groups}, {}}},
                 {"y", {y.data(), DType::float32, {M, N}, {}}}};
  if (asym) t["zero_points"] = {zp.data(), DType::uint8, {N, groups}, {}};
  if (int8) t["a_scales"] = {a_scales.data(), DType::float32, {M}, {}};
  const OpSpec& op = find_op("int4_gemm");
  Call call = bind_call(op, bench_target(), t, {{"group", std::to_string(G)}});

  // The bytes the kernel streams per call, as packed: the weights (N · K / 2), fp32 scales
  // and uint8 zero points per group and channel; a and y are a few KiB.
  const int64_t n_pad = (N + 31) / 32 * 32;
  const double bytes = double(n_pad) * ((K + 127) / 128 * 128) / 2 + double(n_pad) * groups * (asym ? 5 : 4);
  const size_t copies = copies_for(size_t(bytes));
  std::vector<PackedConstants> packed(copies);
  for (PackedConstants& p : packed) {
    for (const char* name : {"w", "scales", "zero_points"}) {
      if (call.tensors.count(name)) p[name] = op.constants.at(name)(call.tensors.at(name));
    }
  }
  // The int8 GEMM on the same shape: [M, K] int8 against packed int8 [N, K].
  std::vector<int8_t> w8(size_t(N) * K);
  for (auto& v : w8) v = static_cast<int8_t>(rng());
  const size_t copies8 = copies_for(w8.size());
  std::vector<layouts::PackedInt8Weights> packed8;
  for (size_t c = 0; c < copies8; ++c) packed8.push_back(layouts::pack_int8_weights(w8.data(), N, K));
  std::vector<int8_t> a8(size_t(M) * K, 3);
  std::vector<int32_t> acc8(static_cast<size_t>(M * N));
  const TensorView a8_view{a8.data(), DType::int8, {M, K}, {}}, acc8_view{acc8.data(), DType::int32, {M, N}, {}};
  // The read anchor over the same number of bytes, in two cold slots (read_seconds reads both);
  // the smoke run reads one warm buffer instead of filling 256 MiB per benchmark.
  const size_t half = size_t(bytes) / 2;
  std::unique_ptr<ColdArena> cold = smoke() ? nullptr : std::make_unique<ColdArena>(half, 4);
  std::vector<uint8_t> warm(smoke() ? 2 * half : 0);
  auto read_slot = [&](size_t i) -> void* { return cold ? cold->slot(i) : warm.data() + (i % 2) * half; };

  size_t c = 0;
  call.packed = &packed[0];
  run_call(call);
  // The int8_gemm anchor on the same forced tier (a tier it lacks runs the one below).
  const std::string anchor_tier = forced_tier();
  int8_gemm_accumulate(a8_view, packed8[0], 0, acc8_view, anchor_tier);
  std::vector<double> vs_read, vs_int8;
  const double median = time_runs(
      state, [&] { call.packed = &packed[++c % copies]; }, [&] { run_call(call); },
      [&](double s) {
        vs_read.push_back(read_seconds(read_slot(2 * c), read_slot(2 * c + 1), half) / s);
        vs_int8.push_back(
            seconds_of([&] { int8_gemm_accumulate(a8_view, packed8[c % copies8], 0, acc8_view, anchor_tier); }) / s);
      });
  state.counters["threads"] = halide_thread_count();
  state.counters["GB/s"] = bytes / median / 1e9;
  state.counters["GOP/s"] = 2.0 * double(M) * N * K / median / 1e9;
  state.counters["bytes_per_weight"] = bytes / (double(N) * K);
  state.counters["vs_read"] = median_of(vs_read);
  state.counters["vs_int8"] = median_of(vs_int8);
  state.SetLabel("a " + std::string(dtype_name(act)) + (asym ? ", zero points" : ", symmetric"));
}

// Decode's GEMV (int8, fp16 and fp32 activations), then prefill chunks (compute-bound:
// vs_int8 is the comparison there), with zero points and with fp16 activations at M = 128.
void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t g : {128, 32}) {
    for (int64_t asym : {0, 1}) b->Args({1, 4096, 4096, g, asym, 0});
  }
  for (int64_t asym : {0, 1}) b->Args({1, 4096, 4096, 128, asym, 1});
  b->Args({1, 4096, 4096, 128, 0, 2});
  for (int64_t asym : {0, 1}) b->Args({1, 11008, 4096, 128, asym, 0});
  for (int64_t m : {16, 128}) b->Args({m, 4096, 4096, 128, 0, 0});
  b->Args({128, 4096, 4096, 128, 1, 0});
  b->Args({128, 4096, 4096, 128, 0, 1});
  b->ArgNames({"M", "N", "K", "G", "zp", "act"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_int4_gemm)->Apply(shapes);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) { return npukit::bench::run_benchmarks(argc, argv); }
