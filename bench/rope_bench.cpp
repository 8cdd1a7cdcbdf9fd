// RoPE on cold data: GB/s (x read once, y written once, positions read once) and its
// ratio to the in-run copy anchors over the same bytes, the same arenas and the same
// threads. Halide fixes its thread count when its pool starts: run once per count, e.g.
// HL_NUM_THREADS=1 and =2. bench/rope_vs_torch.py runs this binary for its npukit side.
// BM_rope_warm runs on the same buffers every call, for the compute side of the split.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/copy_anchor.h"
#include "bench/machine_context.h"
#include "bench/timed_calls.h"
#include "runtime/bind.h"
#include "runtime/halide_threads.h"
#include "runtime/registry.h"

namespace npukit::bench {
namespace {

struct Shape {
  int64_t tokens, heads, head_dim, rotary_dim;
  size_t bytes(DType dtype) const { return size_t(tokens) * heads * head_dim * dtype_size(dtype); }
};

Shape shape_of(const benchmark::State& state) {
  return {state.range(0), state.range(1), state.range(2), state.range(3)};
}

// A prefill chunk sits at consecutive positions; a decode step at one position past a
// long context, where the angles of the high-frequency pairs wrap many times.
std::vector<int32_t> positions_for(int64_t tokens) {
  std::vector<int32_t> p(tokens);
  for (int64_t t = 0; t < tokens; ++t) p[t] = tokens == 1 ? 4095 : int32_t(1000 + t);
  return p;
}

Call bind_rope(const Shape& s, DType dtype, const char* style, void* x, std::vector<int32_t>& positions, void* y) {
  const std::vector<int64_t> dims = {s.tokens, s.heads, s.head_dim};
  TensorMap tv = {{"x", {x, dtype, dims, {}}},
                                          {"positions", {positions.data(), DType::int32, {s.tokens}, {}}},
                                          {"y", {y, dtype, dims, {}}}};
  return bind_call(find_op("rope"), bench_target(), tv,
                   {{"theta", "10000"}, {"style", style}, {"rotary_dim", std::to_string(s.rotary_dim)}});
}

double bytes_moved(const Shape& s, DType dtype) { return 2.0 * s.bytes(dtype) + s.tokens * sizeof(int32_t); }

void BM_rope(benchmark::State& state, DType dtype, const char* style) {
  const Shape s = shape_of(state);
  const size_t bytes = s.bytes(dtype);
  ColdArena xs(bytes), ys(bytes);
  for (size_t i = 0; i < xs.slots(); ++i) std::fill_n(static_cast<uint8_t*>(xs.slot(i)), bytes, 0x3c);
  std::vector<int32_t> positions = positions_for(s.tokens);
  Call call = bind_rope(s, dtype, style, xs.slot(0), positions, ys.slot(0));
  const CopyAnchor anchor = measure_copy(xs, ys, bytes);

  const double moved = bytes_moved(s, dtype);
  const PairedTiming timing = time_cold_calls_paired_copy(state, call, {{"x", &xs}, {"y", &ys}}, xs, ys, bytes, moved);
  set_bandwidth_counters(state, moved, timing, anchor);
}

// The same buffers every call: at these sizes x and y stay in L2, so this is what the
// kernel costs with the memory taken away. A kernel whose warm GB/s is not well above the
// cold copy cannot reach the copy cold.
void BM_rope_warm(benchmark::State& state, DType dtype, const char* style) {
  const Shape s = shape_of(state);
  std::vector<uint8_t> x(s.bytes(dtype), 0x3c), y(s.bytes(dtype));
  std::vector<int32_t> positions = positions_for(s.tokens);
  Call call = bind_rope(s, dtype, style, x.data(), positions, y.data());
  const double median = time_calls(state, call, [](Call&) {});
  state.counters["threads"] = halide_thread_count();
  state.counters["GB/s"] = bytes_moved(s, dtype) / median / 1e9;
  state.counters["ns/token"] = median * 1e9 / s.tokens;
}

void arg_names(benchmark::internal::Benchmark* b) {
  b->ArgNames({"tokens", "heads", "head_dim", "rotary_dim"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

// Decode step, a prefill chunk, a long prompt; Llama-7B's 32 heads of 128.
void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t tokens : {1, 128, 4096}) b->Args({tokens, 32, 128, 0});
  arg_names(b);
}

// The time split at the large shape: with fewer rotated dims the rotation shrinks while
// the bytes stay the same (the rest of each row passes through).
void partial_rotation(benchmark::internal::Benchmark* b) {
  for (int64_t rotary_dim : {64, 2}) b->Args({4096, 32, 128, rotary_dim});
  arg_names(b);
}

// Warm: all dims, almost none (the kernel's skeleton), and one head (the per-token
// (cos, sin) table with little else).
void warm_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t rotary_dim : {0, 64, 2}) b->Args({16, 32, 128, rotary_dim});
  b->Args({256, 1, 128, 0});
  arg_names(b);
}

// Style "half" is Hugging Face's rotate_half (GPT-NeoX); "interleaved" is GPT-J / Meta's.
BENCHMARK_CAPTURE(BM_rope, f32_half, DType::float32, "half")->Apply(shapes);
BENCHMARK_CAPTURE(BM_rope, f32_interleaved, DType::float32, "interleaved")->Apply(shapes);
BENCHMARK_CAPTURE(BM_rope, f16_half, DType::float16, "half")->Apply(shapes);
BENCHMARK_CAPTURE(BM_rope, f16_interleaved, DType::float16, "interleaved")->Apply(shapes);
BENCHMARK_CAPTURE(BM_rope, f32_half_partial, DType::float32, "half")->Apply(partial_rotation);
BENCHMARK_CAPTURE(BM_rope, f32_interleaved_partial, DType::float32, "interleaved")->Apply(partial_rotation);
BENCHMARK_CAPTURE(BM_rope, f16_half_partial, DType::float16, "half")->Apply(partial_rotation);
BENCHMARK_CAPTURE(BM_rope, f16_interleaved_partial, DType::float16, "interleaved")->Apply(partial_rotation);
BENCHMARK_CAPTURE(BM_rope_warm, f32_half, DType::float32, "half")->Apply(warm_shapes);
BENCHMARK_CAPTURE(BM_rope_warm, f32_interleaved, DType::float32, "interleaved")->Apply(warm_shapes);
BENCHMARK_CAPTURE(BM_rope_warm, f16_half, DType::float16, "half")->Apply(warm_shapes);
BENCHMARK_CAPTURE(BM_rope_warm, f16_interleaved, DType::float16, "interleaved")->Apply(warm_shapes);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) { return npukit::bench::run_benchmarks(argc, argv); }
