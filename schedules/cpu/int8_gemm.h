#pragma once

#include "Halide.h"
#include "ops/int8_gemm.h"

namespace npukit::schedules::cpu {

enum class GemmShape { decode, prefill };

// decode (M = 1): blocks of output channels in parallel, the packed weights streamed from
// DRAM once. prefill (M ≥ 2): tiles of 8 rows × 32 channels held in registers, rows inside
// the channel tile, so each weight block streams once and serves every row.
void schedule_int8_gemm_acc(ops::Int8GemmAcc& g, GemmShape shape, const Halide::Target& target);

}  // namespace npukit::schedules::cpu
