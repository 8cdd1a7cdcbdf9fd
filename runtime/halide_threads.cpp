#include "runtime/halide_threads.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace npukit {
namespace {

constexpr int kHalideMaxThreads = 256;  // Halide 14's MAX_THREADS (runtime/thread_pool_common.h)

int clamped(int n) { return std::clamp(n, 1, kHalideMaxThreads); }

// Halide 14's default_desired_num_threads: HL_NUM_THREADS, its legacy name, else the CPUs
// online; read once, as Halide reads it once when its pool starts.
int halide_default_threads() {
  static const int n = [] {
    const char* env = std::getenv("HL_NUM_THREADS");
    if (env == nullptr) env = std::getenv("HL_NUMTHREADS");
    return clamped(env ? std::atoi(env) : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  }();
  return n;
}

std::atomic<int> noted{0};  // 0: none set, Halide's default

}  // namespace

int halide_thread_count() {
  const int n = noted.load(std::memory_order_relaxed);
  return n > 0 ? n : halide_default_threads();
}

void note_halide_threads(int n) { noted.store(n > 0 ? clamped(n) : 0, std::memory_order_relaxed); }

}  // namespace npukit
