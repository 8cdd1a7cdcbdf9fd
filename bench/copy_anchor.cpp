#include "bench/copy_anchor.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "HalideRuntime.h"

namespace npukit::bench {
namespace {

using Vec = float __attribute__((vector_size(64), aligned(4)));

// GCC would turn a plain copy loop into a memcpy call; STREAM's copy is a loop of plain
// loads and stores, so keep it one.
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void stream_copy(const char* src, char* dst,
                                                                                 size_t bytes) {
  const Vec* s = reinterpret_cast<const Vec*>(src);
  Vec* d = reinterpret_cast<Vec*>(dst);
  const size_t n = bytes / sizeof(Vec);
  for (size_t i = 0; i < n; ++i) d[i] = s[i];
  std::memmove(dst + n * sizeof(Vec), src + n * sizeof(Vec), bytes - n * sizeof(Vec));
}

void memcpy_copy(const char* src, char* dst, size_t bytes) { std::memcpy(dst, src, bytes); }

struct Job {
  const char* src;
  char* dst;
  size_t bytes, share;
  void (*copy)(const char*, char*, size_t);
};

int copy_task(void*, int task, uint8_t* closure) {
  const Job& j = *reinterpret_cast<const Job*>(closure);
  const size_t lo = std::min(j.bytes, task * j.share), hi = std::min(j.bytes, lo + j.share);
  j.copy(j.src + lo, j.dst + lo, hi - lo);
  return 0;
}

double median_gbps(ColdArena& src, ColdArena& dst, size_t bytes, int reps, void (*copy)(const char*, char*, size_t)) {
  const int tasks = halide_threads();
  std::vector<double> gbps;
  for (int r = 0; r < reps; ++r) {
    Job job{static_cast<const char*>(src.slot(r)), static_cast<char*>(dst.slot(r)), bytes,
            (bytes / tasks + 63) / 64 * 64, copy};
    const auto t0 = std::chrono::steady_clock::now();
    halide_do_par_for(nullptr, copy_task, 0, tasks, reinterpret_cast<uint8_t*>(&job));
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gbps.push_back(2.0 * bytes / sec / 1e9);
  }
  std::nth_element(gbps.begin(), gbps.begin() + gbps.size() / 2, gbps.end());
  return gbps[gbps.size() / 2];
}

}  // namespace

int halide_threads() {
  const char* env = std::getenv("HL_NUM_THREADS");
  const int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}

CopyAnchor measure_copy(ColdArena& src, ColdArena& dst, size_t bytes, int reps) {
  return {median_gbps(src, dst, bytes, reps, stream_copy), median_gbps(src, dst, bytes, reps, memcpy_copy)};
}

}  // namespace npukit::bench
