// The default report: one line per op × dtype with a cell per target, so that a run of
// thousands of cases reads in a screen; then only what needs a person (each case that did
// not pass, with the line that reruns it), then the totals.
#include <algorithm>
#include <map>
#include <ostream>

#include "tools/gate/reports.h"
#include "tools/gate/summary.h"

namespace npukit::gate {
namespace {

void print_columns(std::ostream& os, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << '\n';
  }
}

std::string cell_text(const CellSummary& c) {
  const std::string worst = worst_text(c);
  return counts_text(c) + (worst.empty() ? "" : "  " + worst);
}

}  // namespace

void print_totals(std::ostream& os, const std::vector<CaseResult>& results) {
  std::map<std::string, int> counts;
  for (const CaseResult& r : results) counts[std::string(golden::status_name(r.status))]++;
  os << results.size() << " cases:";
  for (const auto& [status, n] : counts) os << ' ' << status << ' ' << n;
  os << '\n';
}

void print_matrix(std::ostream& os, const std::vector<CaseResult>& results) {
  const Matrix m = summarize(results);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"op", "dtype"});
  for (const std::string& t : m.targets) rows[0].push_back(t);
  for (const MatrixRow& row : m.rows) {
    std::vector<std::string> line = {row.op, row.dtype};
    for (const std::string& t : m.targets) {
      auto it = row.by_target.find(t);
      line.push_back(it == row.by_target.end() ? "-" : cell_text(it->second));
    }
    rows.push_back(std::move(line));
  }
  os << "each cell: cases by status, then the worst metric over them / its limit\n";
  print_columns(os, rows);

  bool any = false;
  for (const CaseResult& r : results) {
    if (r.status == golden::Status::pass || r.status == golden::Status::unsupported) continue;
    if (!any) os << "\nnot passed:\n";
    any = true;
    std::string what = r.summary;
    if (!r.error.empty()) what += (what.empty() ? "" : ": ") + r.error;
    os << "  " << golden::status_name(r.status) << ' ' << r.op << ' ' << r.target << ' ' << r.dtype << ' '
       << r.input_class << ' ' << (r.case_index >= 0 ? std::to_string(r.case_index) + " " : "") << r.case_name
       << ": " << what << "\n    " << r.repro << '\n';
  }
  // UNSUPPORTED passes; its reasons, once each, say what was not checked.
  std::vector<std::string> reasons;
  std::map<std::string, int> per_reason;
  for (const CaseResult& r : results) {
    if (r.status != golden::Status::unsupported) continue;
    const std::string key = r.op + " on " + r.target + ": " + r.error.substr(0, r.error.find('\n'));
    if (per_reason[key]++ == 0) reasons.push_back(key);
  }
  if (!reasons.empty()) os << "\nunsupported (not checked):\n";
  for (const std::string& k : reasons) os << "  " << k << " (" << per_reason[k] << " cases)\n";
  os << '\n';
  print_totals(os, results);
}

}  // namespace npukit::gate
