#include "simulator/simulate.h"

namespace npukit::sim {

SimResult simulate(const OpAnalysis& analysis, const ArchSpec& arch, bool strict, const CostOptions& options) {
  return SimResult{analysis, arch, check_rules(analysis, arch, strict), estimate_cost(analysis, arch, options)};
}

}  // namespace npukit::sim
