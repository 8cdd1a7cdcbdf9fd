// Counts the heap allocations Halide kernels make (halide_malloc), and can fail one of them:
// the hook fault_injection_test fails each allocation with and attention_test counts a
// call's allocations with.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "HalideRuntime.h"
#include "runtime/halide_call.h"

namespace npukit::testing_malloc {

// halide_malloc calls so far, and the one to fail (1-based; 0: none). Zero-byte requests
// are not counted and get no block: Halide asks for 0 bytes where a stage the call skips
// would have had its buffer (the one-split decode's combine), and null there is no failure.
inline std::atomic<int> allocations{0};
inline std::atomic<int> fail_at{0};

inline void* counting_malloc(void*, size_t bytes) {
  if (bytes == 0) return nullptr;
  const int n = ++allocations;
  if (n == fail_at.load()) return nullptr;
  // Halide's own default aligns to 128 bytes and keeps the base just before the block.
  void* base = std::malloc(bytes + 128 + sizeof(void*));
  if (base == nullptr) return nullptr;
  auto aligned = (reinterpret_cast<uintptr_t>(base) + sizeof(void*) + 127) & ~uintptr_t(127);
  reinterpret_cast<void**>(aligned)[-1] = base;
  return reinterpret_cast<void*>(aligned);
}

inline void counting_free(void*, void* p) {
  if (p != nullptr) std::free(reinterpret_cast<void**>(p)[-1]);
}

// Installs the counting hook for its lifetime. npukit's own allocator is installed first,
// so that the first kernel call does not replace this hook, and the destructor puts it back.
class HookedMalloc {
 public:
  HookedMalloc()
      : malloc_((install_halide_handlers(), halide_set_custom_malloc(counting_malloc))),
        free_(halide_set_custom_free(counting_free)) {}
  ~HookedMalloc() {
    halide_set_custom_malloc(malloc_);
    halide_set_custom_free(free_);
  }
  HookedMalloc(const HookedMalloc&) = delete;
  HookedMalloc& operator=(const HookedMalloc&) = delete;

 private:
  halide_malloc_t malloc_;
  halide_free_t free_;
};

}  // namespace npukit::testing_malloc
