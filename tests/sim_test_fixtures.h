// Small architectures and analyses the simulator tests build by hand: YAML strings run
// through the real loader, so a test arch obeys the same schema as a preset.
#pragma once

#include <string>

#include "simulator/analysis/op_analysis.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::sim::testing {

// One core at 1 GHz, one buffer "buf" read by every unit, two DMA engines; `matrix` is
// the YAML of the matrix unit, `dma_bpc` and `dram_gbps` the transfer rates.
inline ArchSpec make_arch(const std::string& name, const std::string& matrix, double dma_bpc = 64,
                          double dram_gbps = 64, int64_t buffer_bytes = 1 << 20, int64_t setup = 10,
                          double latency_ns = 100) {
  const std::string yaml =
      "name: " + name + "\nclock_ghz: 1.0\ncores: 1\nmatrix: " + matrix +
      "\nvector: {bytes_per_cycle: 64, cycles: {add: 1, mul: 1, fma: 1, exp: 4, rsqrt: 4, div: 8, convert: 1}}\n"
      "buffers:\n  - {name: buf, bytes: " + std::to_string(buffer_bytes) +
      ", alignment: 16, banks: 1, readers: [matrix, vector, dma]}\n"
      "dma:\n  - {name: load, bytes_per_cycle: " + std::to_string(dma_bpc) + ", setup_cycles: " + std::to_string(setup) +
      ", burst_bytes: 64, alignment: 16}\n"
      "  - {name: store, bytes_per_cycle: " + std::to_string(dma_bpc) + ", setup_cycles: " + std::to_string(setup) +
      ", burst_bytes: 64, alignment: 16}\n"
      "dram: {bandwidth_gbps: " + std::to_string(dram_gbps) + ", latency_ns: " + std::to_string(latency_ns) + "}\n";
  return parse_arch_spec(yaml, name + ".yaml");
}

inline std::string systolic(int64_t rows, int64_t cols, const char* dataflow) {
  return "{kind: systolic, dtypes: [int8], rows: " + std::to_string(rows) + ", cols: " + std::to_string(cols) +
         ", dataflow: " + dataflow + "}";
}

inline Transfer transfer(const std::string& func, const std::string& tensor, Direction dir, const std::string& loop,
                         int64_t count, int64_t bytes, bool double_buffered, const std::string& buffer = "buf") {
  Transfer t;
  t.func = func, t.tensor = tensor, t.buffer = buffer, t.loop = loop, t.direction = dir, t.count = count;
  t.rows = 1, t.row_bytes = bytes, t.stride_bytes = bytes, t.double_buffered = double_buffered;
  return t;
}

inline MatrixWork matrix_work(const std::string& func, Dtype dtype, int64_t count, int64_t m, int64_t n, int64_t k) {
  MatrixWork w;
  w.func = func, w.dtype = dtype, w.count = count, w.m = m, w.n = n, w.k = k;
  w.m_loop = "y.yi", w.n_loop = "x.xi", w.k_loop = "k.ki";
  w.useful_macs = count * m * n * k;
  return w;
}

inline Allocation allocation(const std::string& func, const std::string& buffer, int64_t bytes, bool double_buffered,
                             std::vector<Unit> readers = {Unit::matrix, Unit::dma}, const std::string& loop = "t") {
  Allocation a;
  a.func = func, a.buffer = buffer, a.loop = loop, a.bytes = bytes, a.double_buffered = double_buffered;
  a.readers = std::move(readers);
  return a;
}

// Decode GEMV y[N] = W[N, K] · x[K], M = 1, K = N = 4096, int8 weights streamed from DRAM in
// 32 KiB tiles (8 rows of W), double-buffered, the tile loop split across the cores; x is
// loaded once and the int32 y stored once.
inline OpAnalysis decode_gemv() {
  OpAnalysis a;
  a.op = "int8_gemv";
  a.shape = {{"M", 1}, {"N", 4096}, {"K", 4096}};
  a.dtype = Dtype::int8;
  a.loops = {{"y.s1.x.xo", 0, 512, 0, true}, {"y.s1.k.ko", 0, 1, 1, false}};
  a.tile_loop = "y.s1.x.xo";
  a.tiles = 512;
  a.parallel_extent = 512;
  a.allocations = {allocation("x_sram", "sram", 4096, false, {Unit::matrix}, ""),
                   allocation("W_sram", "sram", 32768, true, {Unit::matrix}, "y.s1.x.xo"),
                   allocation("y_acc", "acc", 16384, false, {Unit::dma}, "")};
  a.allocations[2].element_bytes = 4;
  a.transfers = {transfer("x_sram", "x", Direction::in, "", 1, 4096, false, "sram"),
                 transfer("W_sram", "W", Direction::in, "y.s1.x.xo", 512, 32768, true, "sram"),
                 transfer("y_acc", "y", Direction::out, "", 1, 16384, false, "acc")};
  MatrixWork w = matrix_work("y", Dtype::int8, 512, 1, 8, 4096);
  w.m_loop = "";
  a.matrix = {w};
  return a;
}

}  // namespace npukit::sim::testing
