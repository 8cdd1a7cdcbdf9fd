// Registers the npu-sim kernels of the NPU schedules written before the NpuSchedule
// registration (schedules/npu/npu_schedule.h) lands: rope, attention, per_token_quant.
// When it lands, each
// schedule registers itself there and this file goes.
#pragma once

namespace npukit::schedules::npu {

void register_npu_sim_schedules();

}  // namespace npukit::schedules::npu
