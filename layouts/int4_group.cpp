#include "layouts/int4_group.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "layouts/half.h"

namespace npukit::layouts {
namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The raw nibble of k in row n of w [n, k_bytes]: k = 2j low, 2j + 1 high.
unsigned nibble_of(const uint8_t* w, int64_t k_bytes, int64_t n, int64_t k) {
  const unsigned byte = w[n * k_bytes + k / 2];
  return k % 2 == 0 ? byte & 15u : byte >> 4;
}

size_t packed_offset(const Int4Layout& l, int64_t n, int64_t k) {
  const int64_t L = Int4Layout::kLanes, kb = k / 8, j = k % 4;
  return static_cast<size_t>((((n / L) * (l.k_pad / 8) + kb) * L + n % L) * 4 + j);
}

template <class T, class Get>
void pack_groups(const Int4Layout& l, int64_t groups, T pad, T* packed, Get get) {
  const int64_t L = Int4Layout::kLanes;
  for (int64_t n = 0; n < l.n_pad; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      packed[((n / L) * groups + g) * L + n % L] = n < l.n ? get(n * groups + g) : pad;
    }
  }
}

}  // namespace

Int4Layout Int4Layout::of(int64_t n, int64_t k_bytes) {
  Int4Layout l;
  l.n = n;
  l.k_bytes = k_bytes;
  l.n_pad = round_up(n, kChannelTile);
  l.k_pad = round_up(2 * k_bytes, kKAlign);
  return l;
}

void pack_int4_weights(const uint8_t* w, const Int4Layout& l, uint8_t* packed) {
  std::memset(packed, 0, l.weight_bytes());
  for (int64_t n = 0; n < l.n; ++n) {
    for (int64_t k = 0; k < 2 * l.k_bytes; ++k) {
      const unsigned shift = (k % 8) < 4 ? 0 : 4;
      packed[packed_offset(l, n, k)] |= static_cast<uint8_t>(nibble_of(w, l.k_bytes, n, k) << shift);
    }
  }
}

PackedInt4Weights pack_int4_weights(const uint8_t* w, int64_t n, int64_t k_bytes) {
  PackedInt4Weights p;
  p.layout = Int4Layout::of(n, k_bytes);
  const size_t align = size_t(2) << 20;
  const size_t size = std::max(align, (p.layout.weight_bytes() + align - 1) / align * align);
  void* mem = std::aligned_alloc(align, size);
  if (mem == nullptr) throw std::bad_alloc();
  madvise(mem, size, MADV_HUGEPAGE);
  p.data = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(mem), [](uint8_t* q) { std::free(q); });
  pack_int4_weights(w, p.layout, p.data.get());
  return p;
}

std::vector<uint8_t> unpack_int4_weights(const uint8_t* packed, const Int4Layout& l) {
  std::vector<uint8_t> w(static_cast<size_t>(l.n * l.k_bytes), 0);
  for (int64_t n = 0; n < l.n; ++n) {
    for (int64_t k = 0; k < 2 * l.k_bytes; ++k) {
      const unsigned byte = packed[packed_offset(l, n, k)];
      const unsigned q = (k % 8) < 4 ? byte & 15u : byte >> 4;
      w[static_cast<size_t>(n * l.k_bytes + k / 2)] |= static_cast<uint8_t>(q << (k % 2 == 0 ? 0 : 4));
    }
  }
  return w;
}

void pack_int4_scales(const void* v, bool fp16, const Int4Layout& l, int64_t groups, float* packed) {
  if (fp16) {
    const auto* h = static_cast<const uint16_t*>(v);
    pack_groups(l, groups, 0.0f, packed, [&](int64_t i) { return half_to_float(h[i]); });
  } else {
    const auto* f = static_cast<const float*>(v);
    pack_groups(l, groups, 0.0f, packed, [&](int64_t i) { return f[i]; });
  }
}

void pack_int4_zero_points(const uint8_t* v, const Int4Layout& l, int64_t groups, uint8_t* packed) {
  pack_groups(l, groups, uint8_t{0}, packed, [&](int64_t i) { return v[i]; });
}

}  // namespace npukit::layouts
