// What `npukit sim` and `npukit tune` share: the --arch argument and one simulation with
// the simulator's std::invalid_argument turned into a usage error.
#pragma once

#include <string>

#include "simulator/analysis/op_simulation.h"
#include "simulator/analysis/stage_simulation.h"
#include "simulator/simulate.h"

namespace npukit::cli {

sim::ArchSpec arch_argument(const std::string& name_or_path);
sim::SimResult simulate_request(const sim::SimRequest& r, const sim::ArchSpec& arch, bool strict);
// The same for a composite schedule (sim::is_composite): its stages and their sum.
sim::StagedResult simulate_staged_request(const sim::SimRequest& r, const sim::ArchSpec& arch, bool strict);
// 1 when a violation of severity error is among the result's, else 0.
int has_rule_errors(const sim::SimResult& r);

}  // namespace npukit::cli
