// The per-token int8 quantization NPU schedule: tiles of tile_rows whole rows of a are
// DMA'd (double-buffered) into the vector buffer; each row's maximum magnitude (in
// registers), its scale (in the vector buffer) and its int8 q (computed on the way out)
// are made there, and q and the scales go back to DRAM. The algorithm is
// ops/per_token_quant's; the scale output's loop is fused with q's (compute_with), so a is
// read once.
#pragma once

#include <cstdint>

#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct QuantTiles {
  int64_t rows = 1;
  bool double_buffer = false;
};

// Up to the most rows per tile whose a tile, twice when double-buffered, and scales fit
// the vector buffer: the largest that leaves the busiest core the fewest rows. Where the store engine has no
// partial writes, rows come in multiples of those whose fp32 scales fill one alignment
// unit (unless T is smaller), so that every tile's scale store is aligned.
QuantTiles choose_quant_tiles(const sim::ArchSpec& arch, int64_t T, int64_t K, int64_t element_bytes);

// a [T, K] (Halide (k, t)) of `type` (fp32 or fp16). Int param tile_rows. Outputs
// "per_token_quant_q" (k, t) int8 and "per_token_quant_scale" (t) fp32: tensors q and
// scale. Registered as npu_schedule_per_token_quant(), variant "<dtype>".
NpuPipeline per_token_quant_npu_pipeline(const sim::ArchSpec& arch, Halide::Type type, bool double_buffer);

}  // namespace npukit::schedules::npu
