// The NPU cost model: cycles per unit, their overlap under double buffering, the bound
// and the roofline figures of one operator on one ArchSpec, from its OpAnalysis alone.
// docs/simulator/cost-model.md states every formula; the comments here say only why.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "simulator/analysis/op_analysis.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::sim {

// The timeline's tracks: the units that can be busy at once on one core.
enum class Pipe { matrix, vector, dma_in, dma_out, sync };
constexpr std::array<Pipe, 5> kPipes{Pipe::matrix, Pipe::vector, Pipe::dma_in, Pipe::dma_out, Pipe::sync};
const char* to_string(Pipe p);

// What limits the op: the term with the most cycles on the critical path.
enum class Bound { compute, bandwidth, latency, sync };
const char* to_string(Bound b);

struct CostOptions {
  // Cycles one handoff between the DMA and the compute units costs (a flag set by one
  // pipe and waited on by the other). The arch spec has no key for it yet; 16 cycles is
  // an assumption of the order of a scalar-unit flag round trip.
  int64_t sync_cycles_per_handoff = 16;
  // The timeline keeps this many iterations at each end and summarizes the middle.
  int64_t timeline_edge_iterations = 8;
};

struct Interval {
  Pipe pipe;
  std::string name;
  int64_t start_cycle = 0, end_cycle = 0;
};

// A compute roof (one line of the roofline).
struct Roof {
  std::string label;        // "int8 matrix", "fp32 vector"
  double ops_per_second = 0;
};

struct Roofline {
  double ops = 0;                    // 2·MACs + vector element ops (fma counts 2)
  double arithmetic_intensity = 0;   // ops per DRAM byte; 0 when the op moves no bytes
  double peak_ops_per_second = 0;    // the roof that applies to this op (whole chip)
  double bandwidth_bytes_per_second = 0;
  double attainable_ops_per_second = 0;  // min(peak, AI × bandwidth)
  double achieved_ops_per_second = 0;    // ops / time
  std::vector<Roof> roofs;           // every compute roof of the arch, for the plot
};

// Cycles on the critical path, split by what they wait for; they add up to total_cycles.
struct CriticalPath {
  int64_t compute = 0, bandwidth = 0, latency = 0, sync = 0;
};

struct CostReport {
  int64_t total_cycles = 0;
  double time_us = 0;
  Bound bound = Bound::compute;
  CriticalPath critical_path;
  // Busy cycles of each unit on the busiest core (the one that sets the time).
  std::array<int64_t, kPipes.size()> busy_cycles{};
  std::array<double, kPipes.size()> utilization{};  // busy / total
  int64_t cores_used = 1;       // min(cores, parallel_extent)
  int64_t iterations = 1;       // tile iterations of the busiest core
  bool double_buffered = false; // any per-iteration transfer overlaps compute
  int64_t prologue_cycles = 0, iteration_cycles = 0, epilogue_cycles = 0;
  int64_t dram_latency_cycles = 0;  // one DRAM round trip, in cycles
  int64_t dram_bytes = 0;           // as the analysis counts them (not burst-rounded)
  int64_t macs = 0;
  Roofline roofline;
  std::vector<Interval> timeline;   // capped: first and last iterations, middle summarized
  std::vector<std::string> notes;   // assumptions the numbers rest on for this op

  int64_t busy(Pipe p) const { return busy_cycles[static_cast<size_t>(p)]; }
  double util(Pipe p) const { return utilization[static_cast<size_t>(p)]; }
  // The unit with the most busy cycles (the first of equals in kPipes order).
  Pipe busiest() const {
    Pipe best = Pipe::matrix;
    for (Pipe p : kPipes)
      if (busy(p) > busy(best)) best = p;
    return best;
  }
};

// Matrix-unit cycles of `w.count` tile products (cube: whole m0×k0×n0 steps; systolic:
// SCALE-Sim's closed form for the unit's dataflow). A dtype the unit lacks is costed with
// the unit's first dtype and said so in a note (the rules report it as an error).
int64_t matrix_cycles(const MatrixWork& w, const ArchSpec& arch);
// Vector-unit cycles: Σ over op classes ⌈ops·element bytes / bytes_per_cycle⌉·cycles[class].
int64_t vector_cycles(const VectorWork& v, const ArchSpec& arch);

// Throws std::invalid_argument for an analysis that cannot be costed (tiles < 1,
// negative counts, an arch without DMA engines).
CostReport estimate_cost(const OpAnalysis& analysis, const ArchSpec& arch, const CostOptions& options = {});

}  // namespace npukit::sim
