// The dequantization of an INT8 GEMM's int32 accumulators, y = acc · (row_scale ·
// chan_scale) (ops/per_token_quant's `dequantize`, fp32 in that order), as an NPU stage:
// tiles of tile_m rows × tile_n columns of acc are DMA'd (double-buffered) into the vector
// buffer with their channel scales and converted on the way out; each row's scale is a
// scalar the core's scalar unit reads (4 B a row, not costed). The int8-weight
// projections of a composite schedule (qkv_attention) use it after int8_gemm's int32
// output. A stage-only schedule (NpuSchedule::stage_only).
#pragma once

#include <cstdint>

#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct DequantTiles {
  int64_t m = 1, n = 1;
  bool double_buffer = false;
};

// Whole rows when they fit (acc twice when double-buffered, beside the channel scales), the most
// rows that fit, then smaller until every core has a tile; column tiles whose int32 loads
// and stores of `out_element_bytes` elements are whole bursts where N allows.
DequantTiles choose_dequant_tiles(const sim::ArchSpec& arch, int64_t M, int64_t N, int64_t out_element_bytes);

// acc [M, N] int32 (Halide (n, m)), row_scale [M] and chan_scale [N] fp32; y [M, N] of
// `out` (fp32 or fp16). Int params tile_m, tile_n. Output "dequantize_rows_npu" (tensor y).
NpuPipeline dequantize_rows_npu_pipeline(const sim::ArchSpec& arch, Halide::Type out, bool double_buffer);

// The stage-only registration: shape M, N; dtype float32 or float16 (y's).
const NpuSchedule& npu_stage_dequantize_rows();

}  // namespace npukit::schedules::npu
