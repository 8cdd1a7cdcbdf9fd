#include <algorithm>
#include <map>
#include <ostream>

#include "tools/gate/reports.h"

namespace npukit::gate {

void print_table(std::ostream& os, const std::vector<CaseResult>& results) {
  const std::vector<std::string> head = {"op", "target", "dtype", "class", "case", "status", "deciding metric"};
  std::vector<std::vector<std::string>> rows;
  for (const CaseResult& r : results) {
    std::string metric = r.summary;
    if (!r.error.empty() && r.status != golden::Status::pass) metric += ": " + r.error;
    if (metric.size() > 90) metric = metric.substr(0, 87) + "...";
    rows.push_back({r.op, r.target, r.dtype, r.input_class,
                    (r.case_index >= 0 ? std::to_string(r.case_index) + " " : "") + r.case_name,
                    std::string(golden::status_name(r.status)), metric});
  }
  std::vector<size_t> width(head.size());
  for (size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      os << cells[i];
      if (i + 1 < cells.size()) os << std::string(width[i] - cells[i].size() + 2, ' ');
    }
    os << '\n';
  };
  line(head);
  for (const auto& row : rows) line(row);

  bool any = false;
  for (const CaseResult& r : results) {
    if (r.status == golden::Status::pass || r.status == golden::Status::unsupported) continue;
    if (!any) os << "\nrepro:\n";
    any = true;
    os << "  " << r.repro << "    # " << golden::status_name(r.status) << " " << r.summary << '\n';
  }
  os << '\n';
  print_totals(os, results);
}

}  // namespace npukit::gate
