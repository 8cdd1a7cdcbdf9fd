// The RMSNorm NPU schedule: tiles of whole rows are DMA'd into the vector unit's buffer
// (double-buffered when two copies fit), normalized there (Σx², 1/rms, scale by the
// weight, which is loaded once) and DMA'd back. The algorithm is ops/rms_norm's.
// Registered as npu_schedule_rms_norm() (schedules/npu/npu_schedule.h).
#pragma once

#include <cstdint>

#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct RowTiles {
  int64_t rows = 1;
  bool double_buffer = false;
};

// The most rows per tile whose input (twice when double-buffered) and output copies fit
// the vector buffer next to the weight, but at most ceil(rows / cores) so that every core
// has a tile; at least one row.
RowTiles choose_row_tiles(const sim::ArchSpec& arch, int64_t rows, int64_t hidden, int64_t element_bytes);

// x [rows, hidden] and weight [hidden] of `type` (fp32 or fp16), y of the same type.
// Int param tile_rows; float param eps. Vectors of the vector unit's width. fp16 converts
// in portable code (an NPU converts natively; the host run only has to agree with the
// contract, NaN included).
NpuPipeline rms_norm_npu_pipeline(const sim::ArchSpec& arch, Halide::Type type, bool double_buffer);

}  // namespace npukit::schedules::npu
