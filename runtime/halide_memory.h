// The memory ahead-of-time Halide kernels allocate while they run (halide_malloc: RoPE's
// angle tables, the fused attention's per-task rows and scores), served from blocks kept
// for reuse: a decode step makes the same allocations on every call, and taking them from
// the system allocator each time is time on the hot path of a warm prepared run.
#pragma once

#include <cstddef>

namespace npukit {

// Sizes are rounded up to a quarter of their power of two (at most 25% slack, 256 bytes
// at least). Blocks above kHalideBlockLargest come from the system and go back to it on
// every call; of the others, at most kHalideIdleLimit bytes are kept idle in a shared
// pool, and a block freed beyond that goes back to the system. Besides, each thread keeps
// up to kHalideThreadCacheBytes of small blocks (up to 64 KiB, a few per size) for itself,
// without locks; they go to the shared pool when the thread ends.
constexpr size_t kHalideBlockLargest = size_t(64) << 20;
constexpr size_t kHalideIdleLimit = size_t(64) << 20;
constexpr size_t kHalideThreadCacheBytes = size_t(1) << 20;

// The kernels' halide_malloc and halide_free (installed by install_halide_handlers).
// Thread-safe: Halide allocates from its worker threads. Blocks are 128-byte aligned, as
// Halide's own allocator gives them.
void* halide_block_malloc(void* user_context, size_t bytes);
void halide_block_free(void* user_context, void* block);

struct HalideMemoryStats {
  size_t idle_bytes = 0;          // kept for reuse now (the shared pool and every thread's)
  size_t system_allocations = 0;  // blocks taken from the system so far
};
HalideMemoryStats halide_memory_stats();

}  // namespace npukit
