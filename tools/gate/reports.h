// Human and machine reports of a gate run, and the baseline comparison.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "tools/gate/gate.h"

namespace npukit::gate {

// The default report: a line per op × dtype, a cell per target (the cases by status and
// the worst metric against its limit), then each case that did not pass with its repro
// line, the reasons of UNSUPPORTED cases once each, and the totals.
void print_matrix(std::ostream& os, const std::vector<CaseResult>& results);

// --verbose: one row per case (op, target, dtype, class, case, status, deciding metric),
// then a repro line for every case that did not pass, then the totals.
void print_table(std::ostream& os, const std::vector<CaseResult>& results);

// The last line of both: "2013 cases: PASS 2013".
void print_totals(std::ostream& os, const std::vector<CaseResult>& results);

// --report: one self-contained HTML page (no external assets) with the matrix coloured by
// worst metric ÷ limit, the same per input class, and every case that did not pass.
void write_html(std::ostream& os, const std::vector<CaseResult>& results);

// JUnit XML: one <testsuite> per op, one <testcase> per case; FAIL and MISTRUSTED are
// <failure>, CRASH is <error>, UNSUPPORTED is <skipped>.
void write_junit(std::ostream& os, const std::vector<CaseResult>& results);

// Marks as FAIL every case whose metrics got worse than in `baseline_path` (a --json
// report of an earlier run): max_abs, max_rel, nmse, mismatch_ratio, max_ulp,
// nan_inf_mismatches. Returns how many cases regressed; throws on an unreadable file.
int apply_baseline(std::vector<CaseResult>& results, const std::string& baseline_path);

}  // namespace npukit::gate
