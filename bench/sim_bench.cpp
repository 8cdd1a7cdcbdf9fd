// The simulator's own speed, for every registered NPU schedule: lowering one variant (done
// once, then cached), and analysing + costing one shape on the cached nest (what every
// shape of a sweep and every tuner candidate costs) at the schedule's decode and prefill
// shapes on every preset (a composite: all its stages, summed). The bar:
// one analysis + cost under 50 ms after the variant's first lowering; the anchor is the
// bar itself (`vs_50ms` = time / 50 ms).
#include <benchmark/benchmark.h>

#include <chrono>

#include "bench/machine_context.h"
#include "runtime/cpu_features.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/lowered_nest.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/analysis/stage_simulation.h"
#include "simulator/simulate.h"

namespace npukit::sim {
namespace {

using schedules::npu::NpuSchedule;

void lower(benchmark::State& state, const NpuSchedule* s) {
  const ArchSpec& arch = preset("edge-6tops");
  const Halide::Target target =
      Halide::Target(halide_cpu_target(cpu_features())).with_feature(Halide::Target::NoAsserts);
  SimRequest r;
  r.op = s->op;
  const ResolvedRequest rr = resolve_request(r, arch);
  for (auto _ : state) {
    schedules::npu::NpuPipeline p = s->build(arch, rr.variant, schedules::npu::fixed_knobs(rr.knobs));
    benchmark::DoNotOptimize(capture_lowered_nest(p, target));
  }
}

// A composite (NpuSchedule::stages) is every stage analysed and costed, then summed.
int64_t analyse_and_cost_once(const NpuSchedule& s, const SimRequest& r, const ArchSpec& arch) {
  if (s.stages) return simulate_stages(r, arch, false).total.cost.total_cycles;
  return simulate(analyse_op(r, arch), arch, false).cost.total_cycles;
}

void analyse_and_cost(benchmark::State& state, const NpuSchedule* s, const std::string& arch_name, bool prefill) {
  const ArchSpec& arch = preset(arch_name);
  SimRequest r;
  r.op = s->op;
  r.shape = prefill ? s->prefill : s->decode;
  analyse_and_cost_once(*s, r, arch);  // lower outside the timing
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(analyse_and_cost_once(*s, r, arch));
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state.counters["vs_50ms"] = seconds / 0.05;
}

}  // namespace
}  // namespace npukit::sim

int main(int argc, char** argv) {
  using namespace npukit::sim;
  for (const NpuSchedule& s : npukit::schedules::npu::npu_schedules()) {
    if (!s.stages)  // a composite lowers nothing of its own: its stages are schedules
      benchmark::RegisterBenchmark(("lower/" + s.op).c_str(), lower, &s)->Unit(benchmark::kMillisecond);
    for (const std::string& arch : preset_names()) {
      for (bool prefill : {false, true}) {
        const std::string name = "analyse_and_cost/" + s.op + "/" + arch + (prefill ? "/prefill" : "/decode");
        benchmark::RegisterBenchmark(name.c_str(), analyse_and_cost, &s, arch, prefill)->Unit(benchmark::kMillisecond);
      }
    }
  }
  return npukit::bench::run_benchmarks(argc, argv);
}
