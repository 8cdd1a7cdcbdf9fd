#include "simulator/report/table.h"

#include <algorithm>
#include <vector>

#include "runtime/message.h"

namespace npukit::sim {
namespace {

// 1234567 -> "1,234,567": cycle and byte counts are read by eye.
std::string grouped(int64_t v) {
  std::string digits = fmt::format("{}", v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

// 6.144e12 -> "6.14 T": ops/s and bytes/s across many orders of magnitude.
std::string si(double v) {
  const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
  int i = 0;
  while (v >= 1000 && i < 5) v /= 1000, ++i;
  return fixed(v, v < 10 ? 2 : v < 100 ? 1 : 0) + prefixes[i];
}

std::string pct(double share) { return fixed(share * 100, 1) + "%"; }

// Columns of `width`; a value as wide or wider keeps one space from its neighbour.
std::string pad(std::string s, size_t width) {
  s.append(s.size() < width ? width - s.size() : 1, ' ');
  return s;
}

std::string rpad(const std::string& s, size_t width) {
  return std::string(s.size() < width ? width - s.size() : 1, ' ') + s;
}

// The violations block that ends both the single-op and the staged table.
void append_violations(std::string& o, const std::vector<Violation>& violations) {
  const int64_t errors = count_errors(violations);
  const int64_t warnings = static_cast<int64_t>(violations.size()) - errors;
  append(o, "\nviolations  {} {}, {} {}\n", errors, errors == 1 ? "error" : "errors", warnings,
         warnings == 1 ? "warning" : "warnings");
  for (const Violation& v : violations) {
    append(o, "  {}{} [{}] {}{}: {}\n", v.source.known() ? v.source.text() + ": " : "", to_string(v.severity), v.rule,
           v.func, v.loop.empty() ? "" : " @ " + v.loop, v.message);
    append(o, "    fix: {}\n", v.suggestion);
  }
}

}  // namespace

std::string format_shape(const std::map<std::string, int64_t>& shape) {
  std::string out;
  for (const auto& [name, v] : shape) append(out, "{}{}={}", out.empty() ? "" : " ", name, v);
  return out.empty() ? "-" : out;
}

std::string format_table(const SimResult& s) {
  const CostReport& c = s.cost;
  std::string o;
  append(o, "op          {} {} ({})\n", s.analysis.op, to_string(s.analysis.dtype), format_shape(s.analysis));
  if (!s.analysis.schedule.empty()) {
    o += "schedule   ";
    for (const auto& [name, v] : s.analysis.schedule) append(o, " {}={}", name, v);
    o += "\n";
  }
  const char* cores = s.arch.cores == 1 ? "core" : "cores";
  append(o, "arch        {} ({} {}, {:.2f} GHz)\n", s.arch.name, s.arch.cores, cores, s.arch.clock_ghz);
  append(o, "cycles      {} = {:.3f} us on {} of {} {}; {} tile iteration{} on the busiest core{}\n",
         grouped(c.total_cycles), c.time_us, c.cores_used, s.arch.cores, cores, grouped(c.iterations),
         c.iterations == 1 ? "" : "s", c.double_buffered ? ", double-buffered" : "");
  append(o, "            prologue {} + {} x {} + epilogue {}\n", grouped(c.prologue_cycles), grouped(c.iterations),
         grouped(c.iteration_cycles), grouped(c.epilogue_cycles));
  const double total = static_cast<double>(std::max<int64_t>(1, c.total_cycles));
  append(o, "bound       {} (critical path: compute {}, bandwidth {}, latency {}, sync {})\n", to_string(c.bound),
         pct(c.critical_path.compute / total), pct(c.critical_path.bandwidth / total),
         pct(c.critical_path.latency / total), pct(c.critical_path.sync / total));
  append(o, "\n{}{}{}\n", pad("unit", 10), rpad("busy cycles", 14), rpad("util", 9));
  for (Pipe p : kPipes) append(o, "{}{}{}\n", pad(to_string(p), 10), rpad(grouped(c.busy(p)), 14), rpad(pct(c.util(p)), 9));
  const Roofline& r = c.roofline;
  append(o, "\ndram bytes  {}\n", grouped(c.dram_bytes));
  append(o, "macs        {}\n", grouped(c.macs));
  append(o, "roofline    AI {:.2f} ops/B; peak {}ops/s, DRAM {}B/s; attainable {}ops/s, achieved {}ops/s",
         r.arithmetic_intensity, si(r.peak_ops_per_second), si(r.bandwidth_bytes_per_second),
         si(r.attainable_ops_per_second), si(r.achieved_ops_per_second));
  if (r.attainable_ops_per_second > 0) append(o, " ({})", pct(r.achieved_ops_per_second / r.attainable_ops_per_second));
  o += "\n";
  for (const std::string& note : c.notes) append(o, "note        {}\n", note);
  append_violations(o, s.violations);
  return o;
}

namespace {

// The summary's columns after the first two (op and dtype, or stage and op); numbers right.
const std::vector<std::string> kSummaryHeads = {"shape",        "cycles",     "time us",   "bound",
                                                "busiest unit", "DRAM bytes", "violations"};
const std::vector<bool> kSummaryRight = {false, false, false, true, true, false, false, true, false};

std::vector<std::string> summary_cells(const std::string& first, const std::string& second, const std::string& shape,
                                       const SimResult& s) {
  const CostReport& c = s.cost;
  const Pipe b = c.busiest();
  const int64_t errors = count_errors(s.violations);
  const int64_t warnings = static_cast<int64_t>(s.violations.size()) - errors;
  return {first,
          second,
          shape,
          grouped(c.total_cycles),
          fixed(c.time_us, 3),
          to_string(c.bound),
          fmt::format("{} {}", to_string(b), pct(c.util(b))),
          grouped(s.analysis.dram_bytes()),
          fmt::format("{} E, {} W", errors, warnings)};
}

// Columns as wide as their widest cell, two spaces apart: a long shape (attention's five
// dims) pushes its column out instead of the columns after it.
std::string render(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string o;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) line += "  ";
      const bool last = i + 1 == row.size();
      const std::string fill(width[i] - row[i].size(), ' ');
      line += right[i] ? fill + row[i] : last ? row[i] : row[i] + fill;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    o += line + "\n";
  }
  return o;
}

std::vector<std::string> heads(const char* first, const char* second) {
  std::vector<std::string> h = {first, second};
  h.insert(h.end(), kSummaryHeads.begin(), kSummaryHeads.end());
  return h;
}

}  // namespace

SummaryTable::SummaryTable() { rows_.push_back(heads("op", "dtype")); }

void SummaryTable::add(const SimResult& s) {
  rows_.push_back(summary_cells(s.analysis.op, to_string(s.analysis.dtype), format_shape(s.analysis), s));
}

void SummaryTable::add(const StagedResult& r) {
  rows_.push_back(summary_cells(r.op, r.dtype, format_shape(r.total.analysis), r.total));
}

std::string SummaryTable::str() const { return render(rows_, kSummaryRight); }

std::string format_stages(const StagedResult& r) {
  std::string o;
  const SimResult& t = r.total;
  append(o, "op          {} {} {} on {}, {} stages in sequence, each its own NPU schedule\n\n", r.op, r.dtype,
         format_shape(t.analysis), t.arch.name, r.stages.size());
  std::vector<std::vector<std::string>> rows = {heads("stage", "op")};
  for (const StageSimulation& s : r.stages)
    rows.push_back(summary_cells(s.label, s.op, format_shape(s.result.analysis), s.result));
  rows.push_back(summary_cells("total", "", "", t));
  o += render(rows, kSummaryRight) + "\n";
  o += "intermediates (DRAM tensors between stages; written + read back):\n";
  for (const IntermediateTraffic& m : r.intermediates) {
    std::string consumers;
    for (const std::string& c : m.consumers) consumers += (consumers.empty() ? "" : ", ") + c;
    append(o, "  {}{} B  {} traffic {} B  {}\n", pad(m.name, 12), rpad(grouped(m.bytes), 12),
           pad(m.producer + " -> " + consumers, 52), rpad(grouped(m.traffic()), 12),
           m.fits ? "fits on chip" : "stays in DRAM: " + m.why);
  }
  const int64_t all = r.intermediate_bytes(), fusable = r.fusable_bytes();
  const int64_t moved = t.analysis.dram_bytes();
  append(o,
         "fusion      intermediates move {} B of the sequence's {} B ({}); a fused pipeline keeping those that fit on "
         "chip would save {} B, at most {} cycles of DRAM time (not simulated: the sequence is)\n",
         grouped(all), grouped(moved), pct(moved > 0 ? double(all) / double(moved) : 0), grouped(fusable),
         grouped(r.fusable_cycles()));
  append_violations(o, t.violations);
  return o;
}

}  // namespace npukit::sim
