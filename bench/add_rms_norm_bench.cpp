// add_rms_norm on cold data: GB/s (x and residual read once, residual and y written once)
// and its ratio to the in-run copy anchors over the same arenas and threads. Halide fixes
// its thread count when its pool starts: run once per count, e.g. HL_NUM_THREADS=1 and =2.
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

void BM_add_rms_norm(benchmark::State& state, DType dtype) {
  const int64_t rows = state.range(0), hidden = state.range(1);
  const size_t bytes = size_t(rows) * hidden * dtype_size(dtype);
  ColdArena xs(bytes), rs(bytes), ys(bytes);
  std::vector<uint8_t> weight(hidden * dtype_size(dtype), 0);
  // 0x3c3c is 1.06 in fp16 and 0.0115 in fp32: sums stay finite however often a slot is reused.
  for (ColdArena* a : {&xs, &rs}) {
    for (size_t i = 0; i < a->slots(); ++i) std::fill_n(static_cast<uint8_t*>(a->slot(i)), bytes, 0x3c);
  }

  TensorMap t = {{"x", {xs.slot(0), dtype, {rows, hidden}, {}}},
                                         {"residual", {rs.slot(0), dtype, {rows, hidden}, {}}},
                                         {"weight", {weight.data(), dtype, {hidden}, {}}},
                                         {"y", {ys.slot(0), dtype, {rows, hidden}, {}}}};
  Call call = bind_call(find_op("add_rms_norm"), bench_target(), t, {{"eps", "1e-6"}});
  const CopyAnchor anchor = measure_copy(xs, ys, bytes);

  const double moved = 4.0 * bytes;  // x and residual read, residual and y written
  const PairedTiming timing =
      time_cold_calls_paired_copy(state, call, {{"x", &xs}, {"residual", &rs}, {"y", &ys}}, xs, ys, bytes, moved);
  set_bandwidth_counters(state, moved, timing, anchor);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t rows : {1, 128, 4096}) b->Args({rows, 4096});
  b->ArgNames({"rows", "hidden"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_add_rms_norm, f32, DType::float32)->Apply(shapes);
BENCHMARK_CAPTURE(BM_add_rms_norm, f16, DType::float16)->Apply(shapes);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) { return npukit::bench::run_benchmarks(argc, argv); }
