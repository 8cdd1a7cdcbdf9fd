// The NPU rules: what a schedule must satisfy for the hardware an ArchSpec describes
// (matrix tile shapes and dtypes, buffer capacity and readers, DMA and vector alignment).
// Each violation names the op, the Func, the loop, the offending value and the limit, and
// proposes a concrete fix. docs/simulator/rules.md lists every rule with an example.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/analysis/op_analysis.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::sim {

struct Violation {
  std::string rule;   // "matrix_tile", "buffer_capacity", ... (docs/simulator/rules.md)
  std::string op, func, loop;  // loop: "" when the value does not come from one loop
  int64_t value = 0, limit = 0;  // what the schedule has, what the hardware allows (0 when the rule has no number)
  std::string message;     // one line, with the numbers
  std::string suggestion;  // a concrete fix
  enum Severity { warning, error } severity = error;
  SourceLoc source;        // the schedule statement to change (unknown when no placement made it)
};

const char* to_string(Violation::Severity s);

// Every rule over every item of `analysis`. Warnings (padding waste, partial bursts)
// become errors when `strict`. Order: by rule, then in the analysis's order.
std::vector<Violation> check_rules(const OpAnalysis& analysis, const ArchSpec& arch, bool strict);

// How many of `violations` are errors.
int64_t count_errors(const std::vector<Violation>& violations);

}  // namespace npukit::sim
