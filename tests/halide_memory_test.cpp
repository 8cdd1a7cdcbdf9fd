// The kernels' block pool (runtime/halide_memory.h): aligned, reused by size class, bounded,
// per-thread caches handed back when their thread ends, and safe from many threads at once.
#include "runtime/halide_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace npukit {
namespace {

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 128 == 0; }

TEST(HalideMemory, BlocksAreAlignedAndWritable) {
  for (size_t bytes : {size_t(1), size_t(255), size_t(256), size_t(257), size_t(4097), size_t(1) << 20}) {
    void* p = halide_block_malloc(nullptr, bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_TRUE(aligned(p)) << bytes;
    std::memset(p, 0x5a, bytes);
    halide_block_free(nullptr, p);
  }
  halide_block_free(nullptr, nullptr);  // as free(NULL)
}

TEST(HalideMemory, AFreedBlockServesTheNextRequestOfItsClass) {
  void* p = halide_block_malloc(nullptr, 5000);
  halide_block_free(nullptr, p);
  const HalideMemoryStats before = halide_memory_stats();
  // 5000 and 5100 round up to the same class (5120): the same block comes back, and the
  // system is not asked for another.
  void* q = halide_block_malloc(nullptr, 5100);
  EXPECT_EQ(q, p);
  EXPECT_EQ(halide_memory_stats().system_allocations, before.system_allocations);
  EXPECT_EQ(halide_memory_stats().idle_bytes, before.idle_bytes - 5120);
  // 5121 is in the next class (6144): a new block.
  void* r = halide_block_malloc(nullptr, 5121);
  EXPECT_NE(r, p);
  halide_block_free(nullptr, q);
  halide_block_free(nullptr, r);
}

TEST(HalideMemory, BlocksAboveTheLargestClassAreNotKept) {
  const HalideMemoryStats before = halide_memory_stats();
  void* p = halide_block_malloc(nullptr, kHalideBlockLargest + 1);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p));
  halide_block_free(nullptr, p);
  EXPECT_EQ(halide_memory_stats().idle_bytes, before.idle_bytes);
  EXPECT_EQ(halide_memory_stats().system_allocations, before.system_allocations + 1);
}

TEST(HalideMemory, IdleBytesStayWithinTheLimit) {
  // Twice the limit in 1 MiB blocks, all live at once, then all freed.
  std::vector<void*> blocks;
  for (size_t i = 0; i < 2 * kHalideIdleLimit / (size_t(1) << 20); ++i) {
    blocks.push_back(halide_block_malloc(nullptr, size_t(1) << 20));
    ASSERT_NE(blocks.back(), nullptr);
  }
  for (void* p : blocks) halide_block_free(nullptr, p);
  // 1 MiB blocks are above the threads' own caches: only this thread's small blocks from
  // the tests before can be idle beside the shared pool.
  EXPECT_LE(halide_memory_stats().idle_bytes, kHalideIdleLimit + kHalideThreadCacheBytes);
  EXPECT_GE(halide_memory_stats().idle_bytes, kHalideIdleLimit - (size_t(1) << 20));
}

TEST(HalideMemory, AThreadsOwnBlocksGoToTheSharedPoolWhenItEnds) {
  void* p = nullptr;
  std::thread([&p] {
    p = halide_block_malloc(nullptr, 9000);
    halide_block_free(nullptr, p);  // kept in this thread's own cache
  }).join();
  const HalideMemoryStats before = halide_memory_stats();
  void* q = halide_block_malloc(nullptr, 9000);  // from the shared pool: that block, no new one
  EXPECT_EQ(q, p);
  EXPECT_EQ(halide_memory_stats().system_allocations, before.system_allocations);
  halide_block_free(nullptr, q);
}

TEST(HalideMemory, ManyThreadsAtOnceKeepTheirBlocksApart) {
  // Each thread fills its blocks with its own byte and checks them before freeing: a block
  // handed to two threads at once shows up as a foreign byte.
  std::vector<std::thread> threads;
  std::vector<int> bad(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &bad] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int i = 0; i < 4000; ++i) {
        if (live.size() < 16 && (live.empty() || rng() % 2)) {
          const size_t bytes = 1 + rng() % 20000;
          auto* p = static_cast<unsigned char*>(halide_block_malloc(nullptr, bytes));
          std::memset(p, t, bytes);
          live.emplace_back(p, bytes);
        } else {
          auto [p, bytes] = live.back();
          live.pop_back();
          for (size_t b = 0; b < bytes; ++b) bad[static_cast<size_t>(t)] += p[b] != t;
          halide_block_free(nullptr, p);
        }
      }
      for (auto [p, bytes] : live) halide_block_free(nullptr, p);
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(bad[static_cast<size_t>(t)], 0) << "thread " << t;
}

}  // namespace
}  // namespace npukit
