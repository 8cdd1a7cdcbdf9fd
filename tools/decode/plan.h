// The decode plan: every item of the planner's layer (decoder_layer.h) simulated on the
// NPU arch through its NPU schedule, the same analysis `npukit sim` runs (one simulation
// per distinct stage and shape, cached for the process); items the arch cannot run fall
// back to the host CPU preset with the hand-over both ways costed; then layers x layer +
// head + embedding lookup per decode step, the prompt's prefill, and the memory plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/arch/arch_spec.h"
#include "tools/decode/decoder_layer.h"
#include "tools/decode/memory_plan.h"
#include "tools/decode/model_config.h"

namespace npukit::decode {

struct PlanRequest {
  ModelConfig model;
  MemoryRequest memory;  // weights, kv, context, batch, prompt, block
};

// One item of a pass, over all its runs (layers x count).
struct OpRow {
  std::string group, label, op, shape;
  int64_t runs = 0;              // per pass
  double time_us = 0;            // all runs, fallback transfers included
  double transfer_us = 0;        // of which hand-over to and from the CPU
  int64_t dram_bytes = 0;        // all runs (the simulated unit's, + extra_bytes)
  std::string bound;             // compute, bandwidth, latency, sync (of the unit that runs it)
  std::string unit = "npu";      // npu, or cpu when it fell back
  std::string fallback_reason;   // why, when it fell back
  std::string note;
  double share = 0;              // of the pass's time
};

struct PassResult {
  std::vector<OpRow> rows;
  double time_us = 0;
  int64_t dram_bytes = 0;
  double fallback_time_us = 0;   // CPU time + transfers of the rows that fell back
  int64_t fallback_bytes = 0;    // their DRAM bytes
  double fallback_time_share() const { return time_us > 0 ? fallback_time_us / time_us : 0; }
  double fallback_byte_share() const { return dram_bytes > 0 ? static_cast<double>(fallback_bytes) / static_cast<double>(dram_bytes) : 0; }
  // More than kFallbackFlag of the time or of the bytes on the CPU.
  bool fallback_flagged() const;
};

struct Plan {
  std::string model, arch, fallback_arch;
  PlanRequest request;
  PassResult decode, prefill;    // prefill: empty when --prompt 0
  MemoryPlan memory;
  double token_time_us = 0;      // one decode step: one new token for each of the batch's sequences
  double tokens_per_s = 0;       // batch / step time
  double prefill_time_us = 0;    // the prompt's pass: time to first token
  std::vector<std::string> notes;
};

// Above this share of time or bytes on the CPU the NPU is not worth it (the 20%).
constexpr double kFallbackFlag = 0.20;
inline bool PassResult::fallback_flagged() const {
  return fallback_time_share() > kFallbackFlag || fallback_byte_share() > kFallbackFlag;
}
// One hand-over between the NPU and the CPU (a driver round trip, caches flushed):
// assumed, 10 us each way.
constexpr double kHandoverUs = 10.0;

// std::invalid_argument naming the setting when a stage cannot be planned, or what
// overflows the arch's dram.bytes by how much when the memory plan does not fit.
Plan make_plan(const PlanRequest& r, const sim::ArchSpec& npu, const sim::ArchSpec& cpu);

// How many distinct stage simulations ran in this process (tests check the cache).
int64_t stage_simulations();

}  // namespace npukit::decode
