// The lowering pass on the shipped NPU schedules, and the validations that need them
// (docs/simulator/validation.md): TVM VTA's counters, SCALE-Sim's systolic cycle counts
// through the int8_gemm schedule, decode GEMV bandwidth on edge-6tops. Also the pipeline
// cache (a shape sweep lowers once) and the rules on a badly tiled schedule.
#include <gtest/gtest.h>

#include "simulator/analysis/op_simulation.h"
#include "simulator/cost/compute_cycles.h"
#include "simulator/simulate.h"

namespace npukit::sim {
namespace {

int64_t tensor_bytes(const OpAnalysis& a, const std::string& tensor) {
  int64_t b = 0;
  for (const Transfer& t : a.transfers)
    if (t.tensor == tensor) b += t.total_bytes();
  return b;
}

SimRequest gemm(int64_t M, int64_t K, int64_t N) {
  SimRequest r;
  r.op = "int8_gemm";
  r.shape = {{"M", M}, {"K", K}, {"N", N}};
  return r;
}

// VTA's "Simple Matrix Multiply" tutorial (1x1024 · 1024x1024, 16x16 blocks) prints
// inp_load_nbytes 4096, wgt_load_nbytes 1048576, out_store_nbytes 1024, gemm_counter 4096:
// weights in four 256-channel tiles (the 256 KiB weight buffer full), the input reloaded
// per tile, int8 out. The matching schedule is the one those numbers imply.
TEST(NpuAnalysis, VtaTutorialCounters) {
  SimRequest r = gemm(1, 1024, 1024);
  r.params = {{"out", "int8"}};
  r.schedule = {{"tile_m", 1}, {"tile_n", 256}, {"tile_k", 1024}, {"double_buffer", 0}};
  const ArchSpec& vta = preset("vta-default");
  const SimResult s = simulate(analyse_op(r, vta), vta, false);
  EXPECT_EQ(tensor_bytes(s.analysis, "a"), 4096);
  EXPECT_EQ(tensor_bytes(s.analysis, "w"), 1048576);
  EXPECT_EQ(tensor_bytes(s.analysis, "int8_gemm_npu"), 1024);
  EXPECT_EQ(s.cost.busy(Pipe::matrix), 4096);  // one 1x16x16 GEMM op per cycle
  EXPECT_EQ(s.analysis.macs(), 1024 * 1024);
  EXPECT_TRUE(s.violations.empty()) << s.violations.front().message;
}

ArchSpec systolic(int64_t rows, int64_t cols, const std::string& dataflow) {
  const std::string big = "1073741824";  // 1 GiB buffers, wide DMA and DRAM: nothing stalls
  return parse_arch_spec(
      "name: scalesim\nclock_ghz: 1\ncores: 1\nmatrix: {kind: systolic, dtypes: [int8], rows: " + std::to_string(rows) +
          ", cols: " + std::to_string(cols) + ", dataflow: " + dataflow +
          "}\nvector: {bytes_per_cycle: 1024, cycles: {add: 1, mul: 1, fma: 1, exp: 1, rsqrt: 1, div: 1, convert: 1}}\n"
          "buffers:\n  - {name: spad, bytes: " + big + ", alignment: 1, banks: 1, readers: [matrix, vector, dma]}\n"
          "  - {name: acc, bytes: " + big + ", alignment: 1, banks: 1, readers: [matrix, vector, dma]}\n"
          "dma:\n  - {name: load, bytes_per_cycle: 1048576, setup_cycles: 0, burst_bytes: 1, alignment: 1}\n"
          "  - {name: store, bytes_per_cycle: 1048576, setup_cycles: 0, burst_bytes: 1, alignment: 1}\n"
          "dram: {bandwidth_gbps: 1000000, latency_ns: 0}\n"
          "roles: {matrix_a: spad, matrix_b: spad, matrix_acc: acc, vector: acc}\n",
      "scalesim.yaml");
}

// SCALE-Sim v2's closed forms, reproduced by the int8_gemm schedule's matrix cycles.
TEST(NpuAnalysis, ScaleSimThroughTheSchedule) {
  struct Case {
    int64_t r, c, m, n, k;
    const char* df;
    int64_t cycles;
  };
  const Case published[] = {{4, 4, 4, 4, 4, "os", 9},         {4, 4, 4, 4, 4, "ws", 13},
                            {4, 4, 4, 4, 4, "is", 13},        {32, 32, 128, 64, 256, "ws", 3551},
                            {32, 32, 128, 64, 256, "os", 2543}, {32, 32, 128, 64, 256, "is", 5055}};
  for (const Case& c : published) {
    const ArchSpec arch = systolic(c.r, c.c, c.df);
    const SimResult s = simulate(analyse_op(gemm(c.m, c.k, c.n), arch), arch, false);
    EXPECT_EQ(s.cost.busy(Pipe::matrix), c.cycles) << c.df << " " << c.m << "x" << c.n << "x" << c.k;
  }
  // Any shape: odd sizes on every dataflow agree with the formula.
  for (const char* df : {"ws", "os", "is"}) {
    const ArchSpec arch = systolic(8, 16, df);
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 4096, 4096}, {7, 33, 65}, {130, 17, 9}}) {
      const SimResult s = simulate(analyse_op(gemm(m, k, n), arch), arch, false);
      EXPECT_EQ(s.cost.busy(Pipe::matrix), systolic_gemm_cycles(arch.matrix.dataflow, 8, 16, m, n, k))
          << df << " " << m << "x" << n << "x" << k;
    }
  }
}

// Decode GEMV streams the weights once: bandwidth bound, within 10% of bytes / DRAM BW.
TEST(NpuAnalysis, DecodeGemvIsBandwidthBoundOnEdge) {
  const ArchSpec& edge = preset("edge-6tops");
  const SimResult s = simulate(analyse_op(gemm(1, 4096, 4096), edge), edge, false);
  EXPECT_EQ(s.cost.bound, Bound::bandwidth);
  EXPECT_EQ(tensor_bytes(s.analysis, "w"), 4096 * 4096);
  const double ideal_us = 4096.0 * 4096.0 / (edge.dram.bandwidth_gbps * 1e3);
  EXPECT_GT(s.cost.time_us, ideal_us);
  EXPECT_LT(s.cost.time_us, 1.10 * ideal_us) << s.cost.time_us << " us vs " << ideal_us;
}

// The nest's facts for a plain tiling: tiles, allocations in their buffers, transfers.
TEST(NpuAnalysis, GemmNestFacts) {
  const ArchSpec& vta = preset("vta-default");
  SimRequest r = gemm(1, 1024, 1000);
  r.schedule = {{"tile_m", 1}, {"tile_n", 256}, {"tile_k", 512}, {"double_buffer", 1}};
  const OpAnalysis a = analyse_op(r, vta);
  EXPECT_EQ(a.tiles, 4 * 2);  // 4 N tiles (the last 232 wide) x 2 K chunks
  EXPECT_EQ(a.parallel_extent, 4);
  ASSERT_EQ(a.matrix.size(), 2u);  // full tiles and the tail
  EXPECT_EQ(a.matrix[0].n, 256);
  EXPECT_EQ(a.matrix[0].k, 512);
  EXPECT_EQ(a.matrix[1].n, 1000 - 3 * 256);
  EXPECT_EQ(a.macs(), 1024 * 1000);
  bool w_in_wgt = false;
  for (const Allocation& al : a.allocations)
    if (al.func == "w_tile") w_in_wgt = al.buffer == "wgt" && al.double_buffered && al.bytes == 256 * 512;
  EXPECT_TRUE(w_in_wgt);
  EXPECT_EQ(tensor_bytes(a, "w"), 1000 * 1024);
  EXPECT_EQ(tensor_bytes(a, "int8_gemm_npu"), 1000 * 4);
}

TEST(NpuAnalysis, RmsNormStreamsRowsOnce) {
  const ArchSpec& edge = preset("edge-6tops");
  SimRequest r;
  r.op = "rms_norm";
  r.shape = {{"rows", 64}, {"hidden", 4096}};
  r.dtype = "float16";
  const SimResult s = simulate(analyse_op(r, edge), edge, false);
  EXPECT_EQ(tensor_bytes(s.analysis, "x"), 64 * 4096 * 2);
  EXPECT_EQ(tensor_bytes(s.analysis, "weight"), 4096 * 2);
  EXPECT_EQ(tensor_bytes(s.analysis, "rms_norm_npu"), 64 * 4096 * 2);
  ASSERT_FALSE(s.analysis.vector.empty());
  EXPECT_TRUE(s.violations.empty()) << s.violations.front().message;
}

// A K tile that is not a multiple of k0 = 32 is reported with the numbers and a fix.
TEST(NpuAnalysis, RulesOnABadTile) {
  const ArchSpec& ascend = preset("ascend-910b-like");
  SimRequest r = gemm(16, 96, 64);
  r.schedule = {{"tile_k", 24}, {"tile_m", 16}, {"tile_n", 16}};
  const SimResult s = simulate(analyse_op(r, ascend), ascend, false);
  bool found = false;
  for (const Violation& v : s.violations) {
    if (v.rule == "matrix_tile" && v.value == 24 && v.limit == 32) {
      found = true;
      EXPECT_EQ(v.func, "acc");
      EXPECT_NE(v.loop.find("r$x.ri"), std::string::npos);
      EXPECT_NE(v.message.find("25%"), std::string::npos) << v.message;
      EXPECT_NE(v.suggestion.find("32"), std::string::npos) << v.suggestion;
    }
  }
  EXPECT_TRUE(found);
  // Too wide a tile overflows L0B: an error naming the buffer.
  r.schedule = {{"tile_k", 96}, {"tile_m", 16}, {"tile_n", 1024}};
  const SimResult big = simulate(analyse_op(gemm(16, 96, 4096), ascend), ascend, false);
  EXPECT_TRUE(big.violations.empty());
  const SimResult over = simulate(analyse_op([&] { SimRequest q = gemm(16, 1024, 4096); q.schedule = {{"tile_k", 1024}, {"tile_n", 1024}, {"tile_m", 16}}; return q; }(), ascend), ascend, false);
  bool capacity = false;
  for (const Violation& v : over.violations) capacity = capacity || (v.rule == "buffer_capacity" && v.severity == Violation::error);
  EXPECT_TRUE(capacity);
}

// On a cube that reads NZ (ascend-910b-like, matrix.layout: nz) the operand tiles are
// staged as 16 x 32 B fractals: each DMA run is one tile row of K cut into fractal rows,
// and a tile of 8 rows still occupies a whole fractal's 16. Row-major elsewhere.
TEST(NpuAnalysis, AscendStagesGemmOperandsInNzFractals) {
  const ArchSpec& ascend = preset("ascend-910b-like");
  ASSERT_EQ(ascend.matrix.layout, OperandLayout::nz);
  SimRequest r = gemm(8, 1024, 256);
  r.schedule = {{"tile_m", 8}, {"tile_n", 64}, {"tile_k", 512}, {"double_buffer", 0}};
  const OpAnalysis a = analyse_op(r, ascend);
  int nz_transfers = 0;
  for (const Transfer& t : a.transfers) {
    if (t.tensor != "a" && t.tensor != "w") continue;
    ++nz_transfers;
    EXPECT_EQ(t.fractal_row_bytes, 32) << t.func;
    EXPECT_EQ(t.k_run_bytes, 512) << t.func;  // one tile row of K: 16 fractal rows
    EXPECT_EQ(t.row_bytes, 512) << t.func;    // DRAM rows are K-contiguous, 1024 B apart
    EXPECT_EQ(t.stride_bytes, 1024) << t.func;
  }
  EXPECT_EQ(nz_transfers, 2);
  for (const Allocation& al : a.allocations) {
    if (al.func == "a_tile") {
      EXPECT_EQ(al.bytes, 16 * 512);  // 8 rows padded to one fractal row block
    }
    if (al.func == "w_tile") {
      EXPECT_EQ(al.bytes, 64 * 512);
    }
  }
  EXPECT_EQ(a.macs(), 8 * 1024 * 256);
  for (const Transfer& t : analyse_op(r, preset("edge-6tops")).transfers) EXPECT_EQ(t.fractal_row_bytes, 0) << t.func;
}

// Shapes and tiles are parameters of the lowered nest: a 100-shape sweep lowers once.
TEST(NpuAnalysis, ShapeSweepLowersOnce) {
  const ArchSpec& edge = preset("edge-6tops");
  analyse_op(gemm(1, 64, 64), edge);  // lowered (or cached by an earlier test)
  const int64_t before = npu_lowerings();
  for (int i = 1; i <= 100; ++i) {
    SimRequest r = gemm(1 + i % 7, 64 * i, 4096);
    r.schedule = {{"double_buffer", 1}};
    analyse_op(r, edge);
  }
  EXPECT_EQ(npu_lowerings() - before, 0);
}

TEST(NpuAnalysis, BadRequestsNameTheArgument) {
  const ArchSpec& edge = preset("edge-6tops");
  auto message = [&](const SimRequest& r) {
    try {
      analyse_op(r, edge);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SimRequest r = gemm(1, 64, 0);
  EXPECT_EQ(message(r), "int8_gemm: shape N = 0: must be in [1, 2147483647] (Halide extents are int32)");
  r = gemm(1, 64, 64);
  r.shape.erase("K");
  EXPECT_EQ(message(r), "int8_gemm: shape needs K");
  r = gemm(1, 64, 64);
  r.schedule = {{"tile_q", 4}};
  EXPECT_EQ(message(r), "int8_gemm: unknown schedule key tile_q (keys: tile_m, tile_n, tile_k, double_buffer)");
  r.op = "softmax";  // (every registry op may get a schedule: a name that is no op)
  EXPECT_EQ(message(r).rfind("op softmax: no NPU schedule (ops with one: ", 0), 0u) << message(r);
  EXPECT_NE(message(r).find("int8_gemm"), std::string::npos) << message(r);
}

}  // namespace
}  // namespace npukit::sim
