// Registers the npu-sim kernels of the NPU schedules that are not (yet) in the NpuSchedule
// registration: per_token_quant (its decode scale store is a rule error). Call after
// sim::register_npu_sim_kernels().
#pragma once

namespace npukit::schedules::npu {

void register_npu_sim_schedules();

}  // namespace npukit::schedules::npu
