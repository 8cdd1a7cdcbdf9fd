#include "simulator/report/json_report.h"

#include <nlohmann/json.hpp>

namespace npukit::sim {

nlohmann::json violation_to_json(const Violation& v) {
  nlohmann::json j = {{"rule", v.rule},       {"op", v.op},       {"func", v.func},
                      {"loop", v.loop},       {"value", v.value}, {"limit", v.limit},
                      {"message", v.message}, {"suggestion", v.suggestion},
                      {"severity", to_string(v.severity)}};
  j["source"] = v.source.known() ? nlohmann::json{{"file", v.source.file}, {"line", v.source.line}} : nlohmann::json();
  return j;
}

// What the lowering pass found: the facts every number above is computed from.
nlohmann::json analysis_to_json(const OpAnalysis& a) {
  nlohmann::json loops = nlohmann::json::array(), allocs = nlohmann::json::array(),
                 transfers = nlohmann::json::array(), matrix = nlohmann::json::array(),
                 vector = nlohmann::json::array();
  for (const LoopInfo& l : a.loops)
    loops.push_back({{"name", l.name}, {"min", l.min}, {"extent", l.extent}, {"depth", l.depth}, {"parallel", l.parallel}});
  for (const Allocation& al : a.allocations) {
    std::vector<std::string> readers;
    for (Unit u : al.readers) readers.push_back(to_string(u));
    allocs.push_back({{"func", al.func}, {"buffer", al.buffer}, {"loop", al.loop}, {"bytes", al.bytes},
                      {"double_buffered", al.double_buffered}, {"readers", readers}});
  }
  for (const Transfer& t : a.transfers) {
    transfers.push_back({{"func", t.func}, {"tensor", t.tensor}, {"buffer", t.buffer}, {"loop", t.loop},
                         {"direction", t.direction == Direction::in ? "in" : "out"}, {"count", t.count},
                         {"rows", t.rows}, {"row_bytes", t.row_bytes}, {"stride_bytes", t.stride_bytes},
                         {"base_alignment", t.base_alignment}, {"double_buffered", t.double_buffered}});
    if (t.fractal_row_bytes > 0) {  // staged in NZ fractals: the K run is cut into fractal rows
      transfers.back()["fractal_row_bytes"] = t.fractal_row_bytes;
      transfers.back()["k_run_bytes"] = t.k_run_bytes;
    }
  }
  for (const MatrixWork& w : a.matrix)
    matrix.push_back({{"func", w.func}, {"dtype", to_string(w.dtype)}, {"count", w.count}, {"m", w.m}, {"n", w.n},
                      {"k", w.k}, {"useful_macs", w.useful_macs}});
  for (const VectorWork& v : a.vector) {
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [cls, n] : v.ops) ops[to_string(cls)] = n;
    vector.push_back({{"func", v.func}, {"buffer", v.buffer}, {"dtype", to_string(v.dtype)}, {"lanes", v.lanes},
                      {"elements", v.elements}, {"ops", ops}, {"access_alignment", v.access_alignment}});
  }
  return {{"tile_loop", a.tile_loop}, {"tiles", a.tiles}, {"parallel_extent", a.parallel_extent},
          {"loops", loops}, {"allocations", allocs}, {"transfers", transfers}, {"matrix", matrix},
          {"vector", vector}};
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
  nlohmann::json schedule = nlohmann::json::object();
  for (const auto& [name, v] : s.analysis.schedule) schedule[name] = v;
  return {
      {"op", s.analysis.op},
      {"shape", shape},
      {"schedule", schedule},
      {"dtype", to_string(s.analysis.dtype)},
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
      {"analysis", analysis_to_json(s.analysis)},
  };
}

nlohmann::json to_json(const StagedResult& r) {
  // The total as one simulation (the sum of the stages), without the merged analysis,
  // which is the stages' own analyses side by side.
  nlohmann::json j = to_json(r.total);
  j.erase("analysis");
  j["dtype"] = r.dtype;
  nlohmann::json stages = nlohmann::json::array();
  for (const StageSimulation& s : r.stages) {
    nlohmann::json x = to_json(s.result);
    x["label"] = s.label;
    stages.push_back(std::move(x));
  }
  j["stages"] = stages;
  nlohmann::json mids = nlohmann::json::array();
  for (const IntermediateTraffic& m : r.intermediates)
    mids.push_back({{"name", m.name},
                    {"bytes", m.bytes},
                    {"producer", m.producer},
                    {"consumers", m.consumers},
                    {"written", m.written},
                    {"read", m.read},
                    {"buffers", m.buffers},
                    {"fits_on_chip", m.fits},
                    {"why_not", m.why}});
  j["intermediates"] = mids;
  j["fusion"] = {{"intermediate_bytes", r.intermediate_bytes()},
                 {"saved_bytes", r.fusable_bytes()},
                 {"saved_cycles_at_most", r.fusable_cycles()},
                 {"simulated", "the sequence of stages; the saving is the intermediates' transfers a fused pipeline "
                               "keeping those that fit on chip would remove"}};
  return j;
}

}  // namespace npukit::sim
