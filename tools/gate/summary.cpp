#include "tools/gate/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/message.h"

namespace npukit::gate {

const std::vector<golden::Status>& report_statuses() {
  using S = golden::Status;
  static const std::vector<S> order = {S::pass, S::fail, S::mistrusted, S::nondeterministic, S::crashed, S::unsupported};
  return order;
}

double limit_fraction(const golden::Verdict& v) {
  if (std::isnan(v.value) || std::isnan(v.limit)) return std::numeric_limits<double>::infinity();
  if (v.limit == 0) return v.value == 0 ? 0 : std::numeric_limits<double>::infinity();
  return std::fabs(v.value / v.limit);
}

void CellSummary::add(const CaseResult& r) {
  counts[r.status]++;
  ++total;
  for (const OutputResult& o : r.outputs) {
    const double f = limit_fraction(o.verdict);
    if (has_worst && !(f > fraction)) continue;
    has_worst = true;
    worst = o.verdict;
    fraction = f;
  }
}

golden::Status CellSummary::worst_status() const {
  // Crash first, then the failures, then MISTRUSTED, PASS; UNSUPPORTED only when alone.
  using S = golden::Status;
  for (S s : {S::crashed, S::fail, S::nondeterministic, S::mistrusted, S::pass, S::unsupported}) {
    if (counts.count(s)) return s;
  }
  return S::unsupported;
}

bool CellSummary::passed() const {
  for (const auto& [s, n] : counts) {
    if (s != golden::Status::pass && s != golden::Status::unsupported) return false;
  }
  return true;
}

namespace {

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

}  // namespace

Matrix summarize(const std::vector<CaseResult>& results) {
  Matrix m;
  std::vector<std::string> seen_classes;
  for (const CaseResult& r : results) {
    add_unique(m.targets, r.target);
    add_unique(seen_classes, r.input_class);
    auto row = std::find_if(m.rows.begin(), m.rows.end(),
                            [&](const MatrixRow& x) { return x.op == r.op && x.dtype == r.dtype; });
    if (row == m.rows.end()) row = m.rows.insert(m.rows.end(), MatrixRow{r.op, r.dtype, {}, {}});
    row->by_target[r.target].add(r);
    row->by_target_class[r.target][r.input_class].add(r);
  }
  for (const std::string& c : golden::input_class_names()) {
    if (std::find(seen_classes.begin(), seen_classes.end(), c) != seen_classes.end()) m.classes.push_back(c);
  }
  return m;
}

std::string counts_text(const CellSummary& c) {
  std::string s;
  for (golden::Status st : report_statuses()) {
    auto it = c.counts.find(st);
    if (it == c.counts.end()) continue;
    append(s, "{}{} {}", s.empty() ? "" : " ", golden::status_name(st), it->second);
  }
  return s;
}

std::string worst_text(const CellSummary& c) {
  if (!c.has_worst) return "";
  return fmt::format("{} {:.3g}/{:.2g}", c.worst.metric, c.worst.value, c.worst.limit);
}

}  // namespace npukit::gate
