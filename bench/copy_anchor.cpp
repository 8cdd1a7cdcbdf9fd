#include "bench/copy_anchor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "HalideRuntime.h"
#include "runtime/halide_threads.h"

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

// Reads src and then dst (the "copy" reads both, writes nothing). Four independent
// accumulators, so that the adds never wait on each other; the sum is kept, so that the
// loads are not dropped.
volatile float read_sink;
void stream_read(const char* src, char* dst, size_t bytes) {
  for (const char* p : {src, static_cast<const char*>(dst)}) {
    const Vec* s = reinterpret_cast<const Vec*>(p);
    const size_t n = bytes / sizeof(Vec);
    Vec a{}, b{}, c{}, d{};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) a += s[i], b += s[i + 1], c += s[i + 2], d += s[i + 3];
    for (; i < n; ++i) a += s[i];
    const Vec sum = (a + b) + (c + d);
    read_sink = sum[0];
  }
}

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

// Seconds of one run of `copy` over `bytes` of src and dst, split into one task per thread.
double seconds_of(const void* src, void* dst, size_t bytes, void (*copy)(const char*, char*, size_t)) {
  const int tasks = halide_thread_count();
  Job job{static_cast<const char*>(src), static_cast<char*>(dst), bytes, (bytes / tasks + 63) / 64 * 64, copy};
  const auto t0 = std::chrono::steady_clock::now();
  halide_do_par_for(nullptr, copy_task, 0, tasks, reinterpret_cast<uint8_t*>(&job));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Bytes moved per second, 2 · bytes per call: read and written by a copy, or read from
// both arenas.
double median_gbps(ColdArena& src, ColdArena& dst, size_t bytes, int reps, void (*copy)(const char*, char*, size_t)) {
  std::vector<double> gbps;
  for (int r = 0; r < reps; ++r) gbps.push_back(2.0 * bytes / seconds_of(src.slot(r), dst.slot(r), bytes, copy) / 1e9);
  std::nth_element(gbps.begin(), gbps.begin() + gbps.size() / 2, gbps.end());
  return gbps[gbps.size() / 2];
}

}  // namespace

double read_seconds(const void* a, const void* b, size_t bytes) {
  return seconds_of(a, const_cast<void*>(b), bytes, stream_read);
}

double copy_seconds(const void* src, void* dst, size_t bytes) { return seconds_of(src, dst, bytes, stream_copy); }

CopyAnchor measure_copy(ColdArena& src, ColdArena& dst, size_t bytes, int reps) {
  return {median_gbps(src, dst, bytes, reps, stream_copy), median_gbps(src, dst, bytes, reps, memcpy_copy),
          median_gbps(src, dst, bytes, reps, stream_read)};
}

}  // namespace npukit::bench
