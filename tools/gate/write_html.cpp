// The gate's report as one self-contained HTML page (inline CSS, no scripts, no external
// assets), so that CI can publish it as a single artifact: the op × dtype × target matrix
// coloured by worst metric ÷ limit, the same per input class, and every case that did not
// pass with its repro line.
#include <algorithm>
#include <ostream>

#include "runtime/message.h"
#include "tools/gate/reports.h"
#include "tools/gate/summary.h"

namespace npukit::gate {
namespace {

// Green at 0 of the limit to yellow at the limit: how much margin a passing cell has.
// Past the limit, or any failed case, is red; a crash dark red; only UNSUPPORTED grey.
std::string colour(const CellSummary& c) {
  switch (c.worst_status()) {
    case golden::Status::crashed: return "background:#a01830;color:#fff";
    case golden::Status::unsupported: return "background:#e4e4e4;color:#555";
    case golden::Status::pass:
      if (c.fraction <= 1) {
        return fmt::format("background:hsl({},65%,78%)", static_cast<int>(120 - 70 * c.fraction));
      }
      [[fallthrough]];
    default: return "background:#f3a0a0";
  }
}

void cell(std::ostream& os, const CellSummary* c, const std::string& op, const std::string& dtype,
          const std::string& target, const std::string& input_class) {
  if (c == nullptr) {
    os << "<td class=\"none\">-</td>";
    return;
  }
  const std::string fraction = c->has_worst ? fmt::format("{:.3g}", c->fraction) : "";
  os << "<td class=\"cell\" style=\"" << colour(*c) << "\" data-op=\"" << xml_escape(op) << "\" data-dtype=\"" << xml_escape(dtype)
     << "\" data-target=\"" << xml_escape(target) << "\"";
  if (!input_class.empty()) os << " data-class=\"" << xml_escape(input_class) << "\"";
  os << " data-status=\"" << golden::status_name(c->worst_status()) << "\" data-fraction=\"" << fraction
     << "\" title=\"" << xml_escape(c->worst.summary) << "\">" << xml_escape(counts_text(*c));
  const std::string worst = worst_text(*c);
  if (!worst.empty()) os << "<br><small>" << xml_escape(worst) << "</small>";
  os << "</td>";
}

const char* kStyle =
    "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}"
    "td,th{border:1px solid #999;padding:3px 6px;font-size:13px;vertical-align:top}th{background:#eee}"
    "td.none{color:#999;text-align:center}code{font-size:12px}small{color:#333}";

}  // namespace

void write_html(std::ostream& os, const std::vector<CaseResult>& results) {
  const Matrix m = summarize(results);
  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>npukit gate</title><style>" << kStyle
     << "</style></head><body>\n<h1>npukit gate</h1>\n";
  std::map<golden::Status, int> totals;
  for (const CaseResult& r : results) totals[r.status]++;
  os << "<p id=\"totals\">" << results.size() << " cases:";
  for (golden::Status s : report_statuses()) {
    if (totals.count(s)) os << ' ' << golden::status_name(s) << ' ' << totals[s];
  }
  os << " &mdash; exit code " << exit_code(results) << "</p>\n";
  os << "<p>Each cell: the cases by status, then the worst metric over them against its limit. Colour: green "
        "far below the limit, yellow at it, red past it or with a failed case, dark red a crash, grey nothing "
        "runnable (UNSUPPORTED).</p>\n";

  os << "<h2>Matrix</h2>\n<table id=\"matrix\"><tr><th>op</th><th>dtype</th>";
  for (const std::string& t : m.targets) os << "<th>" << xml_escape(t) << "</th>";
  os << "</tr>\n";
  for (const MatrixRow& row : m.rows) {
    os << "<tr><th>" << xml_escape(row.op) << "</th><th>" << xml_escape(row.dtype) << "</th>";
    for (const std::string& t : m.targets) {
      auto it = row.by_target.find(t);
      cell(os, it == row.by_target.end() ? nullptr : &it->second, row.op, row.dtype, t, "");
    }
    os << "</tr>\n";
  }
  os << "</table>\n";

  os << "<h2>By input class</h2>\n<table id=\"classes\"><tr><th>op</th><th>dtype</th><th>target</th>";
  for (const std::string& c : m.classes) os << "<th>" << xml_escape(c) << "</th>";
  os << "</tr>\n";
  for (const MatrixRow& row : m.rows) {
    for (const std::string& t : m.targets) {
      auto by_class = row.by_target_class.find(t);
      if (by_class == row.by_target_class.end()) continue;
      os << "<tr><th>" << xml_escape(row.op) << "</th><th>" << xml_escape(row.dtype) << "</th><th>" << xml_escape(t) << "</th>";
      for (const std::string& c : m.classes) {
        auto it = by_class->second.find(c);
        cell(os, it == by_class->second.end() ? nullptr : &it->second, row.op, row.dtype, t, c);
      }
      os << "</tr>\n";
    }
  }
  os << "</table>\n";

  os << "<h2>Not passed</h2>\n<table id=\"failures\"><tr><th>status</th><th>op</th><th>target</th><th>dtype</th>"
        "<th>class</th><th>case</th><th>what</th><th>repro</th></tr>\n";
  int shown = 0;
  for (const CaseResult& r : results) {
    if (r.status == golden::Status::pass || r.status == golden::Status::unsupported) continue;
    ++shown;
    std::string what = r.summary;
    if (!r.error.empty()) what += (what.empty() ? "" : ": ") + r.error;
    os << "<tr class=\"failure\" data-status=\"" << golden::status_name(r.status) << "\"><td>"
       << golden::status_name(r.status) << "</td><td>" << xml_escape(r.op) << "</td><td>" << xml_escape(r.target) << "</td><td>"
       << xml_escape(r.dtype) << "</td><td>" << xml_escape(r.input_class) << "</td><td>"
       << xml_escape((r.case_index >= 0 ? std::to_string(r.case_index) + " " : "") + r.case_name) << "</td><td>" << xml_escape(what)
       << "</td><td><code class=\"repro\">" << xml_escape(r.repro) << "</code></td></tr>\n";
  }
  if (shown == 0) os << "<tr><td colspan=\"8\">none</td></tr>\n";
  os << "</table>\n</body></html>\n";
}

}  // namespace npukit::gate
