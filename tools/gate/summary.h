// The gate's results summed per op × dtype × target, and per input class within each:
// what the default report (print_matrix) and the HTML page (write_html) show.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/gate/gate.h"

namespace npukit::gate {

struct CellSummary {
  std::map<golden::Status, int> counts;
  int total = 0;
  // The verdict nearest to (or furthest past) its limit over every output of every case;
  // fraction = value ÷ limit, infinite past a zero limit. None when no case compared anything.
  bool has_worst = false;
  golden::Verdict worst;
  double fraction = 0;

  void add(const CaseResult& r);
  golden::Status worst_status() const;  // the most severe status counted
  bool passed() const;                  // only PASS and UNSUPPORTED
};

struct MatrixRow {
  std::string op, dtype;
  std::map<std::string, CellSummary> by_target;
  std::map<std::string, std::map<std::string, CellSummary>> by_target_class;  // target → class
};

struct Matrix {
  std::vector<std::string> targets;  // in the order the results name them
  std::vector<std::string> classes;  // golden::kInputClasses order, those present
  std::vector<MatrixRow> rows;       // op × dtype, in the order of the results
};

Matrix summarize(const std::vector<CaseResult>& results);

// value ÷ limit of a verdict; 0 for 0 ÷ 0, +inf for x ÷ 0 and for NaN.
double limit_fraction(const golden::Verdict& v);
// The statuses in report order (PASS first, UNSUPPORTED last).
const std::vector<golden::Status>& report_statuses();
// "PASS 63 FAIL 1": the nonzero counts.
std::string counts_text(const CellSummary& c);
// "max_rel 3.1e-06/1e-05", or "" without a worst verdict.
std::string worst_text(const CellSummary& c);

}  // namespace npukit::gate
