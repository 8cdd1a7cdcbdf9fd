#include "tools/gate/result_json.h"

#include <cmath>
#include <limits>

namespace npukit::gate {
namespace {

using nlohmann::json;

// JSON has no NaN or Inf: they travel as strings.
json num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double num_from(const json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "inf" ? HUGE_VAL : -HUGE_VAL;
  }
  return j.get<double>();
}

golden::Status status_from(const std::string& s) {
  for (golden::Status st : {golden::Status::pass, golden::Status::fail, golden::Status::mistrusted,
                            golden::Status::unsupported, golden::Status::crashed, golden::Status::nondeterministic}) {
    if (golden::status_name(st) == s) return st;
  }
  return golden::Status::crashed;
}

json metrics_json(const golden::Metrics& m) {
  json worst = json::array();
  for (const golden::Point& p : m.worst) {
    worst.push_back({{"index", p.index}, {"actual", num(p.actual)}, {"expected", num(p.expected)},
                     {"abs_err", num(p.abs_err)}, {"rel_err", num(p.rel_err)}});
  }
  json hist = json::object();
  for (const auto& [lsb, count] : m.lsb_histogram) hist[std::to_string(lsb)] = count;
  return {{"count", m.count}, {"max_abs", num(m.max_abs)}, {"max_rel", num(m.max_rel)},
          {"mismatches", m.mismatches}, {"mismatch_ratio", num(m.mismatch_ratio)},
          {"nmse", num(m.nmse)}, {"cosine", num(m.cosine)}, {"max_ulp", num(m.max_ulp)},
          {"lsb_histogram", hist}, {"nan_inf_mismatches", m.nan_inf_mismatches},
          {"zero_ratio", num(m.zero_ratio)}, {"worst", worst}};
}

golden::Metrics metrics_from(const json& j) {
  golden::Metrics m;
  m.count = j.at("count");
  m.max_abs = num_from(j.at("max_abs"));
  m.max_rel = num_from(j.at("max_rel"));
  m.mismatches = j.at("mismatches");
  m.mismatch_ratio = num_from(j.at("mismatch_ratio"));
  m.nmse = num_from(j.at("nmse"));
  m.cosine = num_from(j.at("cosine"));
  m.max_ulp = num_from(j.at("max_ulp"));
  for (const auto& [k, v] : j.at("lsb_histogram").items()) m.lsb_histogram[std::stoll(k)] = v;
  m.nan_inf_mismatches = j.at("nan_inf_mismatches");
  m.zero_ratio = num_from(j.at("zero_ratio"));
  for (const json& p : j.at("worst")) {
    m.worst.push_back({p.at("index"), num_from(p.at("actual")), num_from(p.at("expected")),
                       num_from(p.at("abs_err")), num_from(p.at("rel_err"))});
  }
  return m;
}

json tolerance_json(const golden::Tolerance& t) {
  json j = {{"atol", t.atol}, {"rtol", t.rtol}, {"max_mismatch_ratio", t.max_mismatch_ratio},
            {"exact", t.exact}, {"max_zero_ratio", t.max_zero_ratio}, {"reason", t.reason}};
  if (t.max_nmse) j["max_nmse"] = *t.max_nmse;
  return j;
}

golden::Tolerance tolerance_from(const json& j) {
  golden::Tolerance t;
  t.atol = j.at("atol");
  t.rtol = j.at("rtol");
  t.max_mismatch_ratio = j.at("max_mismatch_ratio");
  t.exact = j.at("exact");
  t.max_zero_ratio = j.at("max_zero_ratio");
  t.reason = j.at("reason");
  if (j.contains("max_nmse")) t.max_nmse = j.at("max_nmse").get<double>();
  return t;
}

json verdict_json(const golden::Verdict& v) {
  return {{"status", golden::status_name(v.status)}, {"metric", v.metric}, {"value", num(v.value)},
          {"limit", num(v.limit)}, {"summary", v.summary}};
}

golden::Verdict verdict_from(const json& j) {
  return {status_from(j.at("status")), j.at("metric"), num_from(j.at("value")),
          num_from(j.at("limit")), j.at("summary")};
}

}  // namespace

json to_json(const CaseResult& r) {
  json outs = json::array();
  for (const OutputResult& o : r.outputs) {
    outs.push_back({{"name", o.name}, {"dtype", o.dtype}, {"metrics", metrics_json(o.metrics)},
                    {"tolerance", tolerance_json(o.tolerance)}, {"verdict", verdict_json(o.verdict)}});
  }
  return {{"op", r.op}, {"target", r.target}, {"dtype", r.dtype}, {"class", r.input_class},
          {"case", r.case_index}, {"case_name", r.case_name},
          {"status", golden::status_name(r.status)}, {"metric", r.metric}, {"summary", r.summary},
          {"error", r.error}, {"guard_corrupted", r.guard_corrupted}, {"outputs", outs},
          {"seconds", r.seconds}, {"repro", r.repro}};
}

CaseResult case_from_json(const json& j) {
  CaseResult r;
  r.op = j.at("op");
  r.target = j.at("target");
  r.dtype = j.at("dtype");
  r.input_class = j.at("class");
  r.case_index = j.at("case");
  r.case_name = j.at("case_name");
  r.status = status_from(j.at("status"));
  r.metric = j.at("metric");
  r.summary = j.at("summary");
  r.error = j.at("error");
  r.guard_corrupted = j.at("guard_corrupted");
  for (const json& o : j.at("outputs")) {
    r.outputs.push_back({o.at("name"), o.at("dtype"), metrics_from(o.at("metrics")),
                         tolerance_from(o.at("tolerance")), verdict_from(o.at("verdict"))});
  }
  r.seconds = j.at("seconds");
  r.repro = j.at("repro");
  return r;
}

json report_json(const std::vector<CaseResult>& results) {
  json cases = json::array();
  std::map<std::string, int> counts;
  for (const CaseResult& r : results) {
    cases.push_back(to_json(r));
    counts[std::string(golden::status_name(r.status))]++;
  }
  return {{"results", cases}, {"summary", {{"total", results.size()}, {"by_status", counts},
                                           {"exit_code", exit_code(results)}}}};
}

}  // namespace npukit::gate
