// `npukit calibrate`: the scale and zero point of each quantized input of an op, from a stack
// of sample activations, printed as the `--param` arguments `npukit run` takes
// (docs/quantization.md). Which inputs are quantized, and by which parameters, is the op's
// registry entry (TensorSpec::scale_param / zero_point_param); the arithmetic is
// tools/quantize/calibration.h's.
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "runtime/error.h"
#include "runtime/params.h"
#include "runtime/registry.h"
#include "runtime/tensor.h"
#include "runtime/text.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/float_npy.h"
#include "tools/quantize/calibration.h"

namespace npukit::cli {
namespace {

struct CalibrateArgs {
  std::string op, method = "minmax", format = "text";
  std::vector<std::string> ins;
  bool symmetric = false, asymmetric = false;
};

// The flat index i as an index into `shape`, "[2, 40]".
std::string index_text(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return shape_string(idx);
}

// The input names that carry scale/zero-point parameters, for messages.
std::vector<std::string> quantized_inputs(const OpSpec& op) {
  std::vector<std::string> out;
  for (const TensorSpec& t : op.tensors) {
    if (t.read() && t.quantized()) out.push_back(t.name);
  }
  return out;
}

// The q range of a quantized input's storage type: only int8 inputs exist so far.
quant::QRange storage_range(const OpSpec& op, const TensorSpec& t) {
  if (t.dtypes.size() == 1 && t.dtypes[0] == DType::int8) return {-128, 127};
  fail(Errc::internal, "{}: input {} is quantized but not int8 only; calibrate knows int8 ranges only", op.name, t.name);
}

const ParamSpec& param_spec(const OpSpec& op, const std::string& name) {
  for (const ParamSpec& p : op.params) {
    if (p.name == name) return p;
  }
  fail(Errc::internal, "{}: quantized input names parameter '{}', which the op does not declare", op.name, name);
}

struct InputResult {
  std::string name, path, feature_dim;
  std::vector<int64_t> shape;
  quant::Calibration c;
  std::string scale_param, zero_point_param, scale_text;
};

std::vector<float> read_samples(const std::string& name, const std::string& path, std::vector<int64_t>& shape) {
  FloatNpy arr = read_float_npy("--in " + name + "=", path, "calibration samples");
  if (arr.shape.empty())
    fail(Errc::invalid_argument, "--in {}={}: a 0-d array: samples need at least one dimension, the last the feature dimension",
         name, path);
  if (arr.values.empty())
    fail(Errc::invalid_argument, "--in {}={}: shape {} holds no samples: the calibration set must hold at least one", name,
         path, shape_string(arr.shape));
  const int64_t bad = quant::first_non_finite(arr.values.data(), int64_t(arr.values.size()));
  if (bad >= 0)
    fail(Errc::invalid_argument, "--in {}={}: {}{} = {}: every sample must be finite (a NaN or Inf has no scale)", name, path,
         name, index_text(bad, arr.shape), arr.values[size_t(bad)]);
  shape = std::move(arr.shape);
  return std::move(arr.values);
}

void print_text(const std::string& op, const std::string& method, bool symmetric, const std::vector<InputResult>& rs,
                const std::string& args) {
  for (const InputResult& r : rs) {
    const quant::Calibration& c = r.c;
    std::cout << fmt::format("calibrated {} input {} from {} {} ({} samples, feature dimension {} = {})\n", op, r.name,
                             r.path, shape_string(r.shape), c.count, r.feature_dim, r.shape.back());
    std::cout << fmt::format("  method         {}, {}\n", method, symmetric ? "symmetric" : "asymmetric");
    std::cout << fmt::format("  data range     [{}, {}]\n", c.data_min, c.data_max);
    std::cout << fmt::format("  clip range     [{}, {}]\n", c.lo, c.hi);
    std::cout << fmt::format("  clipped        {} of {} ({:.6f}%)\n", c.clipped, c.count, 100.0 * c.clip_fraction);
    std::cout << fmt::format("  nmse           {:.6e}\n", c.nmse);
    std::cout << fmt::format("  {:<14} {}\n", r.scale_param, r.scale_text);
    std::cout << fmt::format("  {:<14} {}\n", r.zero_point_param, c.zero_point);
  }
  std::cout << args << '\n';
}

nlohmann::json to_json(const std::string& op, const std::string& method, bool symmetric,
                       const std::vector<InputResult>& rs, const std::string& args) {
  nlohmann::json j;
  j["op"] = op;
  j["method"] = method;
  j["mode"] = symmetric ? "symmetric" : "asymmetric";
  j["inputs"] = nlohmann::json::array();
  nlohmann::json params = nlohmann::json::object();
  for (const InputResult& r : rs) {
    const quant::Calibration& c = r.c;
    j["inputs"].push_back({{"name", r.name},
                           {"file", r.path},
                           {"shape", r.shape},
                           {"samples", c.count},
                           {"data_min", c.data_min},
                           {"data_max", c.data_max},
                           {"clip_range", {c.lo, c.hi}},
                           {"clipped", c.clipped},
                           {"clip_fraction", c.clip_fraction},
                           {"nmse", c.nmse},
                           {"scale", c.scale},
                           {"zero_point", c.zero_point}});
    params[r.scale_param] = r.scale_text;
    params[r.zero_point_param] = std::to_string(c.zero_point);
  }
  j["params"] = params;  // as text, exactly what the args line passes
  j["args"] = args;
  return j;
}

int run_calibrate(const CalibrateArgs& a) {
  if (a.format != "text" && a.format != "json") fail(Errc::invalid_argument, "--format {}: must be text or json", a.format);
  if (a.symmetric && a.asymmetric)
    fail(Errc::invalid_argument, "--symmetric and --asymmetric: give one of them (default asymmetric)");
  // Activations are asymmetric by default: int8_gemm's a has a zero point, and post-SiLU
  // or post-ReLU activations would waste half the codes symmetric.
  const bool symmetric = a.symmetric;
  const OpSpec& op = find_op(a.op);
  const std::vector<std::string> quantized = quantized_inputs(op);
  if (quantized.empty())
    fail(Errc::invalid_argument, "--op {}: has no quantized inputs (no input is read through a scale and zero point)", op.name);
  quant::CalibrationMethod method;
  try {
    method = quant::parse_method(a.method);
    quant::check_method(method, a.symmetric);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
  const std::map<std::string, std::string> ins = assignment_map(a.ins, "--in");
  if (ins.empty()) fail(Errc::invalid_argument, "calibrate: give --in NAME=SAMPLES.npy for one of {}", join_names(quantized));

  std::vector<InputResult> results;
  std::string args;
  for (const auto& [name, path] : ins) {
    const TensorSpec* spec = nullptr;
    for (const TensorSpec& t : op.tensors) {
      if (t.name == name && t.read()) spec = &t;
    }
    if (spec == nullptr || !spec->quantized())
      fail(Errc::invalid_argument, "--in {}={}: '{}' is not a quantized input of {} (quantized inputs: {})", name, path, name,
           op.name, join_names(quantized));
    InputResult r;
    r.name = name;
    r.path = path;
    r.feature_dim = spec->dims.empty() ? "?" : spec->dims.back();
    const std::vector<float> x = read_samples(name, path, r.shape);
    r.c = quant::calibrate(x.data(), int64_t(x.size()), method, symmetric, storage_range(op, *spec));
    r.scale_param = spec->scale_param;
    r.zero_point_param = spec->zero_point_param;
    r.scale_text = quant::param_float_text(r.c.scale);
    // What `npukit run` would say of these values, said now (e.g. a scale below the op's minimum).
    const std::string zp_text = std::to_string(r.c.zero_point);
    try {
      parse_param(op.name, param_spec(op, r.scale_param), r.scale_text);
      parse_param(op.name, param_spec(op, r.zero_point_param), zp_text);
    } catch (const Error& e) {
      fail(Errc::invalid_argument, "--in {}={}: the calibrated parameters are out of range: {}", name, path, e.what());
    }
    args += fmt::format("{}--param {}={} --param {}={}", args.empty() ? "" : " ", r.scale_param, r.scale_text,
                        r.zero_point_param, zp_text);
    results.push_back(std::move(r));
  }
  const std::string method_text = quant::method_name(method);
  if (a.format == "json")
    std::cout << to_json(op.name, method_text, symmetric, results, args).dump(2) << '\n';
  else
    print_text(op.name, method_text, symmetric, results, args);
  return 0;
}

}  // namespace

void add_calibrate(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "activation scale and zero point of an op's quantized inputs from sample activations (.npy)");
  sub->add_option("--op", args->op, "the op whose quantized inputs to calibrate (e.g. int8_gemm)")->required();
  sub->add_option("--in", args->ins, "NAME=SAMPLES.npy: float32 or float16 samples of a quantized input, any leading dims")->required();
  sub->add_option("--method", args->method, "minmax (default), percentile:P with P in (0, 100], or mse");
  sub->add_flag("--symmetric", args->symmetric, "zero point 0, scale = t / 127");
  sub->add_flag("--asymmetric", args->asymmetric, "scale = (hi - lo) / 255 and a zero point (the default)");
  sub->add_option("--format", args->format, "text (default) or json");
  sub->callback([args, &exit_code] { exit_code = run_calibrate(*args); });
}

}  // namespace npukit::cli
