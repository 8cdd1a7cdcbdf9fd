// Attention core, decode (T = 1), Hq = 32, Hkv = 8, Dh = 128, fp16 cache, cold: time, GB/s
// of KV read, and its ratios to the in-run anchors over the same cache bytes: the copy and
// the read (measured once, before the timed calls), and the read timed right after each
// call (vs_read_paired, the median of the per-call ratios: the issue's "share of read
// bandwidth", robust to the machine's bandwidth drifting during the run). And
// the same call on a cache that stays in L3 (BM_attention_decode_hot): compute alone; and a
// prefill chunk of 64 queries (BM_attention_chunk).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/copy_anchor.h"
#include "bench/machine_context.h"
#include "bench/timed_calls.h"
#include "runtime/bind.h"
#include "runtime/registry.h"

namespace npukit::bench {
namespace {

// `masked`: with an all-zero mask [1, S] (every position live), which takes the kernel
// that reads the mask; without, the unmasked one.
void run_decode(benchmark::State& state, bool masked) {
  const int64_t S = state.range(0), Hq = 32, Hkv = 8, Dh = 128;
  const size_t cache_bytes = size_t(Hkv) * S * Dh * 2;  // one of k, v in fp16
  ColdArena ks(cache_bytes), vs(cache_bytes);
  for (size_t i = 0; i < ks.slots(); ++i) {
    std::fill_n(static_cast<uint8_t*>(ks.slot(i)), cache_bytes, 0x30);
    std::fill_n(static_cast<uint8_t*>(vs.slot(i)), cache_bytes, 0x30);
  }
  std::vector<uint16_t> q(Hq * Dh, 0x3000), o(Hq * Dh);
  std::vector<int32_t> pos{static_cast<int32_t>(S - 1)};
  TensorMap t = {{"q", {q.data(), DType::float16, {1, Hq, Dh}, {}}},
                                         {"k_cache", {ks.slot(0), DType::float16, {Hkv, S, Dh}, {}}},
                                         {"v_cache", {vs.slot(0), DType::float16, {Hkv, S, Dh}, {}}},
                                         {"positions", {pos.data(), DType::int32, {1}, {}}},
                                         {"o", {o.data(), DType::float16, {1, Hq, Dh}, {}}}};
  std::vector<float> mask(S, 0.0f);
  if (masked) t["mask"] = {mask.data(), DType::float32, {1, S}, {}};
  Call call = bind_call(find_op("attention"), bench_target(), t, {});
  const CopyAnchor anchor = measure_copy(ks, vs, cache_bytes);
  const PairedTiming timing = time_cold_calls_paired_read(state, call, "k_cache", ks, "v_cache", vs, cache_bytes);
  // The KV read is 2 · cache_bytes; the copy anchor moves cache_bytes twice (read + write).
  set_bandwidth_counters(state, 2.0 * cache_bytes, timing.median_seconds, anchor);
  state.counters["vs_read_paired"] = timing.median_vs_anchor;
}

void BM_attention_decode(benchmark::State& state) { run_decode(state, false); }
void BM_attention_decode_masked(benchmark::State& state) { run_decode(state, true); }

// The same call on one cache that stays in L3 (at most 8 MiB of KV, reused every call):
// what the kernel costs with DRAM out of the way, to tell compute from bandwidth; S = 16
// shows the fixed cost of a call.
void BM_attention_decode_hot(benchmark::State& state) {
  const int64_t S = state.range(0), Hq = 32, Hkv = 8, Dh = 128;
  std::vector<uint16_t> k(Hkv * S * Dh, 0x3000), v(Hkv * S * Dh, 0x3000), q(Hq * Dh, 0x3000), o(Hq * Dh);
  std::vector<int32_t> pos{static_cast<int32_t>(S - 1)};
  TensorMap t = {{"q", {q.data(), DType::float16, {1, Hq, Dh}, {}}},
                                         {"k_cache", {k.data(), DType::float16, {Hkv, S, Dh}, {}}},
                                         {"v_cache", {v.data(), DType::float16, {Hkv, S, Dh}, {}}},
                                         {"positions", {pos.data(), DType::int32, {1}, {}}},
                                         {"o", {o.data(), DType::float16, {1, Hq, Dh}, {}}}};
  Call call = bind_call(find_op("attention"), bench_target(), t, {});
  const double median = time_calls(state, call, [](Call&) {});
  state.counters["GB/s"] = 2.0 * k.size() * 2 / median / 1e9;
}
// Prefill: a chunk of T = 64 queries at positions S − 64 … S − 1 in one call, the cache in
// L3 as in _hot. GFLOP/s of its causal q·k and weight · v, and vs_token_calls: the same
// queries as 64 single-token calls, timed right after each chunk call, over the chunk's
// time (the median of the per-call ratios): whether a chunk costs more than decoding its
// tokens one by one.
void BM_attention_chunk(benchmark::State& state) {
  const int64_t S = state.range(0), T = 64, Hq = 32, Hkv = 8, Dh = 128;
  std::vector<uint16_t> k(Hkv * S * Dh, 0x3000), v(Hkv * S * Dh, 0x3000), q(T * Hq * Dh, 0x3000), o(T * Hq * Dh);
  std::vector<int32_t> pos(T);
  double flops = 0;
  for (int64_t t = 0; t < T; ++t) {
    pos[t] = static_cast<int32_t>(S - T + t);
    flops += 2.0 * 2.0 * Hq * Dh * (pos[t] + 1);
  }
  auto call_of = [&](int64_t t0, int64_t n) {
    TensorMap m = {{"q", {&q[t0 * Hq * Dh], DType::float16, {n, Hq, Dh}, {}}},
                   {"k_cache", {k.data(), DType::float16, {Hkv, S, Dh}, {}}},
                   {"v_cache", {v.data(), DType::float16, {Hkv, S, Dh}, {}}},
                   {"positions", {&pos[t0], DType::int32, {n}, {}}},
                   {"o", {&o[t0 * Hq * Dh], DType::float16, {n, Hq, Dh}, {}}}};
    return bind_call(find_op("attention"), bench_target(), m, {});
  };
  Call chunk = call_of(0, T);
  std::vector<Call> tokens;
  for (int64_t t = 0; t < T; ++t) tokens.push_back(call_of(t, 1));
  std::vector<double> ratios;
  const double median = time_runs(
      state, [] {}, [&] { run_call(chunk); },
      [&](double seconds) {
        const auto t0 = std::chrono::steady_clock::now();
        for (const Call& c : tokens) run_call(c);
        ratios.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / seconds);
      });
  state.counters["GFLOP/s"] = flops / median / 1e9;
  state.counters["vs_token_calls"] = median_of(ratios);
}
BENCHMARK(BM_attention_chunk)->ArgName("S")->Arg(2048)->UseManualTime()->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_attention_decode_hot)->ArgName("S")->Arg(16)->Arg(64)->Arg(128)->Arg(256)->Arg(512)->Arg(2048)->UseManualTime()->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_attention_decode_masked)->ArgName("S")->Arg(8192)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_attention_decode)
    ->ArgName("S")
    ->Arg(16)
    ->Arg(512)
    ->Arg(2048)
    ->Arg(8192)
    ->Arg(32768)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) { return npukit::bench::run_benchmarks(argc, argv); }
