// What the simulator knows about one operator's NPU schedule for one shape: the loop nest,
// the on-chip allocations, the DRAM <-> buffer transfers and the work per unit, all with
// concrete numbers. The lowering pass (simulator/analysis/lowered_nest) fills it from
// Halide's lowered IR; the rules (simulator/rules) and the cost model (simulator/cost)
// read only this, so they can be tested on hand-written analyses.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "simulator/arch/arch_spec.h"

namespace npukit::sim {

// Where in an NPU schedule's source a placement or a matrix role was declared, so that a
// rule it breaks points at the statement to change. file is relative to the repository
// ("schedules/npu/rms_norm.cpp"); line 0 = unknown.
struct SourceLoc {
  std::string file;
  int line = 0;
  bool known() const { return line > 0; }
  std::string text() const { return file + ":" + std::to_string(line); }
};
// `file` as __builtin_FILE() gives it (absolute in CMake builds), trimmed to the path
// from the last `schedules/` or `tests/` folder on (the kit's folders that hold NpuPlan
// calls: the schedules, and the tests' deliberately bad ones), when it has one.
inline SourceLoc source_loc(const char* file, int line) {
  std::string f = file ? file : "";
  size_t from = std::string::npos;
  for (const char* folder : {"schedules/", "tests/"}) {
    const std::string name = folder;
    if (f.compare(0, name.size(), name) == 0 && from == std::string::npos) from = 0;
    const size_t at = f.rfind("/" + name);
    if (at != std::string::npos && (from == std::string::npos || at + 1 > from)) from = at + 1;
  }
  if (from != std::string::npos) f = f.substr(from);
  return SourceLoc{f, line};
}

// One loop of the lowered nest, outermost first, with concrete bounds.
struct LoopInfo {
  std::string name;      // Halide's loop name, e.g. "acc.s1.x.xo"
  int64_t min = 0, extent = 1;
  int depth = 0;         // 0 = outermost
  bool parallel = false; // split across cores
};

// A Func stored in an on-chip buffer for the duration of one iteration of `loop`.
struct Allocation {
  std::string func;       // Halide Func name
  std::string buffer;     // the arch buffer it lives in ("wgt", "L0A", ...)
  std::string loop;       // the loop it is allocated in; "" = once for the whole op
  int64_t bytes = 0;      // one copy
  int64_t element_bytes = 1;
  bool double_buffered = false;  // two copies live: the one in use and the next one
  std::vector<Unit> readers;     // units that read it (matrix, vector, dma)
  SourceLoc source;              // the schedule statement that placed it
  int64_t live_bytes() const { return double_buffered ? 2 * bytes : bytes; }
};

enum class Direction { in, out };  // DRAM -> buffer, buffer -> DRAM

// A copy between a DRAM tensor and an on-chip allocation, issued `count` times over the
// whole op. One transfer moves `rows` rows of `row_bytes` bytes, `stride_bytes` apart in
// DRAM (rows = 1 for a contiguous transfer).
struct Transfer {
  std::string func;     // the staged Func (the on-chip side)
  std::string tensor;   // the DRAM side: an input or output of the op
  std::string buffer;   // the arch buffer of `func`
  std::string loop;     // the loop each transfer is issued in ("" = once)
  Direction direction = Direction::in;
  int64_t count = 1;
  int64_t rows = 1, row_bytes = 0, stride_bytes = 0;
  // Largest power of two (bytes) dividing every transfer's DRAM base address, assuming
  // the tensor itself starts on a 4 KiB boundary; capped at 4096.
  int64_t base_alignment = 4096;
  bool double_buffered = false;
  int64_t element_bytes = 0;  // bytes of one element (0: unknown)
  // > 0: `func` is stored in NZ fractals whose rows are this many bytes; each run of the
  // innermost (K) copy loop, `k_run_bytes`, lands on chip as whole or partial fractal rows.
  int64_t fractal_row_bytes = 0;
  int64_t k_run_bytes = 0;
  SourceLoc source;           // the placement of `func`
  // Not empty: the schedule declares why these runs are short whatever the tiling
  // (NpuPlan::short_runs); the burst-waste warning stays quiet, the cost is unchanged.
  std::string short_runs;
  int64_t bytes() const { return rows * row_bytes; }
  int64_t total_bytes() const { return count * bytes(); }
};

// Matrix-unit work: `count` tile products of [m, k] · [k, n] in `dtype`, the tile extents
// being those the schedule gives the loops `m_loop`, `n_loop`, `k_loop` (a loop name is
// "" when the tile has no such loop: extent 1).
struct MatrixWork {
  std::string func;
  Dtype dtype = Dtype::int8;
  int64_t count = 0;
  int64_t m = 1, n = 1, k = 1;
  std::string m_loop, n_loop, k_loop;
  int64_t useful_macs = 0;  // MACs on real data (count·m·n·k minus the op's own padding)
  int64_t m_whole = 0, n_whole = 0, k_whole = 0;  // the op's whole extents along m, n, k (0: unknown)
  SourceLoc source;         // the schedule statement that gave the matrix unit this work
};

// Vector-unit work of one Func: element operations by class over the whole op.
struct VectorWork {
  std::string func;
  std::string buffer;        // where its vector loads/stores go ("" = registers only)
  Dtype dtype = Dtype::fp32; // the arithmetic type
  int64_t lanes = 1;         // vector width the schedule uses
  std::map<VectorOp, int64_t> ops;  // element ops by class
  int64_t elements = 0;      // elements produced
  // Largest power of two (bytes) dividing the offset of every vector access into its
  // buffer (Halide's alignment facts); compared with the buffer's alignment.
  int64_t access_alignment = 4096;
  SourceLoc source;  // the placement of `func` (unknown for the output's epilogue)
};

struct OpAnalysis {
  std::string op;                         // "int8_gemm", "rms_norm"
  std::map<std::string, int64_t> shape;   // the named dims it was evaluated for
  std::map<std::string, int64_t> schedule;  // the schedule's knobs (tile sizes, double_buffer)
  Dtype dtype = Dtype::int8;              // operand dtype of the op
  std::vector<LoopInfo> loops;
  // The loop whose iterations the schedule pipelines (transfers of iteration i + 1 overlap
  // compute of i when its allocations are double-buffered) and its total trip count.
  std::string tile_loop;
  int64_t tiles = 1;
  int64_t parallel_extent = 1;            // iterations of the loop split across cores
  std::vector<Allocation> allocations;
  std::vector<Transfer> transfers;
  std::vector<MatrixWork> matrix;
  std::vector<VectorWork> vector;

  int64_t dram_bytes() const {  // Σ transfer total_bytes, both directions
    int64_t b = 0;
    for (const Transfer& t : transfers) b += t.total_bytes();
    return b;
  }
  int64_t macs() const {  // Σ useful MACs
    int64_t m = 0;
    for (const MatrixWork& w : matrix) m += w.useful_macs;
    return m;
  }
};

}  // namespace npukit::sim
