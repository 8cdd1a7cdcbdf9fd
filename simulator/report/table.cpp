#include "simulator/report/table.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace npukit::sim {
namespace {

// 1234567 -> "1,234,567": cycle and byte counts are read by eye.
std::string grouped(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

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

}  // namespace

std::string format_shape(const std::map<std::string, int64_t>& shape) {
  std::string out;
  for (const auto& [name, v] : shape) out += (out.empty() ? "" : " ") + name + "=" + std::to_string(v);
  return out.empty() ? "-" : out;
}

std::string format_table(const SimResult& s) {
  const CostReport& c = s.cost;
  std::ostringstream o;
  o << "op          " << s.analysis.op << " " << to_string(s.analysis.dtype) << " (" << format_shape(s.analysis) << ")\n";
  if (!s.analysis.schedule.empty()) {
    o << "schedule   ";
    for (const auto& [name, v] : s.analysis.schedule) o << " " << name << "=" << v;
    o << "\n";
  }
  o << "arch        " << s.arch.name << " (" << s.arch.cores << (s.arch.cores == 1 ? " core" : " cores") << ", "
    << fixed(s.arch.clock_ghz, 2) << " GHz)\n";
  o << "cycles      " << grouped(c.total_cycles) << " = " << fixed(c.time_us, 3) << " us on " << c.cores_used << " of "
    << s.arch.cores << (s.arch.cores == 1 ? " core" : " cores") << "; " << grouped(c.iterations) << " tile iteration"
    << (c.iterations == 1 ? "" : "s") << " on the busiest core" << (c.double_buffered ? ", double-buffered" : "") << "\n";
  o << "            prologue " << grouped(c.prologue_cycles) << " + " << grouped(c.iterations) << " x "
    << grouped(c.iteration_cycles) << " + epilogue " << grouped(c.epilogue_cycles) << "\n";
  const double total = static_cast<double>(std::max<int64_t>(1, c.total_cycles));
  o << "bound       " << to_string(c.bound) << " (critical path: compute " << pct(c.critical_path.compute / total)
    << ", bandwidth " << pct(c.critical_path.bandwidth / total) << ", latency " << pct(c.critical_path.latency / total)
    << ", sync " << pct(c.critical_path.sync / total) << ")\n";
  o << "\n" << pad("unit", 10) << rpad("busy cycles", 14) << rpad("util", 9) << "\n";
  for (Pipe p : kPipes) o << pad(to_string(p), 10) << rpad(grouped(c.busy(p)), 14) << rpad(pct(c.util(p)), 9) << "\n";
  const Roofline& r = c.roofline;
  o << "\ndram bytes  " << grouped(c.dram_bytes) << "\n";
  o << "macs        " << grouped(c.macs) << "\n";
  o << "roofline    AI " << fixed(r.arithmetic_intensity, 2) << " ops/B; peak " << si(r.peak_ops_per_second)
    << "ops/s, DRAM " << si(r.bandwidth_bytes_per_second) << "B/s; attainable " << si(r.attainable_ops_per_second)
    << "ops/s, achieved " << si(r.achieved_ops_per_second) << "ops/s";
  if (r.attainable_ops_per_second > 0) o << " (" << pct(r.achieved_ops_per_second / r.attainable_ops_per_second) << ")";
  o << "\n";
  for (const std::string& note : c.notes) o << "note        " << note << "\n";
  const int64_t errors = count_errors(s.violations);
  o << "\nviolations  " << errors << (errors == 1 ? " error, " : " errors, ")
    << static_cast<int64_t>(s.violations.size()) - errors << " warning"
    << (s.violations.size() - errors == 1 ? "" : "s") << "\n";
  for (const Violation& v : s.violations) {
    o << "  " << (v.source.known() ? v.source.text() + ": " : "") << to_string(v.severity) << " [" << v.rule << "] "
      << v.func << (v.loop.empty() ? "" : " @ " + v.loop) << ": " << v.message << "\n";
    o << "    fix: " << v.suggestion << "\n";
  }
  return o.str();
}

std::string format_summary_header() {
  return pad("op", 16) + pad("dtype", 8) + pad("shape", 28) + rpad("cycles", 14) + rpad("time us", 12) + "  " + pad("bound", 10) +
         pad("busiest unit", 20) + rpad("DRAM bytes", 14) + "  violations\n";
}

namespace {

std::string summary_row(const std::string& name, const std::string& dtype, const std::string& shape, const SimResult& s) {
  const CostReport& c = s.cost;
  const Pipe b = c.busiest();
  const int64_t errors = count_errors(s.violations);
  const int64_t warnings = static_cast<int64_t>(s.violations.size()) - errors;
  return pad(name, 16) + pad(dtype, 8) + pad(shape, 28) + rpad(grouped(c.total_cycles), 14) +
         rpad(fixed(c.time_us, 3), 12) + "  " + pad(to_string(c.bound), 10) +
         pad(std::string(to_string(b)) + " " + pct(c.util(b)), 20) + rpad(grouped(s.analysis.dram_bytes()), 14) + "  " +
         std::to_string(errors) + " E, " + std::to_string(warnings) + " W\n";
}

}  // namespace

std::string format_summary_row(const SimResult& s) {
  return summary_row(s.analysis.op, to_string(s.analysis.dtype), format_shape(s.analysis), s);
}

std::string format_summary_row(const StagedResult& r) {
  return summary_row(r.op, r.dtype, format_shape(r.total.analysis), r.total);
}

std::string format_stages(const StagedResult& r) {
  std::ostringstream o;
  const SimResult& t = r.total;
  o << "op          " << r.op << " " << r.dtype << " " << format_shape(t.analysis) << " on " << t.arch.name << ", "
    << r.stages.size() << " stages in sequence, each its own NPU schedule\n\n";
  o << pad("stage", 20) + pad("op", 16) + pad("shape", 28) + rpad("cycles", 14) + rpad("time us", 12) + "  " +
           pad("bound", 10) + pad("busiest unit", 20) + rpad("DRAM bytes", 14) + "  violations\n";
  // summary_row's first two columns (op 16, dtype 8) give way to the stage's label and op.
  for (const StageSimulation& s : r.stages)
    o << pad(s.label, 20) << pad(s.op, 16) << summary_row("", "", format_shape(s.result.analysis), s.result).substr(16 + 8);
  o << pad("total", 20) << pad("", 16) << summary_row("", "", "", t).substr(16 + 8) << "\n";
  o << "intermediates (DRAM tensors between stages; written + read back):\n";
  for (const IntermediateTraffic& m : r.intermediates) {
    std::string consumers;
    for (const std::string& c : m.consumers) consumers += (consumers.empty() ? "" : ", ") + c;
    o << "  " << pad(m.name, 12) << rpad(grouped(m.bytes), 12) << " B  " << pad(m.producer + " -> " + consumers, 52)
      << " traffic " << rpad(grouped(m.traffic()), 12) << " B  "
      << (m.fits ? "fits on chip" : "stays in DRAM: " + m.why) << "\n";
  }
  const int64_t all = r.intermediate_bytes(), fusable = r.fusable_bytes();
  o << "fusion      intermediates move " << grouped(all) << " B of the sequence's " << grouped(t.analysis.dram_bytes())
    << " B (" << pct(t.analysis.dram_bytes() > 0 ? double(all) / double(t.analysis.dram_bytes()) : 0)
    << "); a fused pipeline keeping those that fit on chip would save " << grouped(fusable) << " B, at most "
    << grouped(r.fusable_cycles()) << " cycles of DRAM time (not simulated: the sequence is)\n";
  const int64_t errors = count_errors(t.violations);
  o << "\nviolations  " << errors << (errors == 1 ? " error, " : " errors, ")
    << static_cast<int64_t>(t.violations.size()) - errors << " warning"
    << (t.violations.size() - errors == 1 ? "" : "s") << "\n";
  for (const Violation& v : t.violations) {
    o << "  " << (v.source.known() ? v.source.text() + ": " : "") << to_string(v.severity) << " [" << v.rule << "] "
      << v.func << (v.loop.empty() ? "" : " @ " + v.loop) << ": " << v.message << "\n";
    o << "    fix: " << v.suggestion << "\n";
  }
  return o.str();
}

}  // namespace npukit::sim
