// per_token_quant on cold data: GB/s (a read once, q and the row scales written once) and
// its ratio to the in-run copy anchors over the same arenas and threads. The decode shape
// is [1, 4096] (issue 14's decode-shape latency); 128 and 4096 rows are prefill. Halide
// fixes its thread count when its pool starts: run once per count, e.g. HL_NUM_THREADS=1
// and =2.
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

void BM_per_token_quant(benchmark::State& state, DType dtype) {
  const int64_t rows = state.range(0), k = state.range(1);
  const size_t in_bytes = size_t(rows) * k * dtype_size(dtype);
  const size_t q_bytes = size_t(rows) * k, scale_bytes = size_t(rows) * sizeof(float);
  // The anchor copies in_bytes into an arena of the same size; q and the scales share
  // each of its slots (q first, the scales after it: in_bytes >= q_bytes + scale_bytes).
  ColdArena as(in_bytes), outs(in_bytes);
  for (size_t i = 0; i < as.slots(); ++i) std::fill_n(static_cast<uint8_t*>(as.slot(i)), in_bytes, 0x3c);

  TensorMap t = {{"a", {as.slot(0), dtype, {rows, k}, {}}},
                 {"q", {outs.slot(0), DType::int8, {rows, k}, {}}},
                 {"scale", {static_cast<uint8_t*>(outs.slot(0)) + q_bytes, DType::float32, {rows}, {}}}};
  Call call = bind_call(find_op("per_token_quant"), bench_target(), t, {});
  const CopyAnchor anchor = measure_copy(as, outs, in_bytes);

  const double moved = double(in_bytes + q_bytes + scale_bytes);
  const PairedTiming timing = time_calls_paired_copy(
      state, call,
      [&](Call& c, size_t slot) {
        c.tensors["a"].data = as.slot(slot);
        c.tensors["q"].data = outs.slot(slot);
        c.tensors["scale"].data = static_cast<uint8_t*>(outs.slot(slot)) + q_bytes;
      },
      as, outs, in_bytes, moved);
  set_bandwidth_counters(state, moved, timing, anchor);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t rows : {1, 128, 4096}) b->Args({rows, 4096});
  b->ArgNames({"rows", "k"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_per_token_quant, f32, DType::float32)->Apply(shapes);
BENCHMARK_CAPTURE(BM_per_token_quant, f16, DType::float16)->Apply(shapes);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) { return npukit::bench::run_benchmarks(argc, argv); }
