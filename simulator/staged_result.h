// The simulation of an op whose NPU schedule is a sequence of stages (a composite
// schedule, schedules/npu/npu_schedule.h's `stages`): each stage's own simulation, their
// sum, and the DRAM traffic of the intermediates between them with what a fused pipeline
// would save by keeping each on chip. What is simulated is the sequence; the saving is
// the transfers a fusion would remove, computed from the stages' analyses and the arch's
// buffers, never simulated as a fused pipeline. Halide-free, so the reports can use it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/simulate.h"

namespace npukit::sim {

struct StageSimulation {
  std::string label;  // "qkv projection"
  std::string op;     // the stage's op or pipeline ("linear", "rope")
  SimResult result;
};

// One intermediate tensor: its size, the DRAM bytes its producer's stores and its
// consumers' loads move, and whether it would fit on chip in the buffer each consumer
// stages it in, beside that consumer's own allocations (sim::fits_buffers).
struct IntermediateTraffic {
  std::string name;
  int64_t bytes = 0;                   // the whole tensor
  std::string producer;                // the stage that writes it
  std::vector<std::string> consumers;  // the stages that read it
  int64_t written = 0, read = 0;       // DRAM bytes, as the analyses count them
  std::vector<std::string> buffers;    // where each consumer stages it
  bool fits = false;                   // fits every consumer's buffer
  std::string why;                     // which buffer it does not fit, when it does not
  int64_t traffic() const { return written + read; }
};

struct StagedResult {
  std::string op, dtype;
  std::vector<StageSimulation> stages;
  std::vector<IntermediateTraffic> intermediates;
  // The stages' sum: cycles, time, busy cycles, DRAM bytes, MACs, violations (each
  // violation's func prefixed with its stage label); bound and busiest unit of the sum.
  SimResult total;
  int64_t intermediate_bytes() const;  // Σ traffic of every intermediate
  int64_t fusable_bytes() const;       // Σ traffic of those that fit on chip
  // The DRAM cycles of fusable_bytes at the whole chip's bandwidth: what removing those
  // transfers saves at most (less where a stage hid them behind its compute).
  int64_t fusable_cycles() const;
};

// Sums the stages into `r.total` (its analysis holds every stage's transfers, matrix and
// vector work, so dram_bytes() and macs() are the sums; its shape is `shape`).
void sum_stages(StagedResult& r, const std::map<std::string, int64_t>& shape, Dtype dtype);

}  // namespace npukit::sim
