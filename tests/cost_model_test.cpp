// The cost model against published numbers (Timeloop's compute bound, SCALE-Sim's
// systolic cycle counts, a decode GEMV at the DRAM roof) and against its own formulas
// (overlap, core split, bound rule, timeline cap).
#include <gtest/gtest.h>

#include <cmath>

#include "simulator/cost/compute_cycles.h"
#include "simulator/cost/cost_model.h"
#include "simulator/cost/transfer_model.h"
#include "sim_test_fixtures.h"

namespace npukit::sim {
namespace {

using testing::decode_gemv;
using testing::make_arch;
using testing::matrix_work;
using testing::systolic;
using testing::transfer;

// Transfers and DRAM so fast that only the matrix unit can matter.
ArchSpec never_stalls(const std::string& matrix) { return make_arch("fast", matrix, 1e9, 1e9, 1 << 30, 0, 0); }

OpAnalysis single_tile(const MatrixWork& w) {
  OpAnalysis a;
  a.op = "gemm";
  a.tile_loop = "t";
  a.tiles = 1;
  a.matrix = {w};
  return a;
}

TEST(CostModel, TimeloopExample49152MacsOn16MacUnitsIsComputeBound) {
  // Timeloop's documented example: 49,152 MACs on 16 MAC units take 3,072 cycles.
  const ArchSpec arch = make_arch("timeloop-16mac", "{kind: cube, dtypes: [int8], shapes: {int8: {m0: 1, k0: 1, n0: 16}}}");
  OpAnalysis a;
  a.op = "gemm";
  a.tile_loop = "t";
  a.tiles = 16;
  a.matrix = {matrix_work("C", Dtype::int8, 16, 16, 16, 12)};  // 16 full tiles of 16·16·12 MACs
  a.transfers = {transfer("A_buf", "A", Direction::in, "t", 16, 192, true),
                 transfer("C_buf", "C", Direction::out, "", 1, 1024, false)};
  ASSERT_EQ(a.macs(), 49152);
  const CostReport r = estimate_cost(a, arch);
  EXPECT_EQ(r.busy(Pipe::matrix), 3072);
  EXPECT_EQ(r.busy(Pipe::matrix), compute_bound_cycles(49152, 16));
  EXPECT_EQ(r.bound, Bound::compute);
  EXPECT_EQ(r.critical_path.compute, 3072);
  EXPECT_LT(r.total_cycles, 3072 * 1.2);
  EXPECT_EQ(r.critical_path.compute + r.critical_path.bandwidth + r.critical_path.latency + r.critical_path.sync,
            r.total_cycles);
}

TEST(CostModel, ScaleSimExamplesOnA4x4Array) {
  const std::pair<const char*, int64_t> expected[] = {{"os", 9}, {"ws", 13}, {"is", 13}};
  for (auto [dataflow, cycles] : expected) {
    const CostReport r = estimate_cost(single_tile(matrix_work("C", Dtype::int8, 1, 4, 4, 4)), never_stalls(systolic(4, 4, dataflow)));
    EXPECT_EQ(r.busy(Pipe::matrix), cycles) << dataflow;
    EXPECT_EQ(r.total_cycles, cycles) << dataflow;
    EXPECT_EQ(r.bound, Bound::compute) << dataflow;
  }
}

TEST(CostModel, ScaleSimExamplesOnA32x32Array) {
  // (M, N, K) = (128, 64, 256).
  const std::pair<const char*, int64_t> expected[] = {{"ws", 3551}, {"os", 2543}, {"is", 5055}};
  for (auto [dataflow, cycles] : expected) {
    const CostReport r =
        estimate_cost(single_tile(matrix_work("C", Dtype::int8, 1, 128, 64, 256)), never_stalls(systolic(32, 32, dataflow)));
    EXPECT_EQ(r.busy(Pipe::matrix), cycles) << dataflow;
    EXPECT_EQ(r.total_cycles, cycles) << dataflow;
  }
}

TEST(CostModel, SystolicMatrixCyclesFollowTheClosedFormForAnyShape) {
  const int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 29}, {33, 1, 64}, {100, 200, 3}, {1, 4096, 4096}};
  for (const char* dataflow : {"ws", "os", "is"}) {
    const ArchSpec arch = never_stalls(systolic(16, 8, dataflow));
    for (const auto& s : shapes) {
      const CostReport r = estimate_cost(single_tile(matrix_work("C", Dtype::int8, 3, s[0], s[1], s[2])), arch);
      EXPECT_EQ(r.busy(Pipe::matrix), 3 * systolic_gemm_cycles(arch.matrix.dataflow, 16, 8, s[0], s[1], s[2]))
          << dataflow << " " << s[0] << "x" << s[1] << "x" << s[2];
    }
  }
}

TEST(CostModel, DecodeGemvOnEdge6TopsIsBandwidthBoundWithin10PercentOfBytesOverBandwidth) {
  const OpAnalysis a = decode_gemv();
  const ArchSpec& arch = preset("edge-6tops");
  const CostReport r = estimate_cost(a, arch);
  const double ideal_us = static_cast<double>(a.dram_bytes()) / (34.1e9) * 1e6;
  EXPECT_EQ(r.bound, Bound::bandwidth);
  EXPECT_EQ(r.cores_used, 3);
  EXPECT_EQ(r.iterations, 171);  // ⌈512 / 3⌉ tiles on the busiest core
  EXPECT_TRUE(r.double_buffered);
  EXPECT_GE(r.time_us, ideal_us);  // nothing beats the DRAM roof
  EXPECT_LT(std::fabs(r.time_us - ideal_us) / ideal_us, 0.10) << r.time_us << " us vs " << ideal_us << " us";
  EXPECT_GT(r.critical_path.bandwidth, r.total_cycles / 2);
  // The roofline agrees: ~2 ops per byte is far below the ridge.
  EXPECT_NEAR(r.roofline.arithmetic_intensity, 2.0 * 4096 * 4096 / a.dram_bytes(), 1e-9);
  EXPECT_NEAR(r.roofline.attainable_ops_per_second, r.roofline.arithmetic_intensity * 34.1e9, 1.0);
  EXPECT_LE(r.roofline.achieved_ops_per_second, r.roofline.attainable_ops_per_second);
  EXPECT_GT(r.roofline.achieved_ops_per_second, 0.9 * r.roofline.attainable_ops_per_second);
}

// One input tile per iteration, one output tile, and matrix work: the pieces the
// overlap formulas combine. 1 GHz, 64 B/cycle DMA, DRAM 1 TB/s (never the cap here).
OpAnalysis pipeline(bool double_buffered) {
  OpAnalysis a;
  a.op = "gemm";
  a.tile_loop = "t";
  a.tiles = 10;
  a.transfers = {transfer("A_buf", "A", Direction::in, "t", 10, 6400, double_buffered),     // 10 + 100 cycles
                 transfer("C_buf", "C", Direction::out, "t", 10, 3200, double_buffered)};   // 10 + 50 cycles
  a.matrix = {matrix_work("C", Dtype::int8, 10, 1, 16, 200)};  // 200 cycles per tile on 1×1×16
  return a;
}

TEST(CostModel, DoubleBufferingOverlapsTransfersWithCompute) {
  const ArchSpec arch = make_arch("t", "{kind: cube, dtypes: [int8], shapes: {int8: {m0: 1, k0: 1, n0: 16}}}", 64, 1000);
  CostOptions opt;
  opt.sync_cycles_per_handoff = 5;
  const CostReport db = estimate_cost(pipeline(true), arch, opt);
  // prologue: latency 100 + first load 110; 10 × (max(110, 200, 60) + 2 handoffs × 5); epilogue: last store 60.
  EXPECT_EQ(db.prologue_cycles, 210);
  EXPECT_EQ(db.iteration_cycles, 210);
  EXPECT_EQ(db.epilogue_cycles, 60);
  EXPECT_EQ(db.total_cycles, 210 + 10 * 210 + 60);
  EXPECT_EQ(db.bound, Bound::compute);
  EXPECT_EQ(db.busy(Pipe::dma_in), 1100);
  EXPECT_EQ(db.busy(Pipe::dma_out), 600);
  EXPECT_EQ(db.busy(Pipe::sync), 100);
  EXPECT_NEAR(db.util(Pipe::matrix), 2000.0 / db.total_cycles, 1e-12);

  // Without double buffering every iteration waits for its load (a new DRAM round trip),
  // computes, then stores: 100 + 110 + 200 + 60 + 10.
  const CostReport serial = estimate_cost(pipeline(false), arch, opt);
  EXPECT_EQ(serial.prologue_cycles, 0);
  EXPECT_EQ(serial.iteration_cycles, 480);
  EXPECT_EQ(serial.total_cycles, 4800);
  EXPECT_EQ(serial.critical_path.latency, 10 * (100 + 20));
  EXPECT_EQ(serial.critical_path.compute, 2000);
}

// A store engine with partial writes writes a run off its alignment as the aligned units the
// run touches (bytes outside it masked): that is what the DMA time is charged, not the run.
TEST(CostModel, MaskedStoresAreChargedTheAlignedUnitsTheyTouch) {
  // 1 B/cycle and no setup: a store's DMA cycles are its bytes moved.
  ArchSpec arch = make_arch("t", "{kind: cube, dtypes: [int8], shapes: {int8: {m0: 1, k0: 1, n0: 16}}}", 1, 1000,
                            1 << 20, 0);
  DmaEngine& store = arch.dma[1];  // alignment 16
  store.partial_writes = true;
  store.burst_bytes = 1;  // so that only the alignment rounds
  Transfer t = transfer("s_buf", "scale", Direction::out, "t", 10, 4, false);
  EXPECT_TRUE(masked_store(t, store));
  EXPECT_EQ(burst_bytes_moved(t, store), 16);  // 4 B at an aligned base: one 16 B unit
  t.base_alignment = 4, t.row_bytes = t.stride_bytes = 24;
  EXPECT_EQ(burst_bytes_moved(t, store), 48);  // 24 B from offset 12 (the worst): 3 units
  t.base_alignment = 4096, t.row_bytes = t.stride_bytes = 32;
  EXPECT_FALSE(masked_store(t, store));  // aligned: written as it is
  EXPECT_EQ(burst_bytes_moved(t, store), 32);
  Transfer load = transfer("a_buf", "a", Direction::in, "t", 10, 4, false);
  EXPECT_FALSE(masked_store(load, arch.dma[0]));  // loads never are

  // The cost model charges the unit: ten 4 B masked stores take as long as ten 16 B ones.
  OpAnalysis a = pipeline(false);
  a.transfers[1] = transfer("s_buf", "scale", Direction::out, "t", 10, 4, false);
  const int64_t masked = estimate_cost(a, arch).busy(Pipe::dma_out);
  EXPECT_EQ(masked, 10 * 16);
  a.transfers[1].row_bytes = a.transfers[1].stride_bytes = 16;
  EXPECT_EQ(masked, estimate_cost(a, arch).busy(Pipe::dma_out));
  store.partial_writes = false;  // without byte enables the 4 B run is charged as 4 B (and the rules refuse it)
  a.transfers[1].row_bytes = a.transfers[1].stride_bytes = 4;
  EXPECT_EQ(estimate_cost(a, arch).busy(Pipe::dma_out), 10 * 4);
}

TEST(CostModel, DramBandwidthCapsTheDmaRate) {
  // DMA 64 B/cycle but DRAM 16 GB/s = 16 B/cycle at 1 GHz: 6400 B take 400 cycles.
  const ArchSpec arch = make_arch("t", "{kind: cube, dtypes: [int8], shapes: {int8: {m0: 1, k0: 1, n0: 16}}}", 64, 16);
  const CostReport r = estimate_cost(pipeline(true), arch, CostOptions{0, 8});
  EXPECT_EQ(r.busy(Pipe::dma_in), 10 * (10 + 400));
  EXPECT_EQ(r.bound, Bound::bandwidth);
}

TEST(CostModel, TilesSplitAcrossCoresAndTheBusiestCoreSetsTheTime) {
  ArchSpec arch = make_arch("t", "{kind: cube, dtypes: [int8], shapes: {int8: {m0: 1, k0: 1, n0: 16}}}", 64, 1000);
  OpAnalysis a = pipeline(true);
  a.tiles = 12;
  a.matrix[0].count = 12;
  a.transfers[0].count = a.transfers[1].count = 12;
  const CostReport one = estimate_cost(a, arch);
  arch.cores = 3;
  a.parallel_extent = 3;
  const CostReport three = estimate_cost(a, arch);
  EXPECT_EQ(three.cores_used, 3);
  EXPECT_EQ(three.iterations, 4);
  EXPECT_EQ(three.busy(Pipe::matrix), one.busy(Pipe::matrix) / 3);
  a.parallel_extent = 4;  // 4 parallel iterations on 3 cores: the busiest runs 2 of them
  const CostReport four = estimate_cost(a, arch);
  EXPECT_EQ(four.cores_used, 3);
  EXPECT_EQ(four.iterations, 6);
  EXPECT_EQ(four.busy(Pipe::matrix), one.busy(Pipe::matrix) / 2);
  a.parallel_extent = 2;  // fewer parallel iterations than cores: only 2 cores work
  EXPECT_EQ(estimate_cost(a, arch).cores_used, 2);
}

TEST(CostModel, SmallTransfersWithLargeSetupAreLatencyBound) {
  const ArchSpec arch = make_arch("t", "{kind: cube, dtypes: [int8], shapes: {int8: {m0: 1, k0: 1, n0: 16}}}", 64, 1000,
                                  1 << 20, 500);
  OpAnalysis a = pipeline(true);
  a.transfers[0].row_bytes = a.transfers[0].stride_bytes = 64;
  const CostReport r = estimate_cost(a, arch);
  EXPECT_EQ(r.bound, Bound::latency);
}

TEST(CostModel, ManyTinyHandoffsAreSyncBound) {
  const ArchSpec arch = make_arch("t", "{kind: cube, dtypes: [int8], shapes: {int8: {m0: 1, k0: 1, n0: 16}}}", 64, 1000,
                                  1 << 20, 0, 0);
  OpAnalysis a = pipeline(true);
  a.matrix[0].k = 1;
  CostOptions opt;
  opt.sync_cycles_per_handoff = 200;
  EXPECT_EQ(estimate_cost(a, arch, opt).bound, Bound::sync);
}

TEST(CostModel, VectorCyclesFormula) {
  const ArchSpec& arch = preset("edge-6tops");  // 32 B/cycle; exp 4 cycles per vector
  VectorWork v;
  v.func = "softmax";
  v.dtype = Dtype::fp32;
  v.ops = {{VectorOp::add, 1000}, {VectorOp::exp, 1000}, {VectorOp::div, 3}};
  // ⌈4000/32⌉·1 + ⌈4000/32⌉·4 + ⌈12/32⌉·8
  EXPECT_EQ(vector_cycles(v, arch), 125 + 500 + 8);
}

TEST(CostModel, CubeMatrixCyclesCountWholeSteps) {
  const ArchSpec& arch = preset("edge-6tops");  // int8 8×32×4
  EXPECT_EQ(matrix_cycles(matrix_work("C", Dtype::int8, 3, 1, 8, 4096), arch), 3 * 1 * 128 * 2);
  EXPECT_EQ(matrix_cycles(matrix_work("C", Dtype::fp16, 1, 8, 2, 16), arch), 1);
}

TEST(CostModel, TimelineIsCappedForThousandsOfTiles) {
  OpAnalysis a = pipeline(true);
  a.tiles = 4096;
  a.matrix[0].count = 4096;
  a.transfers[0].count = a.transfers[1].count = 4096;
  const ArchSpec arch = make_arch("t", "{kind: cube, dtypes: [int8], shapes: {int8: {m0: 1, k0: 1, n0: 16}}}", 64, 1000);
  const CostReport r = estimate_cost(a, arch);
  EXPECT_LT(r.timeline.size(), 120u);
  int64_t end = 0;
  for (const Interval& i : r.timeline) {
    EXPECT_LE(i.start_cycle, i.end_cycle) << i.name;
    end = std::max(end, i.end_cycle);
  }
  EXPECT_EQ(end, r.total_cycles);
  bool summarized = false;
  for (const Interval& i : r.timeline) summarized = summarized || i.name.find("summarized") != std::string::npos;
  EXPECT_TRUE(summarized);
}

TEST(CostModel, UnsupportedDtypeIsCostedWithANote) {
  OpAnalysis a = decode_gemv();
  a.matrix[0].dtype = Dtype::fp32;
  const CostReport r = estimate_cost(a, preset("edge-6tops"));
  EXPECT_GT(r.busy(Pipe::matrix), 0);
  bool noted = false;
  for (const std::string& n : r.notes) noted = noted || n.find("fp32") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(CostModel, MalformedAnalysesAreErrors) {
  OpAnalysis a = decode_gemv();
  a.tiles = 0;
  EXPECT_THROW(estimate_cost(a, preset("edge-6tops")), std::invalid_argument);
  a = decode_gemv();
  a.transfers[0].count = -1;
  EXPECT_THROW(estimate_cost(a, preset("edge-6tops")), std::invalid_argument);
  a = decode_gemv();
  a.matrix[0].k = 0;
  EXPECT_THROW(estimate_cost(a, preset("edge-6tops")), std::invalid_argument);
}

}  // namespace
}  // namespace npukit::sim
