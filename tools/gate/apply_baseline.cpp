#include <cmath>
#include <fstream>
#include <map>

#include "runtime/error.h"
#include "runtime/message.h"
#include "tools/gate/reports.h"
#include "tools/gate/result_json.h"
#include "tools/gate/shell_word.h"

namespace npukit::gate {
namespace {

std::string key(const CaseResult& r, const std::string& output) {
  return r.op + "|" + r.target + "|" + r.dtype + "|" + r.input_class + "|" + r.case_name + "|" + output;
}

// NaN is the worst value a metric can take; equal values (NaN included) never regress.
bool worse(double now, double before) {
  if (std::isnan(before)) return false;
  if (std::isnan(now)) return true;
  return now > before + 1e-12 * std::fabs(before);
}

}  // namespace

int apply_baseline(std::vector<CaseResult>& results, const std::string& baseline_path) {
  std::ifstream in(baseline_path);
  if (!in) fail(Errc::invalid_argument, "--baseline {}: cannot open the file", baseline_path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, "--baseline {}: not JSON ({})", baseline_path, e.what());
  }
  if (!j.contains("results") || !j.at("results").is_array()) {
    fail(Errc::invalid_argument, "--baseline {}: no \"results\" array; pass a file written by --json", baseline_path);
  }
  std::map<std::string, golden::Metrics> before;
  for (const auto& item : j.at("results")) {
    const CaseResult r = case_from_json(item);
    for (const OutputResult& o : r.outputs) before[key(r, o.name)] = o.metrics;
  }
  int regressed = 0;
  for (CaseResult& r : results) {
    std::string what;
    for (const OutputResult& o : r.outputs) {
      auto it = before.find(key(r, o.name));
      if (it == before.end()) continue;
      const golden::Metrics& b = it->second;
      const golden::Metrics& m = o.metrics;
      const std::pair<const char*, std::pair<double, double>> checks[] = {
          {"max_abs", {m.max_abs, b.max_abs}}, {"max_rel", {m.max_rel, b.max_rel}},
          {"nmse", {m.nmse, b.nmse}}, {"mismatch_ratio", {m.mismatch_ratio, b.mismatch_ratio}},
          {"max_ulp", {m.max_ulp, b.max_ulp}},
          {"nan_inf_mismatches", {double(m.nan_inf_mismatches), double(b.nan_inf_mismatches)}}};
      for (const auto& [name, v] : checks) {
        if (!worse(v.first, v.second)) continue;
        append(what, "{}{} {:.3g} > baseline {:.3g}", what.empty() ? "" : "; ", name, v.first, v.second);
      }
    }
    if (what.empty()) continue;
    ++regressed;
    r.repro += " --baseline " + shell_word(baseline_path);  // without it the rerun would pass
    if (r.status == golden::Status::pass || r.status == golden::Status::mistrusted) {
      r.status = golden::Status::fail;
      r.metric = "baseline";
      r.summary = "regressed: " + what;
    } else {
      r.error += (r.error.empty() ? "" : " ") + ("regressed: " + what);
    }
  }
  return regressed;
}

}  // namespace npukit::gate
