#pragma once

#include "Halide.h"
#include "ops/int8_gemm.h"
#include "schedules/cpu/int8_gemm_tiles.h"

namespace npukit::schedules::cpu {

enum class GemmShape { decode, prefill };

// Whether the accumulation runs over pairs of k (ops::define_int8_gemm_acc's `pairwise`):
// prefill on a CPU without a 4-byte u8 × s8 dot product (vpdpbusd), where Halide's 4-to-1
// reduction costs two pmaddwd, a horizontal add and a permute per step. (Halide 14 has
// vpdpbusd only with avx512_sapphirerapids: the avx512_vnni tier.)
bool sums_in_pairs(GemmShape shape, const Halide::Target& target);

// Whether the schedule prefetches `w_packed` in software, into L2: the Generator then links
// the prefetch bitcode for that level (ops/prefetch.h).
bool prefetches_weights(GemmShape shape);

// decode (M = 1): blocks of output channels in parallel, the packed weights streamed from
// DRAM once. prefill (M ≥ 2): tiles of rows × channels held in registers, rows inside
// the channel tile, so each weight block streams once and serves every row.
// `w_packed`: the weights' parameter, which the prefetch names.
void schedule_int8_gemm_acc(ops::Int8GemmAcc& g, GemmShape shape, const Halide::Target& target,
                            const Halide::ImageParam& w_packed);

}  // namespace npukit::schedules::cpu
