// GPU schedules of the fused qkv_attention op's projections (ops/qkv_attention.h), one
// source for CUDA and OpenCL; the same functions as schedules/cpu/qkv_attention.h. All
// arithmetic in fp32 (fp16 storage is widened on load and narrowed on store); the RoPE
// angles' fp64 table is computed on the host (tiny, and bit-identical to the CPU kernels').
#pragma once

#include "Halide.h"
#include "ops/qkv_attention.h"

namespace npukit::schedules::gpu {

// fp32 partial sums per row: one per thread of a warp, so that the 32 threads of a row
// read 32 consecutive weights (128 coalesced bytes) per step.
int linear_lanes(const Halide::Target& target);

// The linear layer inside `wrapper(n, t)` (a pure Func of lin.out): blocks of 8 rows × one
// token, 32 threads per row accumulating strided partial sums (part, in shared memory),
// then one thread per row adding them in lane order and the K % 32 tail. Fewer than 8 rows:
// one row per block.
void schedule_linear(ops::Linear& lin, Halide::Func wrapper, Halide::Expr n_rows, const Halide::Target& target);

// The QKV projection (schedule_linear on the whole w_qkv, rows stored in device memory),
// then the rotations and stores, one thread per element.
void schedule_qkv_rope(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new, Halide::Expr qkv_rows,
                       const Halide::Target& target);

// The int8 path's QKV step: the dequantized rows computed once, one thread per row and token,
// then the same rotations and stores.
void schedule_qkv_rope_of_rows(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new,
                               const Halide::Target& target);

// What both share: the (cos, sin) table on the host, the rotations and the three outputs.
void schedule_rope_outputs(ops::QkvRope& a, Halide::Func q, Halide::Func k_new, Halide::Func v_new,
                           const Halide::Target& target);

}  // namespace npukit::schedules::gpu
