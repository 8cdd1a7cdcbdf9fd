#include "tools/sim_helpers.h"

#include "runtime/error.h"

namespace npukit::cli {

sim::ArchSpec arch_argument(const std::string& name) {
  try {
    return sim::resolve_arch(name);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, "--arch: {}", e.what());
  }
}

sim::SimResult simulate_request(const sim::SimRequest& r, const sim::ArchSpec& arch, bool strict) {
  try {
    return sim::simulate(sim::analyse_op(r, arch), arch, strict);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
}

sim::StagedResult simulate_staged_request(const sim::SimRequest& r, const sim::ArchSpec& arch, bool strict) {
  try {
    return sim::simulate_stages(r, arch, strict);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
}

int has_rule_errors(const sim::SimResult& r) {
  for (const sim::Violation& v : r.violations)
    if (v.severity == sim::Violation::error) return 1;
  return 0;
}

}  // namespace npukit::cli
