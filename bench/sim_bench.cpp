// The simulator's own speed: lowering one NPU schedule variant (done once, then cached),
// and analysing + costing one shape on the cached nest (every shape of a sweep). The
// issue's bar: under 1 s per op after its Halide compile. Reported as the median time per
// call; the anchor is the bar itself (`vs_1s` = time / 1 s).
#include <benchmark/benchmark.h>

#include "runtime/cpu_features.h"
#include "schedules/npu/int8_gemm.h"
#include "simulator/analysis/lowered_nest.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/simulate.h"

namespace npukit::sim {
namespace {

void BM_lower_int8_gemm_schedule(benchmark::State& state) {
  const ArchSpec& arch = preset("edge-6tops");
  const Halide::Target target =
      Halide::Target(halide_cpu_target(cpu_features())).with_feature(Halide::Target::NoAsserts);
  for (auto _ : state) {
    schedules::npu::NpuPipeline p = schedules::npu::int8_gemm_npu_pipeline(arch, schedules::npu::GemmOut::int32, true);
    benchmark::DoNotOptimize(capture_lowered_nest(p, target));
  }
}

// M, K, N from the arguments; the nest is cached after the first call.
void BM_analyse_and_cost_int8_gemm(benchmark::State& state) {
  const ArchSpec& arch = preset(state.range(3) ? "ascend-910b-like" : "edge-6tops");
  SimRequest r;
  r.op = "int8_gemm";
  r.shape = {{"M", state.range(0)}, {"K", state.range(1)}, {"N", state.range(2)}};
  analyse_op(r, arch);  // lower outside the timing
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const SimResult s = simulate(analyse_op(r, arch), arch, false);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(s.cost.total_cycles);
  }
  state.counters["vs_1s"] = seconds;
}

void BM_analyse_and_cost_rms_norm(benchmark::State& state) {
  const ArchSpec& arch = preset("edge-6tops");
  SimRequest r;
  r.op = "rms_norm";
  r.dtype = "float16";
  r.shape = {{"rows", state.range(0)}, {"hidden", state.range(1)}};
  analyse_op(r, arch);
  for (auto _ : state) benchmark::DoNotOptimize(simulate(analyse_op(r, arch), arch, false).cost.total_cycles);
}

BENCHMARK(BM_lower_int8_gemm_schedule)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_analyse_and_cost_int8_gemm)
    ->ArgNames({"M", "K", "N", "ascend"})
    ->Args({1, 4096, 4096, 0})
    ->Args({128, 4096, 11008, 0})
    ->Args({512, 4096, 4096, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_analyse_and_cost_rms_norm)->ArgNames({"rows", "hidden"})->Args({16, 4096})->Args({512, 4096})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace npukit::sim

BENCHMARK_MAIN();
