// The matrix-unit closed forms against the published numbers they come from.
#include <gtest/gtest.h>

#include "simulator/cost/compute_cycles.h"

namespace npukit::sim {
namespace {

TEST(ComputeCycles, ScaleSimExamplesOnA4x4Array) {
  // SCALE-Sim v2: M = N = K = 4 on 4×4.
  EXPECT_EQ(systolic_gemm_cycles(Dataflow::os, 4, 4, 4, 4, 4), 9);
  EXPECT_EQ(systolic_gemm_cycles(Dataflow::ws, 4, 4, 4, 4, 4), 13);
  EXPECT_EQ(systolic_gemm_cycles(Dataflow::is, 4, 4, 4, 4, 4), 13);
}

TEST(ComputeCycles, ScaleSimExamplesOnA32x32Array) {
  // (M, N, K) = (128, 64, 256) on 32×32.
  EXPECT_EQ(systolic_gemm_cycles(Dataflow::ws, 32, 32, 128, 64, 256), 3551);
  EXPECT_EQ(systolic_gemm_cycles(Dataflow::os, 32, 32, 128, 64, 256), 2543);
  EXPECT_EQ(systolic_gemm_cycles(Dataflow::is, 32, 32, 128, 64, 256), 5055);
}

TEST(ComputeCycles, FoldsCountPartialTiles) {
  // One more k than the rows hold doubles the WS folds.
  EXPECT_EQ(systolic_gemm_cycles(Dataflow::ws, 4, 4, 4, 4, 5), 2 * (2 * 4 + 4 + 4 - 2) - 1);
}

TEST(ComputeCycles, TimeloopComputeBound) {
  // Timeloop's documented example: 49,152 MACs on 16 MAC units.
  EXPECT_EQ(compute_bound_cycles(49152, 16), 3072);
  EXPECT_EQ(compute_bound_cycles(49153, 16), 3073);
}

TEST(ComputeCycles, CubeTilesAndPadding) {
  const CubeShape int8{16, 32, 16};
  EXPECT_EQ(cube_gemm_cycles(int8, 16, 16, 32), 1);
  EXPECT_EQ(cube_gemm_cycles(int8, 1, 4096, 4096), 1 * 128 * 256);  // M = 1 pads 15 of 16 rows
  EXPECT_EQ(cube_gemm_cycles(int8, 17, 16, 33), 2 * 2 * 1);
}

TEST(ComputeCycles, BadSizesAreErrors) {
  EXPECT_THROW(systolic_gemm_cycles(Dataflow::ws, 0, 4, 4, 4, 4), std::invalid_argument);
  EXPECT_THROW(cube_gemm_cycles(CubeShape{16, 0, 16}, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(compute_bound_cycles(10, 0), std::invalid_argument);
}

}  // namespace
}  // namespace npukit::sim
