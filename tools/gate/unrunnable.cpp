#include <algorithm>
#include <string>
#include <vector>

#include "tools/gate/gate.h"

namespace npukit::gate {

std::vector<std::string> unrunnable_requests(const std::vector<CaseResult>& results, const Options& options) {
  // Only ops named with --op: a run over every op (the main job's npu-sim gate) may meet
  // ops without a kernel on a target, which UNSUPPORTED reports and does not fail.
  const std::vector<std::string> targets = options.targets.empty() ? std::vector<std::string>{"cpu"} : options.targets;
  std::vector<std::string> out;
  for (const std::string& op : options.ops) {
    for (const std::string& target : targets) {
      int unsupported = 0;
      bool ran = false;
      std::string why;
      for (const CaseResult& r : results) {
        if (r.op != op || r.target != target) continue;
        if (r.status != golden::Status::unsupported) {
          ran = true;
          break;
        }
        ++unsupported;
        if (why.empty()) why = r.error.substr(0, r.error.find('\n'));  // the report is one line
      }
      if (ran) continue;
      std::string line = "--op " + op + " --target " + target + ": no case ran (" +
                         (unsupported == 0 ? std::string("none selected")
                                           : std::to_string(unsupported) + " UNSUPPORTED" + (why.empty() ? "" : ": " + why)) +
                         ")";
      if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(std::move(line));
    }
  }
  // A target named with --target on which no case of any op ran: the target itself cannot
  // run here (no GPU or OpenCL device, a tier this CPU lacks), which must not pass as a
  // gate of every op with nothing checked. Ops without a kernel on a target that others
  // run (a preset an op's NPU schedule refuses) stay UNSUPPORTED, as above.
  for (const std::string& target : options.targets) {
    int unsupported = 0;
    bool ran = false;
    std::string why;
    for (const CaseResult& r : results) {
      if (r.target != target) continue;
      if (r.status != golden::Status::unsupported) {
        ran = true;
        break;
      }
      ++unsupported;
      if (why.empty()) why = r.error.substr(0, r.error.find('\n'));
    }
    if (ran || unsupported == 0 || !options.ops.empty()) continue;  // named ops: reported above
    out.push_back("--target " + target + ": no case of any op ran (" + std::to_string(unsupported) + " UNSUPPORTED" +
                  (why.empty() ? "" : ": " + why) + ")");
  }
  return out;
}

std::vector<std::string> unwritten_goldens(const std::vector<CaseResult>& results) {
  std::vector<std::string> out, seen;
  for (const CaseResult& r : results) {
    if (r.metric != "golden" || std::find(seen.begin(), seen.end(), r.op) != seen.end()) continue;
    seen.push_back(r.op);
    out.push_back("op " + r.op + ": its golden reference is not written (" + r.error + ")");
  }
  return out;
}

}  // namespace npukit::gate
