// The per-channel (and per-row) factors of INT8 GEMM's output stage, computed from the op's parameters
// in one place for every target (the CPU epilogue kernels and the NPU schedule): fp32
// scales exactly as the contract writes them (docs/ops/int8_gemm.md), and the fixed-point
// multiplier and shift of rounding=fixed_point.
#pragma once

#include <cstdint>

#include "runtime/op_spec.h"
#include "runtime/scratch_arena.h"

namespace npukit {

// N values each (row_scale: M), in the frame's memory or the call's tensors.
struct Int8ChannelFactors {
  float* chan_scale;  // float outputs: a_scale·w_scale; int8: a_scale·w_scale / out_scale
  float* bias;        // float outputs; zeros without the bias input
  int32_t *multiplier, *shift;  // out=int8, rounding=fixed_point; zeros otherwise
  // Float outputs: the input a_scales, or ones without it (exact: the single a_scale is in
  // chan_scale). Unread by the int8 outputs.
  const float* row_scale;
};

// For a validated int8_gemm call whose out is not int32.
Int8ChannelFactors int8_channel_factors(const Call& call, ScratchFrame& frame);

}  // namespace npukit
