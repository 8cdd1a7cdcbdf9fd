// Text reports of a simulation: a full table for one op, and one summary row per op for
// the table of a whole model that the CLI prints.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "simulator/simulate.h"
#include "simulator/staged_result.h"

namespace npukit::sim {

// "K=4096 M=1 N=4096": named dims, sorted by name ("-" for none).
std::string format_shape(const std::map<std::string, int64_t>& shape);
// The analysis's shape, as above.
inline std::string format_shape(const OpAnalysis& analysis) { return format_shape(analysis.shape); }

// Op, shape, arch, cycles and time, bound and critical-path split, per-unit busy cycles
// and utilization, DRAM bytes, MACs, roofline figures, notes, violations with their fixes.
std::string format_table(const SimResult& result);

// The multi-op table: a header line, then one line per op (op, dtype, shape, cycles,
// time, bound, the busiest unit and its utilization, DRAM bytes, errors / warnings), each
// column as wide as its widest cell.
class SummaryTable {
 public:
  SummaryTable();
  void add(const SimResult& result);
  // A composite's total row (its dtype as the schedule names it).
  void add(const StagedResult& result);
  std::string str() const;

 private:
  std::vector<std::vector<std::string>> rows_;  // the header first
};
// A composite schedule's report: one row per stage and the total, the intermediates'
// DRAM traffic and which would fit on chip, what a fusion would save, the violations.
std::string format_stages(const StagedResult& result);

}  // namespace npukit::sim
