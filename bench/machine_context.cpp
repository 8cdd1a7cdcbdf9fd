#include "bench/machine_context.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/copy_anchor.h"
#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/halide_threads.h"
#include "runtime/registry.h"

namespace npukit::bench {

namespace {
std::string& target_storage() {
  static std::string target = "cpu";
  return target;
}

// Takes `--npukit_target=cpu:TIER` out of argv; false (with a message) where it is malformed
// or this CPU lacks the tier's features.
bool take_target_flag(int& argc, char** argv) {
  const char* flag = "--npukit_target=";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], flag, std::strlen(flag)) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::string value = argv[i] + std::strlen(flag);
    if (value == "cpu") {
      target_storage() = value;
      continue;
    }
    if (value.rfind("cpu:", 0) != 0 || value.size() == 4) {
      std::fprintf(stderr, "--npukit_target: '%s' is not cpu:TIER (a bench runs CPU kernels)\n", value.c_str());
      return false;
    }
    const std::string why = tier_unavailable(value.substr(4));
    if (!why.empty()) {
      std::fprintf(stderr, "--npukit_target: %s\n", why.c_str());
      return false;
    }
    target_storage() = value;
  }
  argc = kept;
  argv[argc] = nullptr;
  return true;
}
}  // namespace

const std::string& bench_target() { return target_storage(); }

const char* forced_tier() { return bench_target() == "cpu" ? "" : bench_target().c_str() + 4; }  // after "cpu:"

std::string dispatched_tiers() {
  std::string out;
  for (const OpSpec* op : all_ops()) {
    if (op->cpu_tiers.empty()) continue;
    const std::string* tier = dispatched_cpu_tier(*op, forced_tier());
    out += (out.empty() ? "" : " ") + op->name + ":" + (tier ? *tier : "none");
  }
  return out;
}

void add_machine_context() {
  benchmark::AddCustomContext("cpu", cpu_model());
  benchmark::AddCustomContext("cpu_features", describe(cpu_features()));
  benchmark::AddCustomContext("halide_threads", std::to_string(halide_thread_count()));
  if (bench_target() != "cpu") {
    benchmark::AddCustomContext("npukit_target", bench_target() + " (forced by --npukit_target)");
  }
  benchmark::AddCustomContext("dispatched_tiers", dispatched_tiers());
}

int run_benchmarks(int argc, char** argv) {
  if (!take_target_flag(argc, argv)) return 2;
  add_machine_context();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // A kernel error (say a forced tier below all of a kernel's tiers) stops the run: one line
  // and a failed exit, not an abort.
  try {
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\nbench stopped: %s\n", e.what());
    benchmark::Shutdown();
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace npukit::bench
