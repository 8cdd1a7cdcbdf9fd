// Rows per register tile of the CPU prefill GEMM schedules, without Halide: the runtime
// pads `a` to whole tiles of them (runtime/int8_gemm.cpp), since every tile reads its
// rows unguarded.
#pragma once

namespace npukit::schedules::cpu {

// The avx512_vnni tier's tile (schedules/cpu/int8_gemm.cpp); the pairwise tiers' tiles
// (avx2: 2 rows, sse41: 1) divide it.
inline constexpr int kVnniTileRows = 8;

// One AMX accumulator tile (schedules/cpu/int8_gemm_amx.cpp).
inline constexpr int kAmxTileRows = 16;

}  // namespace npukit::schedules::cpu
