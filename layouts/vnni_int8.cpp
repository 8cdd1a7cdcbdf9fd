#include "layouts/vnni_int8.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace npukit::layouts {
namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

std::shared_ptr<int8_t> huge_page_buffer(size_t bytes) {
  const size_t align = size_t(2) << 20;
  const size_t size = std::max<size_t>(align, (bytes + align - 1) / align * align);
  void* p = std::aligned_alloc(align, size);
  if (p == nullptr) throw std::bad_alloc();
  madvise(p, size, MADV_HUGEPAGE);
  return std::shared_ptr<int8_t>(static_cast<int8_t*>(p), [](int8_t* q) { std::free(q); });
}

size_t offset(int64_t k_pad, int64_t nn, int64_t kk) {
  const int64_t L = PackedInt8Weights::kLanes, G = PackedInt8Weights::kGroup;
  return static_cast<size_t>((((nn / L) * (k_pad / G) + kk / G) * L + nn % L) * G + kk % G);
}

}  // namespace

PackedInt8Weights pack_int8_weights(const int8_t* w, int64_t n, int64_t k) {
  PackedInt8Weights p;
  p.n = n;
  p.k = k;
  p.n_pad = round_up(n, PackedInt8Weights::kChannelTile);
  p.k_pad = round_up(k, PackedInt8Weights::kKAlign);
  p.data = huge_page_buffer(p.size_bytes());
  std::memset(p.data.get(), 0, p.size_bytes());
  p.row_sums.assign(static_cast<size_t>(p.n_pad), 0);
  for (int64_t nn = 0; nn < n; ++nn) {
    int32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int8_t v = w[nn * k + kk];
      p.data.get()[offset(p.k_pad, nn, kk)] = v;
      sum += v;
    }
    p.row_sums[static_cast<size_t>(nn)] = sum;
  }
  return p;
}

std::vector<int8_t> unpack_int8_weights(const PackedInt8Weights& p) {
  std::vector<int8_t> w(static_cast<size_t>(p.n * p.k));
  for (int64_t nn = 0; nn < p.n; ++nn) {
    for (int64_t kk = 0; kk < p.k; ++kk) w[static_cast<size_t>(nn * p.k + kk)] = p.data.get()[offset(p.k_pad, nn, kk)];
  }
  return w;
}

}  // namespace npukit::layouts
