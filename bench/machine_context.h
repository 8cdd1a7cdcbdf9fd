// What every bench prints before its results: the CPU it ran on (model, family and model
// numbers, features) and the CPU tier each op's kernels dispatch to here, so that a
// reader can tell machines and tiers apart (numbers differ 2x between CPU families, and a
// ratio means little without the tier that produced it).
#pragma once

#include <string>

namespace npukit::bench {

// "rms_norm:avx2 rope:avx2 ...": for every registered op with CPU kernels, the tier its
// calls dispatch to here (the best this CPU runs, or the best at or below the forced tier),
// or "none".
std::string dispatched_tiers();

// Adds cpu, cpu_features, halide_threads, npukit_target (where the command line forces a
// tier) and dispatched_tiers to Google Benchmark's context (printed in the console header
// and the JSON's "context").
void add_machine_context();

// The target a bench's calls bind to: "cpu" (the best tier this CPU runs), or the tier
// forced by the command line's `--npukit_target=cpu:TIER` (to compare tiers on one
// machine: `cpu:avx2` on an AVX-512 CPU).
const std::string& bench_target();

// The tier --npukit_target forces ("avx2"), or "" where none is forced.
const char* forced_tier();

// A bench's main: takes `--npukit_target` (refused, naming the missing features, where this
// CPU cannot run the tier), adds the context, then runs Google Benchmark's own main; a call
// refused on the way stops the bench with its message.
int run_benchmarks(int argc, char** argv);

}  // namespace npukit::bench
