// runtime/halide_threads.h: the count of the kit's Halide pool, kept beside Halide's own (which
// has no getter), must be what Halide runs on.
#include "runtime/halide_threads.h"

#include <gtest/gtest.h>

#include "runtime/plugin.h"

namespace npukit {
namespace {

TEST(HalideThreads, FollowsSetHalideThreadsAndHalidesOwnCount) {
  set_halide_threads(3);
  EXPECT_EQ(halide_thread_count(), 3);
  // Halide clamps to its 256 threads, and so does the record.
  set_halide_threads(1000);
  EXPECT_EQ(halide_thread_count(), 256);
  EXPECT_EQ(set_halide_threads(2), 256);  // Halide's previous count
  // 0: Halide's default again (HL_NUM_THREADS, else the CPUs online), which the kit
  // computes as Halide does: the count Halide hands back on the next set agrees.
  set_halide_threads(0);
  const int ours = halide_thread_count();
  EXPECT_GE(ours, 1);
  EXPECT_EQ(set_halide_threads(1), ours);
  EXPECT_EQ(halide_thread_count(), 1);
  set_halide_threads(0);
}

}  // namespace
}  // namespace npukit
