// The machine-readable report of one simulation (`npukit sim --format json`). The keys are
// a contract for scripts: docs/simulator/cost-model.md lists them. The timeline is left
// out; it goes to the trace.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "simulator/simulate.h"
#include "simulator/staged_result.h"

namespace npukit::sim {

nlohmann::json violation_to_json(const Violation& v);
nlohmann::json to_json(const SimResult& result);
// A composite schedule: the total's keys (dtype as the schedule names it), "stages" (each
// stage's to_json with its "label"), "intermediates" and "fusion".
nlohmann::json to_json(const StagedResult& result);

}  // namespace npukit::sim
