// The `npu-sim:<arch>` target: each op's NPU schedule, lowered for the host and run on
// real data, so the gate checks NPU schedules like every other target. The schedule and
// its tile sizes are the ones `npukit sim` analyses for the same shape and arch.
#pragma once

namespace npukit::sim {

// Registers the npu-sim kernels of the ops with NPU schedules (and "npu-sim:<preset>" for
// listings). Idempotent.
void register_npu_sim_kernels();

}  // namespace npukit::sim
