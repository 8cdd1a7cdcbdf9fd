// Tolerance policy: turns Metrics into a verdict that names the metric that decided it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "golden/metrics.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// nondeterministic: repeated runs of one call (npukit gate --repeat) gave different bytes.
enum class Status { pass, fail, mistrusted, unsupported, crashed, nondeterministic };

// "PASS", "FAIL", "MISTRUSTED", "UNSUPPORTED", "CRASH", "NONDETERMINISTIC"
std::string_view status_name(Status s);

// A result that fails the gate (exit 1) without being a crash: FAIL, MISTRUSTED, NONDETERMINISTIC.
inline bool is_failure(Status s) {
  return s == Status::fail || s == Status::mistrusted || s == Status::nondeterministic;
}

struct Tolerance {
  double atol = 0, rtol = 0;          // a position mismatches when |a-e| > atol + rtol*|e|
  double max_mismatch_ratio = 0;      // pass when mismatch_ratio <= this ...
  std::optional<double> max_nmse;     // ... or when nmse <= this (reductions)
  bool exact = false;                 // bit-exact: any nonzero |a-e| fails
  double max_zero_ratio = 0.9;        // a passing case with more zeros is MISTRUSTED
  std::string reason;                 // why these numbers, shown to the user
};

struct Verdict {
  Status status = Status::pass;
  std::string metric;   // the deciding metric, e.g. "max_rel", "nan_inf_mismatches"
  double value = 0;
  double limit = 0;
  std::string summary;  // e.g. "max_rel 3.1e-07 <= 0.0001", "nan_inf_mismatches 3 > 0"
};

// Order of decision:
//   1. any NaN/Inf mismatch fails (metric "nan_inf_mismatches");
//   2. exact: any nonzero error fails ("lsb" for integer outputs, "max_abs" otherwise);
//      otherwise pass if mismatch_ratio <= max_mismatch_ratio, else pass if max_nmse is
//      set and nmse <= max_nmse, else fail on "mismatch_ratio". A pass with no mismatch
//      reports the tightest true statement: "max_rel" <= rtol, else "max_abs" <= atol,
//      else "mismatch_ratio";
//   3. a pass over zero elements, or with zero_ratio > max_zero_ratio, is MISTRUSTED
//      (metric "count" / "zero_ratio"): such a case cannot tell a kernel that writes
//      nothing from a correct one.
Verdict judge(const Metrics& m, const Tolerance& t);

// Defaults per output dtype; reduction = the output sums over an axis (RMSNorm, GEMM).
//   float32 elementwise: rtol 1.3e-6, atol 1e-5, no mismatches;
//   float32 reduction:   rtol 1e-4, atol 1e-5, no mismatches or nmse <= 1e-7;
//   float16:             rtol 1e-3, atol 1e-5, mismatch ratio <= 1e-3;
//   float64:             rtol 1e-12, atol 1e-12 (nmse <= 1e-20 for reductions);
//   integers:            exact.
Tolerance default_tolerance(DType out, bool reduction);

}  // namespace npukit::golden
