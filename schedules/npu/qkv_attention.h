// The fused attention block `qkv_attention` on the NPU, as a composite schedule: the
// sequence of the per-op NPU schedules it is made of (NpuSchedule::stages), each run and
// analysed as it would be alone, with the intermediates (the projected rows, the rotated
// q and k, o, and for int8 weights the quantized activations and their scales) in DRAM.
//
// Float weights: qkv projection (float linear, fp32 rows) → rope q, rope k → k and v into
// the caches at rows pos ... pos+T−1 (converted to the cache dtype) → [fp16: q to fp16] →
// attention → output projection (float linear). Int8 weights: per_token_quant(x) →
// int8_gemm (int32) → dequantize → the same rope, cache and attention stages →
// per_token_quant(o) → int8_gemm → dequantize into y. The runtime's CPU path
// (runtime/ops/qkv_attention.cpp) computes the same values in the same order.
#pragma once

#include "schedules/npu/npu_schedule.h"

namespace npukit::schedules::npu {

// Dtypes: "float16" and "float32" (x, weights and caches of that dtype), "int8" (int8
// weights, fp16 x and caches) and "int8_float32" (int8 weights, fp32 x and caches).
// Shape T, D, Hq, Hkv, Dh, S_max.
const NpuSchedule& npu_schedule_qkv_attention();

}  // namespace npukit::schedules::npu
