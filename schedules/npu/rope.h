// The RoPE NPU schedule: x is streamed in double-buffered tiles of tile_tokens tokens ×
// tile_heads heads (whole head_dim rows) into the vector unit's buffer, rotated there and
// DMA'd back. cos/sin are computed on the vector unit, once per token tile, from the
// positions (read by the core's scalar unit) with ops/rope's fp64 angle and polynomial —
// not read from a DRAM table (docs/simulator/ir-analysis.md says why). The algorithm is
// ops/rope's.
#pragma once

#include <cstdint>

#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct RopeTiles {
  int64_t tokens = 1, heads = 1;
  bool double_buffer = false;
};

// The most heads per tile (all of them when they fit), then the most tokens per tile,
// whose x tile (twice when double-buffered), rotated tile and the token tile's (cos, sin)
// fit the vector buffer; at least 1 × 1. Balanced so that the tile count splits evenly
// over the cores where it can.
RopeTiles choose_rope_tiles(const sim::ArchSpec& arch, int64_t tokens, int64_t heads, int64_t head_dim,
                            int64_t rotary_dim, int64_t element_bytes);

// x [tokens, heads, head_dim] (Halide (d, h, t)) of `type` (fp32 or fp16), positions
// [tokens] int32; y of x's type. `rotary_dim_or_0` is even, 0 meaning head_dim (a
// constant of the pipeline). Int params tile_tokens, tile_heads; float param theta (the
// op's fp64 theta rounded to fp32: exact for the integer thetas models use). Output
// "rope_npu" (tensor y). fp16 converts in portable code. Registered as
// npu_schedule_rope(), variant "<dtype>,<style>,<rotary_dim>".
NpuPipeline rope_npu_pipeline(const sim::ArchSpec& arch, Halide::Type type, bool interleaved, int rotary_dim_or_0,
                              bool double_buffer);

}  // namespace npukit::schedules::npu
