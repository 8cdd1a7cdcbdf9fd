#include "runtime/halide_memory.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <pthread.h>

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
  // kSmallest << shift < bytes <= kSmallest << (shift + 1); kSmallest is 2^8.
  const int shift = 63 - __builtin_clzll((bytes - 1) >> 8);
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

// Each thread keeps a few idle blocks of the smaller classes for itself: a decode step's
// kernels take and return the same small blocks on every call (attention's tasks took
// twelve each before their per-head buffers moved to the stack; two now), and the
// per-class mutex and the shared counter cost 12% of a short-cache attention call then
// (S = 16, Zen 4). A block may be freed on another thread than the one
// that took it; it then joins that thread's cache. Its bytes count in idle_bytes through
// a per-thread counter that only its thread writes.
constexpr int kCachedClasses = 4 * 8;  // through 256 << 8 = 64 KiB
// A call may hold many blocks of one class at once (an attention task held eight of the
// smallest, its stats and sums, before they moved to the stack); with 4 kept per class
// the rest went through the shared pool's mutex on every call (S = 16, Zen 4: 7.1 -> 6.8
// us hot then).
constexpr int kCachedPerClass = 16;

struct ThreadCache;

// The live thread caches, for halide_memory_stats. Never destroyed, as the pool.
struct CacheRegistry {
  std::mutex mutex;
  std::vector<ThreadCache*> caches;
};
CacheRegistry& registry() {
  static CacheRegistry* r = new CacheRegistry;
  return *r;
}

void pool_push(Header* h) {
  Pool& p = pool();
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
  std::free(h);
}

// Zero-initialized, with no constructor or destructor, so that reaching it is one
// thread-pointer-relative access: a cache joins the registry on its first kept block, with
// a pthread key whose destructor hands its blocks to the shared pool when the thread ends.
struct ThreadCache {
  Header* idle[kCachedClasses];
  int count[kCachedClasses];
  std::atomic<size_t> bytes;  // written by its thread only; read by halide_memory_stats
  bool registered;
  bool gone;  // the thread is ending: blocks go to the shared pool

  Header* take(int cls) {
    Header* h = idle[cls];
    if (h) {
      idle[cls] = h->next;
      --count[cls];
      bytes.store(bytes.load(std::memory_order_relaxed) - size_of(cls), std::memory_order_relaxed);
    }
    return h;
  }
  bool keep(Header* h);
};
thread_local ThreadCache t_cache __attribute__((tls_model("initial-exec")));

pthread_key_t cache_key;
std::atomic<bool> cache_key_made{false};

void release_cache(void* p) {
  auto* c = static_cast<ThreadCache*>(p);
  c->gone = true;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    auto& v = registry().caches;
    v.erase(std::find(v.begin(), v.end(), c));
  }
  for (Header*& first : c->idle) {
    for (Header* h = first; h;) {
      Header* next = h->next;
      pool_push(h);
      h = next;
    }
    first = nullptr;
  }
  c->bytes.store(0, std::memory_order_relaxed);
}

bool ThreadCache::keep(Header* h) {
  const int cls = h->cls;
  const size_t size = size_of(cls), held = bytes.load(std::memory_order_relaxed);
  if (gone || count[cls] >= kCachedPerClass || held + size > kHalideThreadCacheBytes) return false;
  if (!registered) {
    static const int key_made = [] {
      const int status = pthread_key_create(&cache_key, release_cache);
      cache_key_made.store(status == 0);
      return status;
    }();
    if (key_made != 0) return false;
    pthread_setspecific(cache_key, this);
    std::lock_guard<std::mutex> lock(registry().mutex);
    registry().caches.push_back(this);
    registered = true;
  }
  h->next = idle[cls];
  idle[cls] = h;
  ++count[cls];
  bytes.store(held + size, std::memory_order_relaxed);
  return true;
}

// When the library is unloaded (a framework's dlclose) while threads still hold caches,
// their ends must not call release_cache, whose code is gone: the key goes first (the
// blocks those threads keep are then lost, as the library's other memory).
__attribute__((destructor)) void forget_cache_key() {
  if (cache_key_made.load()) pthread_key_delete(cache_key);
}

}  // namespace

void* halide_block_malloc(void*, size_t bytes) {
  // Halide asks for 0 bytes for the buffer of a stage the call skips (an Allocate whose
  // condition is false) and accepts null for it: no block to take and give back.
  if (bytes == 0) return nullptr;
  if (bytes > kHalideBlockLargest) return system_block(bytes, kDirect);
  const int cls = class_of(bytes);
  if (cls < kCachedClasses) {
    if (Header* h = t_cache.take(cls)) return reinterpret_cast<char*>(h) + kHeader;
  }
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
  if (h->cls == kDirect) {
    std::free(h);
    return;
  }
  if (h->cls < kCachedClasses && t_cache.keep(h)) return;
  pool_push(h);
}

HalideMemoryStats halide_memory_stats() {
  size_t cached = 0;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    for (const ThreadCache* c : registry().caches) cached += c->bytes.load(std::memory_order_relaxed);
  }
  return {pool().idle_bytes.load() + cached, pool().system_allocations.load()};
}

}  // namespace npukit
