#include "simulator/report/trace.h"

#include <nlohmann/json.hpp>

#include "simulator/report/text_file.h"

namespace npukit::sim {

std::string trace_json(const SimResult& s) {
  // Track ids start at 1: some viewers treat tid 0 as "no thread".
  auto tid = [](Pipe p) { return static_cast<int>(p) + 1; };
  const double us_per_cycle = 1.0 / (s.arch.clock_ghz * 1e3);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0},
                    {"args", {{"name", "npukit sim: " + s.analysis.op + " on " + s.arch.name + " (busiest core)"}}}});
  for (Pipe p : kPipes) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid(p)}, {"args", {{"name", to_string(p)}}}});
    events.push_back(
        {{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", tid(p)}, {"args", {{"sort_index", tid(p)}}}});
  }
  for (const Interval& i : s.cost.timeline) {
    events.push_back({{"name", i.name},
                      {"cat", to_string(i.pipe)},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", tid(i.pipe)},
                      {"ts", static_cast<double>(i.start_cycle) * us_per_cycle},
                      {"dur", static_cast<double>(i.end_cycle - i.start_cycle) * us_per_cycle},
                      {"args", {{"start_cycle", i.start_cycle}, {"end_cycle", i.end_cycle}}}});
  }
  nlohmann::json trace = {{"traceEvents", events},
                          {"displayTimeUnit", "ns"},
                          {"otherData",
                           {{"op", s.analysis.op},
                            {"arch", s.arch.name},
                            {"total_cycles", s.cost.total_cycles},
                            {"bound", to_string(s.cost.bound)}}}};
  return trace.dump(1) + "\n";
}

void write_trace(const SimResult& s, const std::string& path) { write_text_file(path, trace_json(s), "trace"); }

}  // namespace npukit::sim
