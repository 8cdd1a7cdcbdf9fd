// int4 weights with group-wise scales and zero points, as `npukit quantize --scheme
// int4-group:G` writes them (docs/quantization.md: q uint8 [N, ceil(K/2)], k = 2j in the low
// nibble of byte j; scales and zero points [N, groups]), packed for the int4_gemm kernels
// (ops/int4_gemm.h): blocks of kLanes channels, and within a block runs of 8 k per channel,
// so that one 64-byte load holds 8 k of 16 channels and a 32-bit lane one channel's 4 + 4
// k. Its low nibbles are k … k + 3 and its high nibbles k + 4 … k + 7: consecutive
// activations on both sides, so that a u8 × s8 product of a lane's nibbles takes the
// activations as one broadcast 4-byte word, with no shuffle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace npukit::layouts {

struct Int4Layout {
  static constexpr int64_t kLanes = 16;        // channels per block: 16 int32 lanes
  static constexpr int64_t kChannelTile = 32;  // n_pad's multiple: the kernels read two blocks a task
  static constexpr int64_t kKAlign = 128;      // k_pad's multiple: the largest group, so every group is whole

  int64_t n = 0, k_bytes = 0;  // the tensor: [n, k_bytes] bytes, 2 · k_bytes nibbles a row
  int64_t n_pad = 0, k_pad = 0;  // rounded up to kChannelTile and kKAlign (nibbles); padding is zero

  static Int4Layout of(int64_t n, int64_t k_bytes);
  size_t weight_bytes() const { return static_cast<size_t>(n_pad * k_pad / 2); }
  // Entries of packed per-group values (scales, zero points): n_pad · groups.
  size_t group_values(int64_t groups) const { return static_cast<size_t>(n_pad * groups); }
};

// packed[((nb · (k_pad / 8) + kb) · 16 + c) · 4 + j] = (q[16·nb + c, 8·kb + j]) | (q[…, 8·kb + 4 + j] << 4)
// for w's raw nibbles q, into weight_bytes() bytes at `packed`.
void pack_int4_weights(const uint8_t* w, const Int4Layout& l, uint8_t* packed);

// The weights packed once into a buffer of their own (what a prepared op keeps): 2 MiB aligned
// and advised as huge pages, as layouts/vnni_int8.h's, for the same reason (decode streams
// every weight once per token).
struct PackedInt4Weights {
  Int4Layout layout;
  std::shared_ptr<uint8_t> data;
};
PackedInt4Weights pack_int4_weights(const uint8_t* w, int64_t n, int64_t k_bytes);

// The inverse of pack_int4_weights: w [n, k_bytes] again.
std::vector<uint8_t> unpack_int4_weights(const uint8_t* packed, const Int4Layout& l);

// Per-group values v[n, groups] (scales, zero points) as the kernels read them:
// packed[(nb · groups + g) · 16 + c] = v[16·nb + c, g], `pad` for channels past n.
// Scales become fp32; `fp16` says that `v` holds binary16 bits (widened exactly).
void pack_int4_scales(const void* v, bool fp16, const Int4Layout& l, int64_t groups, float* packed);
void pack_int4_zero_points(const uint8_t* v, const Int4Layout& l, int64_t groups, uint8_t* packed);

// Per-group values packed once, with the shape they were packed for.
template <class T>
struct PackedInt4Groups {
  Int4Layout layout;
  int64_t groups = 0;
  std::vector<T> data;
};

}  // namespace npukit::layouts
