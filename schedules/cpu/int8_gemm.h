#pragma once

#include "Halide.h"
#include "ops/int8_gemm.h"

namespace npukit::schedules::cpu {

enum class GemmShape { decode, prefill };

// decode (M ≤ 16): blocks of output channels in parallel, each block's packed weights
// streamed from DRAM once and reused from L2 for every row. prefill: register-blocked
// tiles of rows × channels, compute bound on vpdpbusd.
void schedule_int8_gemm_acc(ops::Int8GemmAcc& g, GemmShape shape, const Halide::Target& target);

}  // namespace npukit::schedules::cpu
