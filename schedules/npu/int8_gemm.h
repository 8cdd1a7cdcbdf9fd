// The INT8 GEMM NPU schedule: output tiles of [tile_m, tile_n] accumulate in the matrix
// unit's accumulator buffer over K chunks of tile_k; each chunk's activation tile and
// weight tile are DMA'd into the matrix operand buffers (double-buffered when both copies
// fit); the finished tile goes back to DRAM, requantized on the way for int8 outputs.
// Tile sizes are pipeline parameters chosen per shape by choose_gemm_tiles.
#pragma once

#include <cstdint>
#include <string>

#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

// The output stage, as the op's `out` and `rounding` parameters choose it.
enum class GemmOut { int32, int8_fixed_point, int8_float, float32, float16 };

struct GemmTiles {
  int64_t m = 1, n = 1, k = 1;
  bool double_buffer = false;
};

// The largest tiles that fit the arch's operand and accumulator buffers (twice, when
// double-buffered) in multiples of the matrix unit's shape: K whole when it fits (no
// partial sums leave the accumulator), then N as wide as fits, M up to the whole of M.
// Falls back to single buffering before shrinking a tile below the unit's shape. N tiles
// keep output rows (tile_n · out_bytes) whole multiples of the store DMA's alignment.
GemmTiles choose_gemm_tiles(const sim::ArchSpec& arch, int64_t M, int64_t N, int64_t K, int64_t out_bytes);

// Inputs a [M, K] int8 (Halide (k, m)), w [N, K] int8 ((k, n)), then per channel [N]:
// multiplier and shift (int32) for int8_fixed_point, chan_scale (fp32) for int8_float,
// chan_scale and bias (fp32) for float32/float16 (the op entry computes them as the CPU
// path does). Int params: a_zero_point, tile_m, tile_n, tile_k, out_zero_point.
// Output "int8_gemm_npu" (n, m).
NpuPipeline int8_gemm_npu_pipeline(const sim::ArchSpec& arch, GemmOut out, bool double_buffer);

}  // namespace npukit::schedules::npu
