#include "golden/tolerance.h"

#include <fmt/format.h>

#include <iterator>
#include <utility>

namespace npukit::golden {
namespace {

Verdict make(Status s, std::string metric, double value, double limit, const char* op) {
  std::string summary = fmt::format("{} {:.3g} {} {:.3g}", metric, value, op, limit);
  return Verdict{s, std::move(metric), value, limit, std::move(summary)};
}

Verdict judge_values(const Metrics& m, const Tolerance& t) {
  if (m.nan_inf_mismatches > 0) {
    return make(Status::fail, "nan_inf_mismatches", static_cast<double>(m.nan_inf_mismatches),
                0, ">");
  }
  if (t.exact) {
    if (!m.lsb_histogram.empty()) {
      const double worst_lsb = static_cast<double>(std::prev(m.lsb_histogram.end())->first);
      return make(worst_lsb > 0 ? Status::fail : Status::pass, "lsb", worst_lsb, 0,
                  worst_lsb > 0 ? ">" : "<=");
    }
    return make(m.max_abs > 0 ? Status::fail : Status::pass, "max_abs", m.max_abs, 0,
                m.max_abs > 0 ? ">" : "<=");
  }
  if (m.mismatches == 0) {
    if (m.max_rel <= t.rtol) return make(Status::pass, "max_rel", m.max_rel, t.rtol, "<=");
    if (m.max_abs <= t.atol) return make(Status::pass, "max_abs", m.max_abs, t.atol, "<=");
  }
  if (m.mismatch_ratio <= t.max_mismatch_ratio) {
    return make(Status::pass, "mismatch_ratio", m.mismatch_ratio, t.max_mismatch_ratio, "<=");
  }
  if (t.max_nmse && m.nmse <= *t.max_nmse) {
    return make(Status::pass, "nmse", m.nmse, *t.max_nmse, "<=");
  }
  Verdict v = make(Status::fail, "mismatch_ratio", m.mismatch_ratio, t.max_mismatch_ratio, ">");
  if (t.max_nmse) {
    v.summary += fmt::format("; nmse {:.3g} > {:.3g}", m.nmse, *t.max_nmse);
  }
  return v;
}

}  // namespace

std::string_view status_name(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::mistrusted: return "MISTRUSTED";
    case Status::unsupported: return "UNSUPPORTED";
    case Status::crashed: return "CRASH";
    case Status::nondeterministic: return "NONDETERMINISTIC";
  }
  return "?";
}

Verdict judge(const Metrics& m, const Tolerance& t) {
  Verdict v = judge_values(m, t);
  if (v.status != Status::pass) return v;
  if (m.count == 0) {
    return Verdict{Status::mistrusted, "count", 0, 0, "count 0: nothing was compared"};
  }
  if (m.zero_ratio > t.max_zero_ratio) {
    Verdict z = make(Status::mistrusted, "zero_ratio", m.zero_ratio, t.max_zero_ratio, ">");
    z.summary += " (passed on " + v.summary + ")";
    return z;
  }
  return v;
}

Tolerance default_tolerance(DType out, bool reduction) {
  Tolerance t;
  switch (out) {
    case DType::float32:
      if (reduction) {
        t.rtol = 1e-4;
        t.atol = 1e-5;
        t.max_nmse = 1e-7;
        t.reason = "float32 reduction: summation order differs from the double reference, "
                   "error grows with the reduced length";
      } else {
        t.rtol = 1.3e-6;
        t.atol = 1e-5;
        t.reason = "float32 elementwise: about 10 ulp (2^-23 = 1.2e-7) of rounding and "
                   "transcendental error";
      }
      break;
    case DType::float16:
      t.rtol = 1e-3;
      t.atol = 1e-5;
      t.max_mismatch_ratio = 1e-3;
      t.reason = "float16: one rounding of the output is already 4.9e-4 relative; "
                 "allow 2 ulp and a few double-rounding outliers";
      break;
    case DType::float64:
      t.rtol = 1e-12;
      t.atol = 1e-12;
      if (reduction) t.max_nmse = 1e-20;
      t.reason = "float64: same precision as the reference, only ordering differs";
      break;
    case DType::int8:
    case DType::uint8:
    case DType::int32:
    case DType::int64:
      t.exact = true;
      t.reason = "integer outputs are bit-exact against the declared rounding mode";
      break;
  }
  return t;
}

}  // namespace npukit::golden
