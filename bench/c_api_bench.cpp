// The C ABI's call overhead: rms_norm [1, 4096] fp32 on hot data (the same x, weight and y
// every call, all in L1/L2) through the generated kernel directly (the anchor), the
// registry's run_call on a call bound once, a prepared op by name and by position, and
// npukit_run. Each carries `direct_ns`, the anchor timed in the same benchmark on the same
// thread in batches alternating with its own, and `overhead_ns`, the difference. Threads(2): two callers share one prepared op, each on
// its own tensors. Halide fixes its pool size at start: run once per HL_NUM_THREADS.
#include <benchmark/benchmark.h>

#include <dlpack/dlpack.h>

#include <vector>

#include "bench/batch_timing.h"
#include "bench/machine_context.h"
#include "kernels/rms_norm_f32.h"
#include "npukit/npukit.h"
#include "runtime/bind.h"
#include "runtime/halide_call.h"
#include "runtime/registry.h"

namespace npukit::bench {
namespace {

constexpr int64_t kHidden = 4096;

// One caller's tensors, as DLPack and as Halide buffers for the direct call.
struct Row {
  std::vector<float> x = std::vector<float>(kHidden), w = std::vector<float>(kHidden, 1.0f), y = std::vector<float>(kHidden);
  int64_t xs[2] = {1, kHidden}, ws[1] = {kHidden};
  DLTensor dx{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, nullptr, 0};
  DLTensor dw{w.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, ws, nullptr, 0};
  DLTensor dy{y.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, nullptr, 0};
  TensorView vx{x.data(), DType::float32, {1, kHidden}, {}}, vw{w.data(), DType::float32, {kHidden}, {}},
      vy{y.data(), DType::float32, {1, kHidden}, {}};
  HalideBuffer bx{vx}, bw{vw}, by{vy};
  decltype(kernels::rms_norm_f32.tiers[0]) kernel = pick_cpu_variant(kernels::rms_norm_f32, "");

  Row() {
    for (int64_t i = 0; i < kHidden; ++i) x[i] = 0.001f * static_cast<float>(i % 1000) - 0.5f;
  }
  void direct() { kernel.fn(nullptr, bx.get(), bw.get(), 1e-5f, by.get()); }
};

npukit_op* shared_op() {
  static npukit_op* op = [] {
    const npukit_param eps[] = {{"eps", "1e-5"}};
    return npukit_op_create("rms_norm", "cpu", eps, 1);
  }();
  return op;
}

// Each iteration times a batch of direct calls, then a batch of `call`s, back to back, so
// that both see the same machine state; the reported time is `call`'s per call, and
// overhead_ns the median of the per-iteration differences. (The wall time of a run is about
// 2 * kBatch times the benchmark's min_time.)
template <class F>
void against_direct(benchmark::State& state, Row& r, F&& call) {
  constexpr int kBatch = 16;
  std::vector<double> direct, diff;
  bool ok = true;
  for (auto _ : state) {
    const double d = ns_per_call(kBatch, [&] { r.direct(); });
    const double a = ns_per_call(kBatch, [&] { ok = call() == NPUKIT_OK && ok; });
    state.SetIterationTime(a * 1e-9);
    direct.push_back(d);
    diff.push_back(a - d);
  }
  if (!ok) state.SkipWithError(npukit_last_error());
  state.counters["direct_ns"] = benchmark::Counter(median_of(direct), benchmark::Counter::kAvgThreads);
  state.counters["overhead_ns"] = benchmark::Counter(median_of(diff), benchmark::Counter::kAvgThreads);
}

void BM_direct(benchmark::State& state) {
  Row r;
  for (auto _ : state) r.direct();
}

// The registry's kernel call on a call bound once (no checks, no C ABI): what the op's run
// function and call_kernel cost on their own.
void BM_run_call(benchmark::State& state) {
  Row r;
  const Call call = bind_call(find_op("rms_norm"), "cpu", {{"x", r.vx}, {"weight", r.vw}, {"y", r.vy}}, {{"eps", "1e-5"}});
  against_direct(state, r, [&] {
    run_call(call);
    return NPUKIT_OK;
  });
}

void BM_op_run(benchmark::State& state) {
  Row r;
  npukit_op* op = shared_op();
  const npukit_tensor t[] = {{"x", &r.dx}, {"weight", &r.dw}, {"y", &r.dy}};
  against_direct(state, r, [&] { return npukit_op_run(op, t, 3); });
}

void BM_op_run_positional(benchmark::State& state) {
  Row r;
  npukit_op* op = shared_op();
  const DLTensor* t[] = {&r.dx, &r.dw, &r.dy};
  against_direct(state, r, [&] { return npukit_op_run_positional(op, t, 3); });
}

void BM_npukit_run(benchmark::State& state) {
  Row r;
  const npukit_tensor t[] = {{"x", &r.dx}, {"weight", &r.dw}, {"y", &r.dy}};
  const npukit_param eps[] = {{"eps", "1e-5"}};
  against_direct(state, r, [&] { return npukit_run("rms_norm", "cpu", t, 3, eps, 1); });
}

void callers(benchmark::internal::Benchmark* b) { b->Threads(1)->Threads(2)->Unit(benchmark::kMicrosecond); }
void paired(benchmark::internal::Benchmark* b) { callers(b->UseManualTime()); }

BENCHMARK(BM_direct)->Apply(callers)->UseRealTime();
BENCHMARK(BM_run_call)->Apply(paired);
BENCHMARK(BM_op_run)->Apply(paired);
BENCHMARK(BM_op_run_positional)->Apply(paired);
BENCHMARK(BM_npukit_run)->Apply(paired);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) { return npukit::bench::run_benchmarks(argc, argv); }
