#include "simulator/staged_result.h"

#include <algorithm>
#include <cmath>

namespace npukit::sim {

int64_t StagedResult::intermediate_bytes() const {
  int64_t b = 0;
  for (const IntermediateTraffic& t : intermediates) b += t.traffic();
  return b;
}

int64_t StagedResult::fusable_bytes() const {
  int64_t b = 0;
  for (const IntermediateTraffic& t : intermediates)
    if (t.fits) b += t.traffic();
  return b;
}

int64_t StagedResult::fusable_cycles() const {
  const double per_cycle = total.arch.dram_bytes_per_cycle_per_core() * static_cast<double>(total.arch.cores);
  return per_cycle > 0 ? static_cast<int64_t>(std::ceil(static_cast<double>(fusable_bytes()) / per_cycle)) : 0;
}

void sum_stages(StagedResult& r, const std::map<std::string, int64_t>& shape, Dtype dtype) {
  SimResult& t = r.total;
  t = SimResult{};
  t.analysis.op = r.op;
  t.analysis.shape = shape;
  t.analysis.dtype = dtype;
  CriticalPath& cp = t.cost.critical_path;
  for (const StageSimulation& s : r.stages) {
    const SimResult& x = s.result;
    t.arch = x.arch;
    const OpAnalysis& a = x.analysis;
    t.analysis.transfers.insert(t.analysis.transfers.end(), a.transfers.begin(), a.transfers.end());
    t.analysis.matrix.insert(t.analysis.matrix.end(), a.matrix.begin(), a.matrix.end());
    t.analysis.vector.insert(t.analysis.vector.end(), a.vector.begin(), a.vector.end());
    const CostReport& c = x.cost;
    t.cost.total_cycles += c.total_cycles;
    t.cost.time_us += c.time_us;
    for (size_t p = 0; p < c.busy_cycles.size(); ++p) t.cost.busy_cycles[p] += c.busy_cycles[p];
    cp.compute += c.critical_path.compute, cp.bandwidth += c.critical_path.bandwidth;
    cp.latency += c.critical_path.latency, cp.sync += c.critical_path.sync;
    t.cost.dram_bytes += c.dram_bytes;
    t.cost.macs += c.macs;
    t.cost.cores_used = std::max(t.cost.cores_used, c.cores_used);
    t.cost.roofline.ops += c.roofline.ops;
    for (Violation v : x.violations) {
      v.func = s.label + ": " + v.func;
      t.violations.push_back(std::move(v));
    }
  }
  for (size_t p = 0; p < t.cost.busy_cycles.size(); ++p)
    t.cost.utilization[p] = t.cost.total_cycles > 0 ? double(t.cost.busy_cycles[p]) / double(t.cost.total_cycles) : 0;
  // The bound of the sum: what most of its critical path waits for.
  const std::pair<int64_t, Bound> parts[] = {
      {cp.compute, Bound::compute}, {cp.bandwidth, Bound::bandwidth}, {cp.latency, Bound::latency}, {cp.sync, Bound::sync}};
  t.cost.bound = std::max_element(std::begin(parts), std::end(parts))->second;
  t.cost.dram_latency_cycles = r.stages.empty() ? 0 : r.stages.front().result.cost.dram_latency_cycles;
  if (t.cost.dram_bytes > 0) t.cost.roofline.arithmetic_intensity = t.cost.roofline.ops / double(t.cost.dram_bytes);
  if (t.cost.time_us > 0) t.cost.roofline.achieved_ops_per_second = t.cost.roofline.ops / (t.cost.time_us * 1e-6);
  t.cost.notes.push_back("the sum of " + std::to_string(r.stages.size()) +
                         " stages run one after another, each as its own NPU schedule; intermediates go through DRAM");
}

}  // namespace npukit::sim
