#include "runtime/halide_memory.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace npukit {
namespace {

constexpr size_t kAlign = 128;       // Halide's own default alignment
constexpr size_t kHeader = kAlign;   // before each block: its class, its next idle block
constexpr size_t kSmallest = 256;
constexpr int kDirect = -1;          // the class of a block above kHalideBlockLargest

struct Header {
  Header* next;  // in its class's idle list
  int cls;
};
static_assert(sizeof(Header) <= kHeader);

// Class c holds sizes up to size_of(c): 256, 320, 384, 448, 512, 640, ... (four steps per
// power of two).
size_t size_of(int c) {
  const size_t base = kSmallest << (c / 4);
  return base + base / 4 * static_cast<size_t>(c % 4);
}

int class_of(size_t bytes) {
  if (bytes <= kSmallest) return 0;
  int shift = 0;
  while ((kSmallest << (shift + 1)) < bytes) ++shift;  // kSmallest << shift < bytes <= kSmallest << (shift + 1)
  const size_t base = kSmallest << shift;
  const size_t quarters = (bytes - base + base / 4 - 1) / (base / 4);  // 1..4
  return shift * 4 + static_cast<int>(quarters);  // 4 quarters: the next power's first class
}

constexpr int kClasses = 4 * 18 + 1;  // through 256 << 18 = 64 MiB

struct Pool {
  struct Class {
    std::mutex mutex;
    Header* idle = nullptr;
  };
  std::array<Class, kClasses> classes;
  std::atomic<size_t> idle_bytes{0};
  std::atomic<size_t> system_allocations{0};
};

Pool& pool() {
  // Never destroyed: kernels on other threads may free into it during exit.
  static Pool* p = new Pool;
  return *p;
}

void* system_block(size_t bytes, int cls) {
  auto* h = static_cast<Header*>(std::aligned_alloc(kAlign, kHeader + (bytes + kAlign - 1) / kAlign * kAlign));
  if (h == nullptr) return nullptr;
  pool().system_allocations.fetch_add(1, std::memory_order_relaxed);
  h->next = nullptr;
  h->cls = cls;
  return reinterpret_cast<char*>(h) + kHeader;
}

}  // namespace

void* halide_block_malloc(void*, size_t bytes) {
  if (bytes > kHalideBlockLargest) return system_block(bytes, kDirect);
  const int cls = class_of(bytes);
  Pool& p = pool();
  {
    Pool::Class& c = p.classes[static_cast<size_t>(cls)];
    std::lock_guard<std::mutex> lock(c.mutex);
    if (Header* h = c.idle) {
      c.idle = h->next;
      p.idle_bytes.fetch_sub(size_of(cls), std::memory_order_relaxed);
      return reinterpret_cast<char*>(h) + kHeader;
    }
  }
  return system_block(size_of(cls), cls);
}

void halide_block_free(void*, void* block) {
  if (block == nullptr) return;
  auto* h = reinterpret_cast<Header*>(static_cast<char*>(block) - kHeader);
  Pool& p = pool();
  if (h->cls != kDirect) {
    const size_t size = size_of(h->cls);
    // A racy limit (two frees may both pass it), off by at most a block per thread.
    if (p.idle_bytes.load(std::memory_order_relaxed) + size <= kHalideIdleLimit) {
      Pool::Class& c = p.classes[static_cast<size_t>(h->cls)];
      std::lock_guard<std::mutex> lock(c.mutex);
      h->next = c.idle;
      c.idle = h;
      p.idle_bytes.fetch_add(size, std::memory_order_relaxed);
      return;
    }
  }
  std::free(h);
}

HalideMemoryStats halide_memory_stats() {
  return {pool().idle_bytes.load(), pool().system_allocations.load()};
}

}  // namespace npukit
