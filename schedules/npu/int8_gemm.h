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

// Tiles in multiples of the matrix unit's shape that fit the arch's buffers.
// Every buffer is counted as the rules count it (alignment rounding, two copies when
// double-buffered, the per-channel factor tiles and, where the accumulator buffer is not
// readable by the vector unit, the accumulator's copy for the epilogue). Among the shapes
// that fit, the one that moves the fewest DRAM bytes (activations reload per N tile,
// weights per M tile; DMA setups and burst waste counted as bytes). Double-buffered when
// anything fits that way. N tiles keep output rows whole multiples of the store DMA's
// alignment and are balanced across cores.
GemmTiles choose_gemm_tiles(const sim::ArchSpec& arch, int64_t M, int64_t N, int64_t K, GemmOut out);

// Whether the int8_gemm schedule copies the accumulator tile into the vector buffer
// before the epilogue (the arch's accumulator buffer is not readable by the vector unit).
bool stages_acc_for_vector(const sim::ArchSpec& arch, GemmOut out);

// Inputs a [M, K] int8 (Halide (k, m)), w [N, K] int8 ((k, n)), then per channel [N]:
// multiplier and shift (int32) for int8_fixed_point, chan_scale (fp32) for int8_float,
// chan_scale and bias (fp32) for float32/float16 (the op entry computes them as the CPU
// path does). Int params: a_zero_point, tile_m, tile_n, tile_k, out_zero_point.
// Output "int8_gemm_npu" (n, m).
NpuPipeline int8_gemm_npu_pipeline(const sim::ArchSpec& arch, GemmOut out, bool double_buffer);

}  // namespace npukit::schedules::npu
