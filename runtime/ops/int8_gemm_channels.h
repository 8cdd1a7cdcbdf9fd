// The per-channel factors of INT8 GEMM's output stage, computed from the op's parameters
// in one place for every target (the CPU epilogue kernels and the NPU schedule): fp32
// scales exactly as the contract writes them (docs/ops/int8_gemm.md), and the fixed-point
// multiplier and shift of rounding=fixed_point.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/op_spec.h"

namespace npukit {

struct Int8ChannelFactors {
  std::vector<float> chan_scale;  // float outputs: a_scale·w_scale; int8: a_scale·w_scale / out_scale
  std::vector<float> bias;        // float outputs; zeros without the bias input
  std::vector<int32_t> multiplier, shift;  // out=int8, rounding=fixed_point; zeros otherwise
};

// For a validated int8_gemm call whose out is not int32.
Int8ChannelFactors int8_channel_factors(const Call& call);

}  // namespace npukit
