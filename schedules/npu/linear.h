// The float linear layer y = x · wᵀ as an NPU stage: the projections of a composite
// schedule (qkv_attention's QKV and output projections with float weights). Not a
// registry op, so it is a stage-only schedule (NpuSchedule::stage_only).
//
// fp16 x and w run on the matrix unit where it has fp16 (edge-6tops, ascend-910b-like):
// output tiles [tile_m, tile_n] accumulate in fp32 in the accumulator buffer over K chunks
// of tile_k whose operand tiles are DMA'd into the matrix operand buffers, as int8_gemm's
// schedule does. Elsewhere (fp32 weights, units without fp16) the vector unit keeps a
// vector of `lanes` partial sums per output (the order ops/qkv_attention.h's
// define_linear has, the K tail folded into the last chunk) for the same output tiles,
// over the same K chunks of x and w DMA'd (double-buffered) into the vector buffer.
// `unit=matrix` forces the matrix unit, so that a unit without the dtype says so (the
// matrix_dtype rule).
#pragma once

#include <cstdint>

#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

// Whether fp16 products of x and w of `element_bytes` run on `arch`'s matrix unit.
bool linear_on_matrix(const sim::ArchSpec& arch, int64_t element_bytes);

struct LinearTiles {
  int64_t m = 1, n = 1, k = 1;  // k: the K chunk of x and w tiles
  bool double_buffer = false;
  int64_t nb = 1;  // the matrix path's w sub-tile: columns of the n the accumulator holds
};

// The tiles the schedule uses, counted as the capacity rule counts: multiples of the
// matrix unit's fp16 shape (on the vector unit: K chunks of whole vectors), K chunks of
// whole load bursts first, then output rows of whole store bursts, then alignments; among
// those that fit, the fewest DRAM bytes, N as wide as fits, at least one N tile per core;
// on the matrix path w comes in the widest sub-tiles of the N tile that fit (so that an
// output row can be a whole store burst where the weight buffer cannot hold it whole).
// Counted through sim::fits_buffers, as the capacity rule counts.
LinearTiles choose_linear_tiles(const sim::ArchSpec& arch, int64_t M, int64_t K, int64_t N, int64_t element_bytes,
                                int64_t out_element_bytes, bool on_matrix);

// x [M, K] (Halide (k, m)), w [N, K] ((k, n)) of `in` (fp16 or fp32); y [M, N] of `out`.
// Int params tile_m, tile_n, tile_k and, on the matrix path, tile_nb. Output "linear_npu"
// (tensor y).
NpuPipeline linear_npu_pipeline(const sim::ArchSpec& arch, Halide::Type in, Halide::Type out, bool on_matrix,
                                bool double_buffer);

// The stage-only registration: shape M, K, N; dtype float16 or float32 (x and w);
// parameters out (float32 | float16 | same: x's dtype) and unit (auto | matrix | vector).
const NpuSchedule& npu_stage_linear();

}  // namespace npukit::schedules::npu
