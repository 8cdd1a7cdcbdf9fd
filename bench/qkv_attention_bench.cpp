// The fused qkv_attention op, decode (T = 1): D = 4096, Hq = 32, Hkv = 8, Dh = 128, fp16
// (and, for the comparison with torch 1.13, which has no fp16 matmul on CPU, fp32)
// activations, weights and cache, at cache lengths S (the new token at S − 1, so every
// position is live). Weights and caches rotate through cold arenas, as in a decode loop
// where each layer's weights and cache were last touched a whole forward pass ago. Reports
// the time, the GB/s of weight + KV bytes read, the ratio to the in-run copy anchor, and
// vs_read_paired: the median ratio to a read of the same bytes timed right after each call.
// With int8 weights (fp16 x and cache), the weights are packed once per copy as a framework
// does at load time and the call is qkv_attention_int8; `pack_per_call` times the registry
// entry instead, which packs both matrices on every call (npukit run, the gate).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "bench/copy_anchor.h"
#include "bench/machine_context.h"
#include "bench/timed_calls.h"
#include "runtime/bind.h"
#include "runtime/qkv_attention_int8.h"
#include "runtime/registry.h"

namespace npukit::bench {
namespace {

// Every slot of `a` filled with `byte`.
void fill_slots(ColdArena& a, size_t bytes, uint8_t byte) {
  for (size_t i = 0; i < a.slots(); ++i) std::fill_n(static_cast<uint8_t*>(a.slot(i)), bytes, byte);
}

// The layer's params: T new tokens at S − T ... S − 1, Hq = 32, Hkv = 8, Dh = 128.
std::map<std::string, std::string> layer_params(int64_t S, int64_t T) {
  return {{"pos", std::to_string(S - T)}, {"heads", "32"}, {"kv_heads", "8"}, {"head_dim", "128"},
          {"theta", "10000"},             {"style", "half"}};
}

// T new tokens at S − T ... S − 1 (decode: T = 1).
void run_layer(benchmark::State& state, DType dtype, int64_t T) {
  const int64_t S = state.range(0), D = 4096, Hq = 32, Hkv = 8, Dh = 128;
  const int64_t rows = (Hq + 2 * Hkv) * Dh;
  const size_t es = dtype_size(dtype);
  const size_t wqkv_bytes = size_t(rows) * D * es, wo_bytes = size_t(D) * Hq * Dh * es;
  const size_t cache_bytes = size_t(Hkv) * S * Dh * es;  // one of k, v
  ColdArena wq(wqkv_bytes), wo(wo_bytes), ks(cache_bytes), vs(cache_bytes);
  // Bytes of 0x2c: fp16 0x2c2c ≈ 0.068, fp32 0x2c2c2c2c ≈ 2.4e-12: finite, no denormals.
  fill_slots(wq, wqkv_bytes, 0x2c);
  fill_slots(wo, wo_bytes, 0x2c);
  fill_slots(ks, cache_bytes, 0x2c);
  fill_slots(vs, cache_bytes, 0x2c);
  std::vector<uint8_t> x(T * D * es, 0x30), y(T * D * es);
  TensorMap t = {{"x", {x.data(), dtype, {T, D}, {}}},
                                         {"w_qkv", {wq.slot(0), dtype, {rows, D}, {}}},
                                         {"w_o", {wo.slot(0), dtype, {D, Hq * Dh}, {}}},
                                         {"k_cache", {ks.slot(0), dtype, {Hkv, S, Dh}, {}}},
                                         {"v_cache", {vs.slot(0), dtype, {Hkv, S, Dh}, {}}},
                                         {"y", {y.data(), dtype, {T, D}, {}}}};
  Call call = bind_call(find_op("qkv_attention"), bench_target(), t, layer_params(S, T));
  const CopyAnchor anchor = measure_copy(ks, vs, cache_bytes);
  const std::pair<const char*, ColdArena*> rotating[] = {{"w_qkv", &wq}, {"w_o", &wo}, {"k_cache", &ks}, {"v_cache", &vs}};
  const auto read = {std::pair{&wq, wqkv_bytes}, std::pair{&wo, wo_bytes}, std::pair{&ks, cache_bytes},
                     std::pair{&vs, cache_bytes}};
  const PairedTiming timing = time_calls_paired(
      state, call,
      [&](Call& c, size_t slot) {
        for (const auto& [name, arena] : rotating) c.tensors[name].data = arena->slot(slot);
      },
      // The call and the read move the same bytes: the ratio of GB/s is that of the times.
      [&](size_t slot, double s) { return read_seconds_of(read, slot + 1) / s; });
  const double median = timing.median_seconds;
  set_bandwidth_counters(state, double(wqkv_bytes + wo_bytes + 2 * cache_bytes), median, anchor);
  state.counters["vs_read_paired"] = timing.median_vs_anchor;
  // Projection FLOPs (2·T·D·(rows + Hq·Dh)) per second: the figure that matters once T > 1.
  state.counters["proj_GFLOP/s"] = 2.0 * T * D * double(rows + Hq * Dh) / median / 1e9;
}

void BM_qkv_attention_decode(benchmark::State& state, DType dtype) { run_layer(state, dtype, 1); }

// Decode with int8 weights and fp16 x and caches: the same layer, weights 4x smaller than fp32.
void BM_qkv_attention_decode_int8(benchmark::State& state, bool pack_per_call) {
  const int64_t S = state.range(0), D = 4096, Hq = 32, Hkv = 8, Dh = 128, T = 1;
  const int64_t rows = (Hq + 2 * Hkv) * Dh;
  const DType act = DType::float16;
  const size_t wqkv_bytes = size_t(rows) * D, wo_bytes = size_t(D) * Hq * Dh;
  const size_t cache_bytes = size_t(Hkv) * S * Dh * 2;
  ColdArena ks(cache_bytes), vs(cache_bytes);
  fill_slots(ks, cache_bytes, 0x2c);
  fill_slots(vs, cache_bytes, 0x2c);
  // Plain int8 weights: a pattern over the whole range (speed does not depend on values).
  ColdArena wq(wqkv_bytes, pack_per_call ? 2 : 1), wo(wo_bytes, pack_per_call ? 2 : 1);
  for (ColdArena* a : {&wq, &wo}) {
    const size_t n = a == &wq ? wqkv_bytes : wo_bytes;
    for (size_t i = 0; i < (pack_per_call ? a->slots() : 1); ++i) {
      auto* p = static_cast<int8_t*>(a->slot(i));
      for (size_t j = 0; j < n; ++j) p[j] = static_cast<int8_t>(int(j * 37 % 255) - 127);
    }
  }
  std::vector<float> sq(static_cast<size_t>(rows), 1e-3f), so(static_cast<size_t>(D), 1e-3f);
  std::vector<uint8_t> x(T * D * 2, 0x30), y(T * D * 2);
  TensorMap t = {{"x", {x.data(), act, {T, D}, {}}},
                                         {"w_qkv", {wq.slot(0), DType::int8, {rows, D}, {}}},
                                         {"w_o", {wo.slot(0), DType::int8, {D, Hq * Dh}, {}}},
                                         {"w_qkv_scale", {sq.data(), DType::float32, {rows}, {}}},
                                         {"w_o_scale", {so.data(), DType::float32, {D}, {}}},
                                         {"k_cache", {ks.slot(0), act, {Hkv, S, Dh}, {}}},
                                         {"v_cache", {vs.slot(0), act, {Hkv, S, Dh}, {}}},
                                         {"y", {y.data(), act, {T, D}, {}}}};
  Call call = bind_call(find_op("qkv_attention"), bench_target(), t, layer_params(S, T));
  const CopyAnchor anchor = measure_copy(ks, vs, cache_bytes);
  double median = 0;
  if (pack_per_call) {
    median = time_cold_calls(state, call, {{"w_qkv", &wq}, {"w_o", &wo}, {"k_cache", &ks}, {"v_cache", &vs}});
  } else {
    // Packed copies of the weights covering the cold working set, each packed once.
    const size_t copies = std::max<size_t>(2, (kColdBytes + wqkv_bytes + wo_bytes - 1) / (wqkv_bytes + wo_bytes));
    std::vector<QkvInt8Weights> packed;
    for (size_t i = 0; i < copies; ++i) packed.push_back(pack_qkv_int8_weights(call));
    // The plain int8 weights' arenas stand for the packed copies' bytes in the read anchor
    // (the same count but for the scales).
    size_t calls = 0;
    const QkvInt8Weights* w = nullptr;
    const auto read = {std::pair{&wq, wqkv_bytes}, std::pair{&wo, wo_bytes}, std::pair{&ks, cache_bytes},
                       std::pair{&vs, cache_bytes}};
    const PairedTiming timing = time_runs_paired(
        state,
        [&](size_t slot) {
          call.tensors["k_cache"].data = ks.slot(slot);
          call.tensors["v_cache"].data = vs.slot(slot);
          w = &packed[calls++ % copies];
        },
        [&] { qkv_attention_int8(call, *w); },
        [&](size_t slot, double s) { return read_seconds_of(read, slot + 1) / s; });
    median = timing.median_seconds;
    state.counters["vs_read_paired"] = timing.median_vs_anchor;
  }
  set_bandwidth_counters(state, double(wqkv_bytes + wo_bytes + 2 * cache_bytes), median, anchor);
  state.counters["proj_GFLOP/s"] = 2.0 * T * D * double(rows + Hq * Dh) / median / 1e9;
}

// A chunk of 64 tokens (prefill or speculative verification): the projections become GEMMs.
void BM_qkv_attention_chunk64(benchmark::State& state, DType dtype) { run_layer(state, dtype, 64); }

// The decode cache lengths, timed by the cold-rotation helper.
void cache_lengths(benchmark::internal::Benchmark* b) {
  b->ArgName("S")->Arg(512)->Arg(2048)->Arg(8192)->Arg(32768)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_qkv_attention_decode, f16, DType::float16)
    ->Apply(cache_lengths);
BENCHMARK_CAPTURE(BM_qkv_attention_decode, f32, DType::float32)
    ->Apply(cache_lengths);
BENCHMARK_CAPTURE(BM_qkv_attention_decode_int8, f16_wi8, false)
    ->Apply(cache_lengths);
BENCHMARK_CAPTURE(BM_qkv_attention_decode_int8, f16_wi8_pack_per_call, true)
    ->ArgName("S")
    ->Arg(512)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_qkv_attention_chunk64, f16, DType::float16)
    ->ArgName("S")
    ->Arg(2048)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_qkv_attention_chunk64, f32, DType::float32)
    ->ArgName("S")
    ->Arg(2048)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) { return npukit::bench::run_benchmarks(argc, argv); }
