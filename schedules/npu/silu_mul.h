// The silu_mul NPU schedule: tiles of tokens × FFN columns; each tile's gate and up
// halves are DMA'd into the vector buffer (double-buffered when two copies fit), combined
// there on the vector unit and DMA'd back. The algorithm is ops/silu_mul's. Registered as
// npu_schedule_silu_mul() (schedules/npu/npu_schedule.h).
#pragma once

#include <cstdint>

#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct SiluMulTiles {
  int64_t tokens = 1, ffn = 1;
  bool double_buffer = false;
};

// Tiles whose two input halves (twice when double-buffered) and output fit the vector
// buffer: whole rows of ffn when they fit, else the most whole vectors (and whole DMA
// bursts) of a row that do; then split further until every core has a tile.
SiluMulTiles choose_silu_mul_tiles(const sim::ArchSpec& arch, int64_t tokens, int64_t ffn, int64_t element_bytes);

// gate_up [tokens, 2, ffn] of `type` (fp32 or fp16), y [tokens, ffn] of the same type.
// Int params tile_tokens and tile_ffn (columns, rounded down to whole vectors, at least one).
NpuPipeline silu_mul_npu_pipeline(const sim::ArchSpec& arch, Halide::Type type, bool double_buffer);

}  // namespace npukit::schedules::npu
