// The auto-tiler behind `npukit tune`: searches an NPU schedule's knobs (every knob its
// registration declares, double_buffer included) for the settings that break no rule and
// minimise simulated total cycles. Each candidate re-reads the variant's lowered nest with
// other knob values (no Halide compile per candidate): the chooser's default first, then
// coordinate descent one knob at a time, then seeded random samples while budget remains.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "simulator/analysis/op_simulation.h"
#include "simulator/simulate.h"

namespace npukit::sim {

struct TuneOptions {
  double budget_s = 10;   // wall-clock bound of the search
  int64_t max_candidates = 20000;
  uint64_t seed = 1;      // the random phase's seed: same inputs, same result
  bool strict = false;    // warnings (padding, partial bursts) reject a candidate too
};

struct TuneCandidate {
  schedules::npu::Knobs knobs;
  SimResult result;
};

struct TuneResult {
  ResolvedRequest request;
  TuneCandidate best_default;          // the chooser's knobs (may itself break a rule)
  bool default_valid = false;
  std::vector<TuneCandidate> valid;    // every candidate that breaks no rule, best (fewest cycles) first
  int64_t evaluated = 0;               // distinct knob settings analysed
  // By the first rule they broke; "analysis" when the nest could not be read,
  // "too_many_tiles" when skipped for having over 16x the default's tiles (at least 256).
  std::map<std::string, int64_t> rejected;
  double seconds = 0;
};

// The knob values the search tries: powers of two and three times powers of two up to a
// top (the dim the knob tiles, else 64 × the default), the top, the default and its
// halvings, only those in the knob's range that are multiples of its multiple_of; for
// double_buffer 0 and 1.
std::map<std::string, std::vector<int64_t>> knob_values(const ResolvedRequest& r);

// std::invalid_argument for a bad request (as analyse_op).
TuneResult tune(const SimRequest& request, const ArchSpec& arch, const TuneOptions& options = {});

}  // namespace npukit::sim
