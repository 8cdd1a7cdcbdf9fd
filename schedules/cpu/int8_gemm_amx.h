#pragma once

#include <string>

#include "Halide.h"
#include "ops/int8_gemm_amx.h"
#include "schedules/cpu/int8_gemm_tiles.h"

namespace npukit::schedules::cpu {

// The AMX tier: tiles of 16 rows × 16 channels of int32 in one AMX register, K in steps
// of 64 bytes (ops/amx_fuse_k.h fuses Halide 14's 4-byte steps), in blocks of
// kAmxTaskChannels channels. `direct` (g's acc is dot, ops/int8_gemm_amx.h): each tile is
// stored straight into acc, whose channels must be whole blocks and rows at least one
// tile; otherwise the tiles go to a buffer from which acc subtracts the zero point's share.
// Needs `pipeline` to run the AMX lowering passes and a target with
// avx512_sapphirerapids.
// `weights`: the name of the packed weight buffer (its next blocks are prefetched);
// `threads`: the threads the call's tasks run on (the kernel's input): each takes one slab
// of contiguous channel blocks.
void schedule_int8_gemm_acc_amx(ops::Int8GemmAccAmx& g, Halide::Pipeline pipeline, const std::string& weights,
                                const Halide::Expr& threads, bool direct);

}  // namespace npukit::schedules::cpu
