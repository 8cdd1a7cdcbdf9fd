// The add_rms_norm NPU schedule: tiles of whole rows of x and of the residual are DMA'd
// into the vector buffer (in chunks of columns when whole rows do not fit; double-buffered
// when two copies fit), added into the tile's sum, normalized there (rms_norm's Σx², 1/rms
// and scale by the weight, which is loaded once) and y and the sum are DMA'd back; the new
// residual's store runs after the tile's norm in the same loop (compute_with), so the
// in-place update never overtakes a read. The algorithm is ops/add_rms_norm's.
// Registered as npu_schedule_add_rms_norm() (schedules/npu/npu_schedule.h).
#pragma once

#include <cstdint>

#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct AddNormTiles {
  int64_t rows = 1;
  int64_t hidden = 1;  // columns of x and residual per DMA chunk
  bool double_buffer = false;
};

// The most rows per tile whose copies fit the vector buffer next to the weight, but at most
// ceil(rows / cores) so that every core has a tile; at least one row. x and residual come
// as whole rows when one of each fits beside the tile's sum and y, else in the widest
// chunks of whole vectors and DMA bursts that fit.
AddNormTiles choose_add_norm_tiles(const sim::ArchSpec& arch, int64_t rows, int64_t hidden, int64_t element_bytes);

// x, residual [rows, hidden] and weight [hidden] of `type` (fp32 or fp16); y and the new
// residual of the same type. Int params tile_rows, tile_hidden (rounded down to whole
// vectors, at least one); float param eps.
NpuPipeline add_rms_norm_npu_pipeline(const sim::ArchSpec& arch, Halide::Type type, bool double_buffer);

}  // namespace npukit::schedules::npu
