// One simulation of one operator on one architecture: the rules and the cost model run
// over the same OpAnalysis, kept together with their inputs so every report (table,
// JSON, trace, roofline) is written from one value.
#pragma once

#include <vector>

#include "simulator/analysis/op_analysis.h"
#include "simulator/arch/arch_spec.h"
#include "simulator/cost/cost_model.h"
#include "simulator/rules/rules.h"

namespace npukit::sim {

struct SimResult {
  OpAnalysis analysis;
  ArchSpec arch;
  std::vector<Violation> violations;
  CostReport cost;
};

// check_rules(analysis, arch, strict) and estimate_cost(analysis, arch, options).
SimResult simulate(const OpAnalysis& analysis, const ArchSpec& arch, bool strict, const CostOptions& options = {});

}  // namespace npukit::sim
