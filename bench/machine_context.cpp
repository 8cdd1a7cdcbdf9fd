#include "bench/machine_context.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/copy_anchor.h"
#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "runtime/text.h"

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
    const std::string tier = value.substr(4);
    if (tier_requirements(tier).empty()) {
      std::fprintf(stderr, "--npukit_target: '%s' is not a CPU tier (sse41, avx2, avx512, avx512_vnni, avx512_amx)\n",
                   tier.c_str());
      return false;
    }
    const std::vector<std::string> missing = missing_for_tier(cpu_features(), tier);
    if (!missing.empty()) {
      std::fprintf(stderr, "--npukit_target: tier '%s' needs %s, which this CPU lacks\n", tier.c_str(),
                   join_names(missing).c_str());
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
    const std::string* tier = dispatched_cpu_tier(*op);
    out += (out.empty() ? "" : " ") + op->name + ":" + (tier ? *tier : "none");
  }
  return out;
}

void add_machine_context() {
  benchmark::AddCustomContext("cpu", cpu_model());
  benchmark::AddCustomContext("cpu_features", describe(cpu_features()));
  benchmark::AddCustomContext("halide_threads", std::to_string(halide_threads()));
  if (bench_target() == "cpu") {
    benchmark::AddCustomContext("dispatched_tiers", dispatched_tiers());
  } else {
    benchmark::AddCustomContext("npukit_target", bench_target() + " (forced by --npukit_target)");
  }
}

int run_benchmarks(int argc, char** argv) {
  if (!take_target_flag(argc, argv)) return 2;
  add_machine_context();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // A kernel without the forced tier (int8_gemm has no plain avx512 kernel, most ops no
  // avx512_vnni one) refuses the call: one line and a failed exit, not an abort.
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
