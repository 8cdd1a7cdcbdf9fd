#include <algorithm>
#include <string>
#include <vector>

#include "tools/gate/gate.h"

namespace npukit::gate {
namespace {

// Whether any case of `op` (every op when empty) on `target` ran, and if none did, how many
// were UNSUPPORTED and the first one's reason (one line): "(N UNSUPPORTED: why)".
struct Tally {
  bool ran = false;
  int unsupported = 0;
  std::string why;
  std::string reason() const {
    return unsupported == 0 ? std::string("none selected")
                            : std::to_string(unsupported) + " UNSUPPORTED" + (why.empty() ? "" : ": " + why);
  }
};

Tally tally(const std::vector<CaseResult>& results, const std::string& op, const std::string& target) {
  Tally t;
  for (const CaseResult& r : results) {
    if ((!op.empty() && r.op != op) || r.target != target) continue;
    if (r.status != golden::Status::unsupported) {
      t.ran = true;
      break;
    }
    ++t.unsupported;
    if (t.why.empty()) t.why = r.error.substr(0, r.error.find('\n'));  // the report is one line
  }
  return t;
}

}  // namespace

std::vector<std::string> unrunnable_requests(const std::vector<CaseResult>& results, const Options& options) {
  // Ops named with --op: each must run on every target. A run over every op (the main
  // job's npu-sim gate) may meet ops without a kernel on a target, which UNSUPPORTED
  // reports and does not fail.
  const std::vector<std::string> targets = options.targets.empty() ? std::vector<std::string>{"cpu"} : options.targets;
  std::vector<std::string> out;
  for (const std::string& op : options.ops) {
    for (const std::string& target : targets) {
      const Tally t = tally(results, op, target);
      if (t.ran) continue;
      std::string line = "--op " + op + " --target " + target + ": no case ran (" + t.reason() + ")";
      if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(std::move(line));
    }
  }
  // Without --op, a target named with --target on which no case of any op ran: the target
  // itself cannot run here (no GPU or OpenCL device, a tier this CPU lacks), which must not
  // pass as a gate of every op with nothing checked. Ops without a kernel on a target that
  // others run (a preset an op's NPU schedule refuses) stay UNSUPPORTED.
  if (options.ops.empty()) {
    for (const std::string& target : options.targets) {
      const Tally t = tally(results, "", target);
      if (t.ran || t.unsupported == 0) continue;
      out.push_back("--target " + target + ": no case of any op ran (" + t.reason() + ")");
    }
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
