#include "tools/quantize/layer_report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "runtime/message.h"
#include "tools/quantize/weight_quant.h"

namespace npukit::quant {
namespace {

using nlohmann::json;

// "an object", "a number", …, for "ops: an object: must be an array".
std::string a_type(const json& v) {
  if (v.is_string() && v.get<std::string>().empty()) return "an empty string";
  if (v.is_null()) return "null";
  const std::string t = v.type_name();
  return (t[0] == 'a' || t[0] == 'o' ? "an " : "a ") + t;
}

[[noreturn]] void bad(const std::string& file, const std::string& key, const std::string& rule) {
  throw std::invalid_argument(message("{}: {}: {}", file, key, rule));
}

// calibration.h's messages name the command's flag; in the file the key says where.
std::string without_flag(const char* what) {
  const std::string s = what, flag = "--method ";
  return s.rfind(flag, 0) == 0 ? s.substr(flag.size()) : s;
}

// A path of LAYER.json, relative ones taken from the file's own directory.
std::string resolve(const std::string& file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(file).parent_path() / p).string();
}

// `field` of entry `e`: {"<sub>": "PATH"}, the one tensor it names. "" when absent and optional.
std::string tensor_path(const json& e, const std::string& file, const std::string& key, const char* field, const char* sub,
                        bool required, const char* what) {
  const std::string at = fmt::format("{}.{}", key, field);
  if (!e.contains(field)) {
    if (required) bad(file, fmt::format("{}.{}", at, sub), fmt::format("missing ({})", what));
    return "";
  }
  const json& v = e.at(field);
  if (!v.is_object()) bad(file, at, fmt::format("{}: must be an object {{\"{}\": \"FILE.npy\"}}", a_type(v), sub));
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() != sub)
      bad(file, fmt::format("{}.{}", at, it.key()), fmt::format("unknown tensor ({} names {} only: {})", field, sub, what));
  }
  if (!v.contains(sub)) bad(file, fmt::format("{}.{}", at, sub), fmt::format("missing ({})", what));
  const json& p = v.at(sub);
  if (!p.is_string() || p.get<std::string>().empty())
    bad(file, fmt::format("{}.{}", at, sub), fmt::format("{}: must be a file path ({})", a_type(p), what));
  return resolve(file, p.get<std::string>());
}

std::string text_field(const json& e, const std::string& file, const std::string& key, const char* field, const char* what) {
  const std::string at = fmt::format("{}.{}", key, field);
  if (!e.contains(field)) bad(file, at, fmt::format("missing ({})", what));
  const json& v = e.at(field);
  if (!v.is_string() || v.get<std::string>().empty())
    bad(file, at, fmt::format("{}: must be a non-empty string ({})", a_type(v), what));
  return v.get<std::string>();
}

constexpr const char* kEntryKeys[] = {"name", "op", "in", "weights", "calibration", "method", "mode", "scheme", "activations"};

LayerEntry parse_entry(const json& e, const std::string& file, const std::string& key) {
  if (!e.is_object())
    bad(file, key, fmt::format("{}: each op is an object {{\"name\", \"op\", \"in\", \"weights\"[, \"calibration\", \"method\", \"mode\"]}}",
                               a_type(e)));
  for (auto it = e.begin(); it != e.end(); ++it) {
    if (std::find_if(std::begin(kEntryKeys), std::end(kEntryKeys), [&](const char* k) { return it.key() == k; }) ==
        std::end(kEntryKeys))
      bad(file, fmt::format("{}.{}", key, it.key()),
          "unknown key (an op has name, op, in, weights and optionally calibration, method, mode, scheme, activations)");
  }
  LayerEntry r;
  r.key = key;
  r.name = text_field(e, file, key, "name", "the op's name in the report, e.g. \"q_proj\"");
  r.op = text_field(e, file, key, "op", "the op to measure, by its registry name");
  r.a = tensor_path(e, file, key, "in", "a", true, "the activations X.npy, float32 [.., K]");
  r.w = tensor_path(e, file, key, "weights", "w", true, "the weights W.npy, float32 [N, K]");
  r.calibration = tensor_path(e, file, key, "calibration", "a", false, "the calibration set CAL.npy, float32 [.., K]");
  if (e.contains("mode")) {
    const std::string mode = text_field(e, file, key, "mode", "asymmetric or symmetric");
    if (mode != "asymmetric" && mode != "symmetric")
      bad(file, key + ".mode", message("'{}': must be asymmetric or symmetric (the activations' zero point)", mode));
    r.symmetric = mode == "symmetric";
  }
  if (e.contains("method")) {
    const std::string method = text_field(e, file, key, "method", "minmax, percentile:P or mse");
    try {
      r.method = parse_method(method);
    } catch (const std::invalid_argument& x) {
      bad(file, key + ".method", without_flag(x.what()));
    }
  }
  try {
    check_method(r.method, r.symmetric);
  } catch (const std::invalid_argument& x) {
    bad(file, key + ".method", without_flag(x.what()));
  }
  r.calibration_keys = !r.calibration.empty() || e.contains("method") || e.contains("mode");
  if (e.contains("scheme")) {
    r.scheme = text_field(e, file, key, "scheme", "the weights' scheme, e.g. int8-per-channel or int4-group:64,asymmetric");
    try {
      parse_scheme_and_mode(r.scheme);
    } catch (const std::invalid_argument& x) {
      const std::string what = x.what(), flag = "--scheme ";
      bad(file, key + ".scheme", what.rfind(flag, 0) == 0 ? what.substr(flag.size()) : what);
    }
  }
  if (e.contains("activations"))
    r.activations = text_field(e, file, key, "activations", "how X reaches the kernel, e.g. int8-per-token");
  return r;
}

std::string share_text(double share) { return fmt::format("{:.1f}%", 100.0 * share); }

json error_json(const OutputError& e) { return {{"nmse", e.nmse}, {"cosine", e.cosine}, {"max_abs_error", e.max_abs}}; }

// int8_gemm's activations: one scale and zero point from a calibration.
bool calibrated(const OpReport& r) { return r.activations == "int8-per-tensor"; }

}  // namespace

std::string format_text(const OpReport& r) {
  std::string out;
  if (calibrated(r)) {
    append(out, "{} [M={}, N={}, K={}] on {}: weights {} as {}, activations {} by {}, {}\n", r.op, r.M, r.N, r.K, r.target,
           r.weights_file, r.scheme, r.activations_file, r.method, r.mode);
    if (r.separate_calibration)
      append(out, "  calibrated on {} ({} samples, {:.4f}% clipped there), measured on {}\n", r.calibration_file,
             r.calibration.count, 100.0 * r.calibration.clip_fraction, r.activations_file);
    else
      append(out, "  calibrated on {} itself ({} samples)\n", r.activations_file, r.x_count);
    append(out, "  {}  ({:.4f}% of {}'s samples clipped)\n", r.args, 100.0 * r.x_clip_fraction, r.activations_file);
  } else {
    append(out, "{} [M={}, N={}, K={}] on {}: weights {} as {}, activations {} as {}\n", r.op, r.M, r.N, r.K, r.target,
           r.weights_file, r.scheme, r.activations_file, r.activations);
    if (r.activations == "int8-per-token")
      append(out, "  a scale per row at run time, max |x| / 127 (no calibration; x's nmse {:.6e})\n", r.x_nmse);
    else
      append(out, "  not quantized ({} samples)\n", r.x_count);
    append(out, "  {}\n", r.args);
  }
  append(out, "output error against fp32\n");
  append(out, "  {:<18} {:>13} {:>13} {:>13} {:>7}\n", "stage", "nmse", "cosine", "max abs", "share");
  const auto row = [&out](const char* name, const OutputError& e, const std::string& share) {
    append(out, "  {:<18} {:>13.6e} {:>13.9f} {:>13.6e} {:>7}\n", name, e.nmse, e.cosine, e.max_abs, share);
  };
  const StageErrors& s = r.stages;
  row("weights only", s.weights_only, share_text(s.weight_share));
  row("activations only", s.activations_only, share_text(s.activation_share));
  row("accumulation", s.accumulation, share_text(s.accumulation_share));
  row("both (kernel)", s.both, "");
  append(out, "  interaction nmse   {:.6e} (both minus the three stages)\n", s.interaction);
  return out;
}

json to_json(const OpReport& r) {
  json j;
  if (!r.name.empty()) j["name"] = r.name;
  j["op"] = r.op;
  j["target"] = r.target;
  j["shape"] = {{"M", r.M}, {"N", r.N}, {"K", r.K}};
  j["weights"] = {{"file", r.weights_file}, {"scheme", r.scheme}};
  const Calibration& c = r.calibration;
  if (!calibrated(r)) {
    j["activations"] = {{"file", r.activations_file}, {"scheme", r.activations}, {"samples", r.x_count}, {"nmse", r.x_nmse}};
  } else {
    j["activations"] = {
        {"scheme", r.activations},
        {"file", r.activations_file},
        {"method", r.method},
        {"mode", r.mode},
        {"scale", c.scale},
        {"zero_point", c.zero_point},
        // X quantized with the parameters, whichever set they come from:
        {"samples", r.x_count},
        {"clipped", r.x_clipped},
        {"clip_fraction", r.x_clip_fraction},
        {"nmse", r.x_nmse},
        {"calibration",
         {{"file", r.calibration_file},
          {"separate", r.separate_calibration},
          {"samples", c.count},
          {"data_range", {c.data_min, c.data_max}},
          {"clip_range", {c.lo, c.hi}},
          {"clipped", c.clipped},
          {"clip_fraction", c.clip_fraction},
          {"nmse", c.nmse}}},
    };
  }
  const StageErrors& s = r.stages;
  j["output_error"] = error_json(s.both);
  j["stages"] = {{"weights_only", error_json(s.weights_only)},
                 {"activations_only", error_json(s.activations_only)},
                 {"accumulation", error_json(s.accumulation)},
                 {"both", error_json(s.both)}};
  j["shares"] = {{"weights", s.weight_share},
                 {"activations", s.activation_share},
                 {"accumulation", s.accumulation_share},
                 {"interaction_nmse", s.interaction}};
  j["args"] = r.args;
  return j;
}

std::vector<LayerEntry> parse_layer(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(message("{}: not JSON: {}", file, e.what()));
  }
  if (!j.is_object())
    throw std::invalid_argument(message("{}: the top level is {}: must be an object {{\"ops\": [...]}}", file, a_type(j)));
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "ops") bad(file, it.key(), "unknown key (the top level has \"ops\" only)");
  }
  if (!j.contains("ops")) bad(file, "ops", "missing (LAYER.json is {\"ops\": [{\"name\", \"op\", \"in\", \"weights\"}, ...]})");
  const json& ops = j.at("ops");
  if (!ops.is_array()) bad(file, "ops", fmt::format("{}: must be an array of ops", a_type(ops)));
  if (ops.empty()) bad(file, "ops", "empty: list at least one op");
  std::vector<LayerEntry> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    LayerEntry e = parse_entry(ops[i], file, fmt::format("ops[{}]", i));
    for (const LayerEntry& prev : out) {
      if (prev.name == e.name)
        bad(file, e.key + ".name", message("'{}' is also {}'s name: each op needs its own", e.name, prev.key));
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<LayerEntry> read_layer(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw std::invalid_argument(message("{}: a directory: --layer takes a JSON file", file));
  std::ifstream f(file, std::ios::binary);
  if (!f) throw std::invalid_argument(message("{}: cannot open for reading ({})", file, std::strerror(errno)));
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw std::invalid_argument(message("{}: cannot read ({})", file, std::strerror(errno)));
  return parse_layer(text, file);
}

std::vector<size_t> rank_by_nmse(const std::vector<double>& nmse) {
  std::vector<size_t> order(nmse.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto key = [&nmse](size_t i) { return std::isnan(nmse[i]) ? HUGE_VAL : nmse[i]; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (std::isnan(nmse[a]) != std::isnan(nmse[b])) return std::isnan(nmse[a]);
    return key(a) > key(b);
  });
  return order;
}

bool is_sensitive(double nmse, double threshold) { return std::isnan(nmse) || nmse > threshold; }

std::string threshold_source(bool given) {
  if (given) return "--threshold";
  return fmt::format("default: the gate's float16 rtol {:g}, squared", kGateFloat16Rtol);
}

std::string format_layer_text(const std::string& file, const std::vector<OpReport>& reports, double threshold,
                              bool threshold_given) {
  std::vector<double> nmse;
  size_t width = 2;
  for (const OpReport& r : reports) {
    nmse.push_back(r.stages.both.nmse);
    width = std::max(width, r.name.size());
  }
  const std::vector<size_t> order = rank_by_nmse(nmse);
  std::string out;
  append(out, "layer {}: {} ops on {}, ranked by the quantized output's nmse against fp32 (worst first)\n", file,
         reports.size(), reports.empty() ? "" : reports.front().target);
  append(out, "sensitive above nmse {:.6e} ({})\n", threshold, threshold_source(threshold_given));
  append(out, "  {:>4}  {:<{}} {:>13} {:>13} {:>13} {:>8} {:>11} {:>12}\n", "rank", "op", width, "nmse", "cosine",
         "max abs", "weights", "activations", "accumulation");
  std::vector<std::string> sensitive;
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const OpReport& r = reports[order[rank]];
    const OutputError& e = r.stages.both;
    const bool s = is_sensitive(e.nmse, threshold);
    if (s) sensitive.push_back(r.name);
    append(out, "  {:>4}  {:<{}} {:>13.6e} {:>13.9f} {:>13.6e} {:>8} {:>11} {:>12}{}\n", rank + 1, r.name, width, e.nmse,
           e.cosine, e.max_abs, share_text(r.stages.weight_share), share_text(r.stages.activation_share),
           share_text(r.stages.accumulation_share), s ? "  SENSITIVE" : "");
  }
  if (sensitive.empty())
    append(out, "keep in fp16: none (no op's nmse is above {:.6e})\n", threshold);
  else
    append(out, "keep in fp16: {}\n", join_names(sensitive));
  return out;
}

json layer_json(const std::string& file, const std::vector<OpReport>& reports, double threshold, bool threshold_given) {
  std::vector<double> nmse;
  for (const OpReport& r : reports) nmse.push_back(r.stages.both.nmse);
  json ranked = json::array();
  json sensitive = json::array();
  const std::vector<size_t> order = rank_by_nmse(nmse);
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const OpReport& r = reports[order[rank]];
    json j = to_json(r);
    j["rank"] = rank + 1;
    j["sensitive"] = is_sensitive(r.stages.both.nmse, threshold);
    if (j["sensitive"].get<bool>()) sensitive.push_back(r.name);
    ranked.push_back(std::move(j));
  }
  return {{"layer", file},
          {"target", reports.empty() ? "" : reports.front().target},
          {"threshold", threshold},
          {"threshold_source", threshold_source(threshold_given)},
          {"ops", ranked},
          {"sensitive", sensitive}};
}

}  // namespace npukit::quant
