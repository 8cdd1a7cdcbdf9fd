// GPU schedules of the INT8 GEMM (ops/int8_gemm.h), one source for CUDA and OpenCL.
#pragma once

#include "Halide.h"
#include "ops/int8_gemm.h"
#include "schedules/cpu/int8_gemm.h"

namespace npukit::schedules::gpu {

using cpu::GemmShape;

// Whether the 4-way u8 × s8 dot products lower to one instruction each: PTX dp4a from
// CUDA capability 6.1 on. Elsewhere the 4 products are unrolled (OpenCL C has no
// mixed-sign dot product in 1.2, and PoCL rejects none of the scalar form).
bool use_dp4a(const Halide::Target& target);

// decode (M = 1): one block per 16 output channels (one packed channel block), its
// threads split K into kSlices interleaved slices of groups of 4, so that a block's
// threads read kSlices · 64 contiguous weight bytes per step; the slices' int32 partial
// sums meet in shared memory. prefill (M ≥ 2): 64 channels × 32 rows per block, 4 × 4
// int32 accumulators per thread (in shared memory, see the .cpp), the a and w tiles of
// each K chunk staged in shared memory once for the block's 128 threads.
// The generator gives g.a and g.w_packed boundary conditions (the staged boxes cover whole
// tiles and K chunks past the edges).
void schedule_int8_gemm_acc(ops::Int8GemmAcc& g, GemmShape shape, const Halide::Target& target);

// The int32 → float / int8 epilogue `out(n, m)`: one thread per element, 64 channels ×
// 4 rows per block (elementwise; coalesced along n).
void schedule_int8_epilogue(Halide::Func out, const Halide::Target& target);

}  // namespace npukit::schedules::gpu
