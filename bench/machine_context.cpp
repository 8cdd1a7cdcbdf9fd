#include "bench/machine_context.h"

#include <benchmark/benchmark.h>

#include "bench/copy_anchor.h"
#include "runtime/cpu_features.h"
#include "runtime/registry.h"

namespace npukit::bench {

std::string dispatched_tiers() {
  std::string out;
  for (const OpSpec* op : all_ops()) {
    if (op->cpu_tiers.empty()) continue;
    const std::string* tier = dispatched_cpu_tier(*op);
    out += (out.empty() ? "" : " ") + op->name + ":" + (tier ? *tier : "none");
  }
  return out;
}

void add_machine_context() {
  benchmark::AddCustomContext("cpu", cpu_model());
  benchmark::AddCustomContext("cpu_features", describe(cpu_features()));
  benchmark::AddCustomContext("halide_threads", std::to_string(halide_threads()));
  benchmark::AddCustomContext("dispatched_tiers", dispatched_tiers());
}

int run_benchmarks(int argc, char** argv) {
  add_machine_context();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace npukit::bench
