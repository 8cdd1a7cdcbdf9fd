// silu_mul on cold data: GB/s (gate_up read once, y written once: three elements moved per
// output) and its ratio to the in-run copy anchors over the same arenas and threads. Halide fixes its thread count when
// its pool starts: run once per count, e.g. HL_NUM_THREADS=1 and =2.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "bench/copy_anchor.h"
#include "bench/machine_context.h"
#include "bench/timed_calls.h"
#include "runtime/bind.h"
#include "runtime/registry.h"

namespace npukit::bench {
namespace {

void BM_silu_mul(benchmark::State& state, DType dtype) {
  const int64_t tokens = state.range(0), ffn = state.range(1);
  const size_t out_bytes = size_t(tokens) * ffn * dtype_size(dtype), in_bytes = 2 * out_bytes;
  // The anchor copies in_bytes into an arena of the same size; y uses its first half.
  ColdArena gus(in_bytes), ys(in_bytes);
  for (size_t i = 0; i < gus.slots(); ++i) std::fill_n(static_cast<uint8_t*>(gus.slot(i)), in_bytes, 0x3c);

  TensorMap t = {{"gate_up", {gus.slot(0), dtype, {tokens, 2, ffn}, {}}},
                                         {"y", {ys.slot(0), dtype, {tokens, ffn}, {}}}};
  Call call = bind_call(find_op("silu_mul"), bench_target(), t, {});
  const CopyAnchor anchor = measure_copy(gus, ys, in_bytes);

  const double moved = double(in_bytes + out_bytes);
  const PairedTiming timing =
      time_cold_calls_paired_copy(state, call, {{"gate_up", &gus}, {"y", &ys}}, gus, ys, in_bytes, moved);
  set_bandwidth_counters(state, moved, timing, anchor);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t tokens : {1, 128, 512}) b->Args({tokens, 11008});
  b->ArgNames({"tokens", "ffn"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_silu_mul, f32, DType::float32)->Apply(shapes);
BENCHMARK_CAPTURE(BM_silu_mul, f16, DType::float16)->Apply(shapes);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) { return npukit::bench::run_benchmarks(argc, argv); }
