// int8 weights [N, K] (one row per output channel) packed for u8 x s8 dot products that
// reduce 4 consecutive k per 32-bit lane (x86 vpdpbusd, Arm sdot/usdot alike): blocks of
// kLanes channels, and within a block groups of 4 k, so that one 64-byte load holds
// w[n0 .. n0+15][k0 .. k0+3]. The kernel streams a block's K bytes contiguously.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace npukit::layouts {

struct PackedInt8Weights {
  static constexpr int64_t kLanes = 16;  // channels per block: one zmm of int32 accumulators
  static constexpr int64_t kGroup = 4;   // k per 32-bit lane
  // k_pad is a multiple of this: an AMX B tile is 16 groups (64 k), and the AMX kernel reads
  // whole tiles, so that its K loop has no tail (which would need tile shapes of its own,
  // beyond AMX's eight tile registers next to four accumulators: ops/amx_jam.h).
  static constexpr int64_t kKAlign = 64;
  // n_pad is a multiple of this: kernels tile channels by up to 64 and read whole tiles.
  static constexpr int64_t kChannelTile = 64;

  int64_t n = 0, k = 0;            // logical shape
  int64_t n_pad = 0, k_pad = 0;    // rounded up to kChannelTile and kKAlign, padding is zero
  // data[((nb * (k_pad / 4) + kg) * 16 + lane) * 4 + kk] = w[nb*16 + lane][kg*4 + kk]
  std::shared_ptr<int8_t> data;
  std::vector<int32_t> row_sums;   // Σ_k w[n][k] for n < n_pad (0 for padding)

  int8_t* bytes() const { return data.get(); }
  size_t size_bytes() const { return static_cast<size_t>(n_pad * k_pad); }
};

// Packs row-major w[n][k]. The buffer is 2 MiB-aligned and advised as huge pages: decode
// streams every weight once per token, and huge pages raise read bandwidth ~1.4x here.
PackedInt8Weights pack_int8_weights(const int8_t* w, int64_t n, int64_t k);

// The inverse: row-major [n, k] again.
std::vector<int8_t> unpack_int8_weights(const PackedInt8Weights& p);

}  // namespace npukit::layouts
