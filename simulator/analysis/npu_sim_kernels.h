// The `npu-sim:<arch>` target: each op's NPU schedule, lowered for the host and run on
// real data, so the gate checks NPU schedules like every other target. The schedule and
// its tile sizes are the ones `npukit sim` analyses for the same shape and arch.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "schedules/npu/npu_schedule.h"

namespace npukit::sim {

// Registers the npu-sim kernels of the ops with NPU schedules (and "npu-sim:<preset>" for
// listings). Idempotent.
void register_npu_sim_kernels();

// The npu-sim kernel of one schedule (an operator plug-in's, registered after the kit's);
// `s` must live as long as the process (npu_schedules()' elements do).
void register_npu_sim_kernel(const schedules::npu::NpuSchedule& s);

// Knobs the npu-sim kernel of `op` uses instead of its chooser's, from now on in this
// process (`npukit gate --schedule`). Names and ranges are checked here:
// std::invalid_argument naming the knob otherwise.
void set_npu_schedule_override(const std::string& op, const std::map<std::string, int64_t>& knobs);

}  // namespace npukit::sim
