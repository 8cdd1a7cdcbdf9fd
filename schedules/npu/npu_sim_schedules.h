// Registers the npu-sim kernel of the NPU schedule that is not (yet) in the NpuSchedule
// registration: attention (decode only: prefill runs as T decode steps). Call after
// sim::register_npu_sim_kernels(). rope and per_token_quant are registered through
// npu_schedule_rope() and npu_schedule_per_token_quant().
#pragma once

namespace npukit::schedules::npu {

void register_npu_sim_schedules();

}  // namespace npukit::schedules::npu
