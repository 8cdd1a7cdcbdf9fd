#include <map>
#include <ostream>

#include "runtime/text.h"
#include "tools/gate/reports.h"

namespace npukit::gate {

void write_junit(std::ostream& os, const std::vector<CaseResult>& results) {
  std::map<std::string, std::vector<const CaseResult*>> by_op;
  for (const CaseResult& r : results) by_op[r.op].push_back(&r);
  int failures = 0, errors = 0, skipped = 0;
  double total_time = 0;
  for (const CaseResult& r : results) {
    failures += golden::is_failure(r.status);
    errors += r.status == golden::Status::crashed;
    skipped += r.status == golden::Status::unsupported;
    total_time += r.seconds;
  }
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<testsuites name=\"npukit gate\" tests=\"" << results.size() << "\" failures=\"" << failures
     << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << total_time << "\">\n";
  for (const auto& [op, cases] : by_op) {
    int f = 0, e = 0, s = 0;
    double t = 0;
    for (const CaseResult* r : cases) {
      f += golden::is_failure(r->status);
      e += r->status == golden::Status::crashed;
      s += r->status == golden::Status::unsupported;
      t += r->seconds;
    }
    os << "  <testsuite name=\"" << xml_escape(op) << "\" tests=\"" << cases.size() << "\" failures=\"" << f
       << "\" errors=\"" << e << "\" skipped=\"" << s << "\" time=\"" << t << "\">\n";
    for (const CaseResult* r : cases) {
      const std::string name = r->target + "/" + r->dtype + "/" + r->input_class + "/" +
                               std::to_string(r->case_index) + " " + r->case_name;
      os << "    <testcase classname=\"" << xml_escape(op + "." + r->target) << "\" name=\""
         << xml_escape(name) << "\" time=\"" << r->seconds << "\"";
      const std::string detail = r->summary + (r->error.empty() ? "" : " -- " + r->error) + "\nrepro: " + r->repro;
      switch (r->status) {
        case golden::Status::pass: os << "/>\n"; continue;
        case golden::Status::unsupported:
          os << ">\n      <skipped message=\"" << xml_escape(r->error) << "\"/>\n";
          break;
        case golden::Status::crashed:
          os << ">\n      <error message=\"" << xml_escape(r->summary) << "\">" << xml_escape(detail) << "</error>\n";
          break;
        default:
          os << ">\n      <failure message=\"" << xml_escape(std::string(golden::status_name(r->status)) + " " + r->summary)
             << "\">" << xml_escape(detail) << "</failure>\n";
      }
      os << "    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
}

}  // namespace npukit::gate
