// A composite NPU schedule (NpuSchedule::stages) simulated as its stages: each stage's
// own schedule (a registered op's, or a stage-only pipeline's) resolved for the stage's
// shape, dtype and parameters, analysed, checked and costed alone; then their sum and the
// intermediates' traffic (simulator/staged_result.h). Names no op.
#pragma once

#include <string>

#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/staged_result.h"

namespace npukit::sim {

// Whether `op` has a registered composite schedule.
bool is_composite(const std::string& op);

// The stages of a composite request, as its schedule gives them for the resolved shape,
// dtype and parameters. std::invalid_argument as resolve_request, naming the op.
schedules::npu::NpuStages request_stages(const SimRequest& request, const ArchSpec& arch);

// Every stage simulated (`strict` as for simulate), summed, with the intermediates'
// traffic. A stage's error is std::invalid_argument "<op> stage '<label>': <why>".
StagedResult simulate_stages(const SimRequest& request, const ArchSpec& arch, bool strict);

}  // namespace npukit::sim
