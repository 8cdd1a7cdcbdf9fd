#include "bench/copy_anchor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace npukit::bench {
namespace {

using Vec = float __attribute__((vector_size(64), aligned(4)));

// GCC would turn a plain copy loop into a memcpy call; STREAM's copy is a loop of plain
// loads and stores, so keep it one.
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void stream_copy(const void* src, void* dst,
                                                                                 size_t bytes) {
  const Vec* s = static_cast<const Vec*>(src);
  Vec* d = static_cast<Vec*>(dst);
  const size_t n = bytes / sizeof(Vec);
  for (size_t i = 0; i < n; ++i) d[i] = s[i];
  std::memmove(reinterpret_cast<char*>(dst) + n * sizeof(Vec), reinterpret_cast<const char*>(src) + n * sizeof(Vec),
               bytes - n * sizeof(Vec));
}

template <class Copy>
double median_gbps(ColdArena& src, ColdArena& dst, size_t bytes, int threads, int reps, Copy copy) {
  std::vector<double> gbps;
  size_t slot = 0;
  for (int r = 0; r < reps; ++r, ++slot) {
    const auto* s = static_cast<const char*>(src.slot(slot));
    auto* d = static_cast<char*>(dst.slot(slot));
    const auto t0 = std::chrono::steady_clock::now();
    if (threads == 1 || bytes < (size_t(1) << 20)) {  // thread start-up would dominate
      copy(s, d, bytes);
    } else {
      std::vector<std::thread> pool;
      const size_t share = (bytes / threads + 63) / 64 * 64;
      for (int t = 0; t < threads; ++t) {
        const size_t lo = std::min(bytes, t * share), hi = std::min(bytes, lo + share);
        pool.emplace_back([=] { copy(s + lo, d + lo, hi - lo); });
      }
      for (auto& th : pool) th.join();
    }
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gbps.push_back(2.0 * bytes / sec / 1e9);
  }
  std::nth_element(gbps.begin(), gbps.begin() + gbps.size() / 2, gbps.end());
  return gbps[gbps.size() / 2];
}

}  // namespace

CopyAnchor measure_copy(ColdArena& src, ColdArena& dst, size_t bytes, int threads, int reps) {
  CopyAnchor a;
  a.stream_gbps = median_gbps(src, dst, bytes, threads, reps, stream_copy);
  a.memcpy_gbps = median_gbps(src, dst, bytes, threads, reps,
                              [](const void* s, void* d, size_t n) { std::memcpy(d, s, n); });
  return a;
}

}  // namespace npukit::bench
