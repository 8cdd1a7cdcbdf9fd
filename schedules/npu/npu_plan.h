// What an NPU schedule declares beyond Halide's own schedule: which on-chip buffer each
// staged Func lives in, which are double-buffered, and which Func update runs on the
// matrix unit. Halide 14 has no notion of an NPU's buffers, so the schedule states them
// here (through `stage`, which also sets compute_at/store_at) and the simulator's lowering
// pass reads them back by Func name. Funcs are stored in MemoryType::Heap so the same
// schedule lowers for the host and runs on real data (`--target npu-sim:ARCH`).
// Double buffering is a declaration the cost model honours; Halide 14 lowers a single copy.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Halide.h"
#include "simulator/analysis/op_analysis.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct Placement {
  std::string buffer;                // arch buffer name
  bool double_buffered = false;
  bool from_dram = false;            // a copy of an op input: its produce is a DMA in
  sim::SourceLoc source;             // the schedule statement that placed it
  // > 0: stored on chip in NZ fractals (layouts/nz.h) whose rows are this many bytes; the
  // copy's innermost loop walks K, so each DRAM run is cut into whole fractal rows.
  int64_t fractal_row_bytes = 0;
};

// Why a Func's DMA runs are shorter than a burst whatever the tiling (NpuPlan::short_runs).
struct ShortRuns {
  std::string why;
  sim::SourceLoc source;
};

// The matrix unit computes update `stage` of `func`; its tile loops are those over the
// named Vars / RVars (Halide names: "n", "m", "k$x").
struct MatrixRole {
  std::string func;
  int stage = 1;
  std::string m_var, n_var, k_var;
  sim::Dtype dtype = sim::Dtype::int8;
  // The op's whole M, N and K (any may be undefined): a tile that spans a whole dim
  // smaller than the unit pads because of the shape, not the schedule (decode's M = 1).
  std::vector<Halide::Expr> whole;
  sim::SourceLoc source;  // the schedule statement that gave the matrix unit this update
};

class NpuPlan {
 public:
  // Computes `f` at `at` (stored there too) in `buffer`; from_dram marks a plain copy of an
  // op input (its produce is a DMA transfer). Which units read it the analysis finds in
  // the nest. The caller's file and line are recorded, so that a rule broken by this
  // placement points at it.
  void stage(Halide::Func f, const std::string& buffer, Halide::LoopLevel at, bool double_buffered = false,
             bool from_dram = false, const char* file = __builtin_FILE(), int line = __builtin_LINE());
  // Declares that staged `f` (already placed by `stage`) is stored in NZ fractals with rows
  // of `row_bytes` (32 on Ascend): the rules then judge its transfers in fractal rows.
  void nz(const Halide::Func& f, int64_t row_bytes);
  // `whole`: the op's whole {M, N, K} extents, when known (see MatrixRole::whole).
  void matrix(const Halide::Func& f, int stage, const std::string& m_var, const std::string& n_var,
              const std::string& k_var, sim::Dtype dtype, std::vector<Halide::Expr> whole = {},
              const char* file = __builtin_FILE(), int line = __builtin_LINE());

  // Declares that the DMA runs of `f` (a staged Func or an output) are short because of
  // what the op stores, not because of the tiling, and says why: per_token_quant's scales
  // are 4 B per row, and a tile's rows are capped by its row of `a` far below a burst of
  // scales. The rules then do not warn about their partial bursts; the cost model still
  // charges every burst. Alignment errors are not affected.
  void short_runs(const Halide::Func& f, std::string why, const char* file = __builtin_FILE(),
                  int line = __builtin_LINE());
  // The declaration for a Func, or nullptr.
  const ShortRuns* short_runs_of(const std::string& func) const;

  const std::map<std::string, Placement>& placements() const { return placements_; }
  // The placement of a Func, or of the Tuple component "<func>.<i>"; nullptr if none.
  const Placement* placement(const std::string& func) const;
  const std::vector<MatrixRole>& matrix_roles() const { return matrix_; }

 private:
  std::map<std::string, Placement> placements_;
  std::map<std::string, ShortRuns> short_runs_;
  std::vector<MatrixRole> matrix_;
};

}  // namespace npukit::schedules::npu
