// Rows copied from one DRAM tensor into another through the vector buffer, the two outer
// dims swapped and converted to the destination's dtype on the way out: the KV-cache
// write of a composite schedule (k and v rows [T, Hkv, Dh] into the cache rows
// pos ... pos+T−1 of each kv head, laid out [Hkv, T, Dh]) and, with b = 1, a plain dtype
// conversion between stages (rotated fp32 q [T·Hq, 1, Dh] to an fp16 attention's q).
// A stage-only schedule (NpuSchedule::stage_only).
#pragma once

#include <cstdint>

#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct CopyTiles {
  int64_t a = 1, b = 1;  // rows of the source's two outer dims per tile
  bool double_buffer = false;
};

// The largest tile (all of b, then as much of a as fits) whose source rows (twice when
// double-buffered) fit the vector buffer, then smaller until every core has a tile, a
// tile's destination run (its a rows of `out_element_bytes` elements) never below a burst.
CopyTiles choose_copy_tiles(const sim::ArchSpec& arch, int64_t a, int64_t b, int64_t row, int64_t element_bytes,
                            int64_t out_element_bytes);

// src [a, b, row] (Halide (d, i, j) = (row, b, a)) of `in`; dst [b, a, row] of `out`.
// Int params tile_a, tile_b. Output "copy_rows_npu" (tensor dst).
NpuPipeline copy_rows_npu_pipeline(const sim::ArchSpec& arch, Halide::Type in, Halide::Type out, bool double_buffer);

// The stage-only registration: shape a, b, row; dtype float16 or float32 (src);
// parameter out (same | float32 | float16).
const NpuSchedule& npu_stage_copy_rows();

}  // namespace npukit::schedules::npu
