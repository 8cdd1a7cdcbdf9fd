// Rows per register tile of the CPU prefill GEMM schedules, without Halide: the runtime
// pads `a` to whole tiles of them (runtime/int8_gemm.cpp), since every tile reads its
// rows unguarded. Also the AMX channel block, which the runtime's choice of kernel needs.
#pragma once

namespace npukit::schedules::cpu {

// The avx512_vnni tier's tile (schedules/cpu/int8_gemm.cpp); the pairwise tiers' tiles
// (avx2: 2 rows, sse41: 1) divide it.
inline constexpr int kVnniTileRows = 8;

// One AMX accumulator tile (schedules/cpu/int8_gemm_amx.cpp).
inline constexpr int kAmxTileRows = 16;

// Channels per AMX channel block: two 16-channel tiles, whose weights stay in L2 for every
// row tile. The direct AMX kernel needs N a multiple of it (runtime/int8_gemm.cpp).
inline constexpr int kAmxTaskChannels = 32;

}  // namespace npukit::schedules::cpu
