#include "simulator/report/json_report.h"

#include <nlohmann/json.hpp>

namespace npukit::sim {

nlohmann::json violation_to_json(const Violation& v) {
  return {{"rule", v.rule},         {"op", v.op},       {"func", v.func},
          {"loop", v.loop},         {"value", v.value}, {"limit", v.limit},
          {"message", v.message},   {"suggestion", v.suggestion},
          {"severity", to_string(v.severity)}};
}

nlohmann::json to_json(const SimResult& s) {
  const CostReport& c = s.cost;
  nlohmann::json units = nlohmann::json::object();
  for (Pipe p : kPipes) units[to_string(p)] = {{"busy_cycles", c.busy(p)}, {"utilization", c.util(p)}};
  nlohmann::json roofs = nlohmann::json::array();
  for (const Roof& r : c.roofline.roofs) roofs.push_back({{"label", r.label}, {"ops_per_second", r.ops_per_second}});
  nlohmann::json violations = nlohmann::json::array();
  for (const Violation& v : s.violations) violations.push_back(violation_to_json(v));
  const int64_t errors = count_errors(s.violations);
  nlohmann::json shape = nlohmann::json::object();
  for (const auto& [name, v] : s.analysis.shape) shape[name] = v;
  return {
      {"op", s.analysis.op},
      {"shape", shape},
      {"arch", s.arch.name},
      {"total_cycles", c.total_cycles},
      {"time_us", c.time_us},
      {"bound", to_string(c.bound)},
      {"critical_path",
       {{"compute", c.critical_path.compute},
        {"bandwidth", c.critical_path.bandwidth},
        {"latency", c.critical_path.latency},
        {"sync", c.critical_path.sync}}},
      {"cores_used", c.cores_used},
      {"iterations", c.iterations},
      {"double_buffered", c.double_buffered},
      {"prologue_cycles", c.prologue_cycles},
      {"iteration_cycles", c.iteration_cycles},
      {"epilogue_cycles", c.epilogue_cycles},
      {"dram_latency_cycles", c.dram_latency_cycles},
      {"dram_bytes", c.dram_bytes},
      {"macs", c.macs},
      {"units", units},
      {"roofline",
       {{"ops", c.roofline.ops},
        {"arithmetic_intensity", c.roofline.arithmetic_intensity},
        {"peak_ops_per_second", c.roofline.peak_ops_per_second},
        {"bandwidth_bytes_per_second", c.roofline.bandwidth_bytes_per_second},
        {"attainable_ops_per_second", c.roofline.attainable_ops_per_second},
        {"achieved_ops_per_second", c.roofline.achieved_ops_per_second},
        {"roofs", roofs}}},
      {"notes", c.notes},
      {"errors", errors},
      {"warnings", static_cast<int64_t>(s.violations.size()) - errors},
      {"violations", violations},
  };
}

}  // namespace npukit::sim
