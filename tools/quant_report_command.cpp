// `npukit quant-report`: how much error quantizing a linear layer adds to its output, and
// which rounding it comes from (docs/quantization.md); over a layer list (--layer
// LAYER.json), the ops ranked by that error and the sensitive ones named. The weights are
// quantized by tools/quantize/weight_quant.h (int8 per channel for int8_gemm, int4 in groups
// for int4_gemm), the activations calibrated by tools/quantize/calibration.h (int8_gemm: on X
// or on a separate calibration set) or quantized per token by tools/quantize/per_token.h
// (int4_gemm; or left in float32), the quantized layer is npukit's kernel through the runtime
// (out=float32), and the fp32 layer and the single-stage variants are
// tools/quantize/layer_error.h's fp64-summed matmul; the reports, the layer file and the
// ranking are tools/quantize/layer_report.h.
#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "runtime/tensor.h"
#include "runtime/text.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/float_npy.h"
#include "tools/quantize/calibration.h"
#include "tools/quantize/layer_error.h"
#include "tools/quantize/layer_report.h"
#include "tools/quantize/per_token.h"
#include "tools/quantize/quant_report.h"
#include "tools/quantize/weight_quant.h"

namespace npukit::cli {
namespace {

struct QuantReportArgs {
  std::string op, scheme, activations, method = "minmax", format = "text", target = "cpu", layer;
  std::vector<std::string> ins, weights, calibration;
  bool symmetric = false, asymmetric = false;
  double threshold = quant::kDefaultSensitiveNmse;
};

// The linear layers y = a · wᵀ it measures: int8 weights per channel with int8 activations
// per tensor, and int4 weights in groups with int8 activations per token (or float ones).
constexpr const char* kInt8Op = "int8_gemm";
constexpr const char* kInt4Op = "int4_gemm";
constexpr const char* kLayerOps = "int8_gemm or int4_gemm";

// Where an input's errors point: `key` is "--in a=" (single op) or "layer.json: ops[2].in.a: ".
struct Source {
  std::string key, path;
  std::string where() const { return key + path; }
};

// A float32 (or float16, widened exactly) array of at least one dimension, every element finite.
std::vector<float> read_floats(const Source& src, std::vector<int64_t>& shape) {
  FloatNpy arr = read_float_npy(src.key, src.path, "values");
  if (arr.shape.empty() || arr.values.empty())
    fail(Errc::invalid_argument, "{}: shape {}: must have at least one dimension and one element", src.where(),
         shape_string(arr.shape));
  const int64_t bad = quant::first_non_finite(arr.values.data(), int64_t(arr.values.size()));
  if (bad >= 0)
    fail(Errc::invalid_argument, "{}: element {} = {}: every value must be finite", src.where(), bad,
         arr.values[size_t(bad)]);
  shape = std::move(arr.shape);
  return std::move(arr.values);
}

// One layer to measure: its files, the weight scheme and how the activations are quantized.
struct Job {
  std::string name;
  Source a, w, cal;  // cal.path "" calibrates on a itself
  quant::Scheme scheme;
  std::string activations;  // OpReport::activations
  quant::CalibrationMethod method;
  bool symmetric = false;
};

// The scheme (parse_scheme_and_mode's form; "" = the op's default) and the activations'
// form ("" = the op's default) for `op`, or a one-line refusal that starts with `scheme_key`
// or `activations_key` ("--scheme ", or where in LAYER.json the value comes from).
void choose_forms(const std::string& op, const std::string& scheme_text, const std::string& activations,
                  const std::string& scheme_key, const std::string& activations_key, Job& job) {
  const bool int4 = op == kInt4Op;
  const std::string text = !scheme_text.empty() ? scheme_text : int4 ? "int4-group:32" : "int8-per-channel";
  try {
    job.scheme = quant::parse_scheme_and_mode(text);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, "{}", e.what());  // only from --scheme (LAYER.json's are parsed with the file)
  }
  if (!int4 && (job.scheme.bits != quant::Bits::int8 || !job.scheme.symmetric))
    fail(Errc::invalid_argument,
         "{}{}: {} reads int8 weights with one scale per channel and no zero point (int8-per-channel; "
         "int4-group runs on {})",
         scheme_key, text, kInt8Op, kInt4Op);
  if (int4 && job.scheme.bits != quant::Bits::int4)
    fail(Errc::invalid_argument, "{}{}: {} reads int4 weights in groups along K (int4-group:32|64|128[,asymmetric])",
         scheme_key, text, kInt4Op);
  job.activations = !activations.empty() ? activations : int4 ? "int8-per-token" : "int8-per-tensor";
  if (!int4 && job.activations != "int8-per-tensor")
    fail(Errc::invalid_argument, "{}{}: {} takes int8 activations with one calibrated scale (int8-per-tensor)",
         activations_key, job.activations, kInt8Op);
  if (int4 && job.activations != "int8-per-token" && job.activations != "float32")
    fail(Errc::invalid_argument,
         "{}{}: {} takes int8 activations with a scale per row (int8-per-token) or float32 ones", activations_key,
         job.activations, kInt4Op);
}

// int8_gemm's activations: calibrated on the calibration set (X itself without one), as
// `npukit calibrate` does, then X quantized with those parameters as run takes them. Fills
// the report's calibration and X's counts and qx (X quantized); returns x' (X dequantized).
std::vector<float> quantize_per_tensor(const std::vector<float>& x, int64_t K, const Job& job, quant::OpReport& rep,
                                       std::vector<int8_t>& qx) {
  const bool sym = job.symmetric;
  const quant::QRange r8{-128, 127};
  const bool separate = !job.cal.path.empty();
  if (separate) {
    std::vector<int64_t> cal_shape;
    const std::vector<float> cal = read_floats(job.cal, cal_shape);
    if (cal_shape.back() != K)
      fail(Errc::invalid_argument,
           "{}: shape {}: the last dimension must be K = {}, the weights' second (samples of this layer's activations)",
           job.cal.where(), shape_string(cal_shape), K);
    rep.calibration = quant::calibrate(cal.data(), int64_t(cal.size()), job.method, sym, r8);
  } else {
    rep.calibration = quant::calibrate(x.data(), int64_t(x.size()), job.method, sym, r8);
  }
  const quant::Calibration& c = rep.calibration;
  rep.scale_text = quant::param_float_text(c.scale);
  qx.resize(x.size());
  quant::quantize_samples(x.data(), int64_t(x.size()), c.scale, c.zero_point, sym, r8, qx.data());
  std::vector<float> x_hat(x.size());
  for (size_t i = 0; i < x.size(); ++i) x_hat[i] = c.scale * float(int32_t(qx[i]) - c.zero_point);
  double x2 = 0;
  for (float v : x) x2 += double(v) * double(v);
  const double err2 = quant::squared_error(x.data(), int64_t(x.size()), c.scale, c.zero_point, sym, r8, &rep.x_clipped);
  rep.x_clip_fraction = double(rep.x_clipped) / double(rep.x_count);
  rep.x_nmse = x2 == 0 ? err2 : err2 / x2;
  rep.calibration_file = separate ? job.cal.path : job.a.path;
  rep.separate_calibration = separate;
  rep.method = quant::method_name(job.method);
  rep.mode = sym ? "symmetric" : "asymmetric";
  rep.args = fmt::format("--param a_scale={} --param a_zero_point={}", rep.scale_text, c.zero_point);
  return x_hat;
}

// Both roundings: int8_gemm itself, with the parameters as `npukit run` takes them.
void run_int8_gemm(const OpSpec& op, const std::string& target, int64_t M, int64_t N, int64_t K, std::vector<int8_t>& qx,
                   quant::Quantized& qw, const quant::OpReport& rep, std::vector<float>& y) {
  TensorMap tensors;
  tensors["a"] = TensorView{qx.data(), DType::int8, {M, K}, {}};
  tensors["w"] = TensorView{qw.q.data(), DType::int8, {N, K}, {}};
  tensors["w_scale"] = TensorView{qw.scales.data(), DType::float32, {N}, {}};
  tensors["y"] = TensorView{y.data(), DType::float32, {M, N}, {}};
  const std::map<std::string, std::string> params{{"out", "float32"},
                                                  {"a_scale", rep.scale_text},
                                                  {"a_zero_point", std::to_string(rep.calibration.zero_point)}};
  run_call(bind_call(op, target, tensors, params));
}

// int4_gemm: X per token (int8, a scale per row) or as it is (float32), the weights packed
// two per byte with their group scales (and zero points); fills x_hat and y.
void run_int4_gemm(const OpSpec& op, const std::string& target, std::vector<float> x, int64_t M, int64_t N, int64_t K,
                   const Job& job, quant::Quantized& qw, quant::OpReport& rep, std::vector<float>& x_hat,
                   std::vector<float>& y) {
  TensorMap tensors;
  quant::PerToken pt;
  if (job.activations == "int8-per-token") {
    pt = quant::quantize_per_token(x.data(), M, K);
    x_hat = pt.x_hat;
    rep.x_nmse = quant::reconstruction_error(x.data(), x_hat.data(), M, K, 0).nmse;  // Σ (x − x')² / Σ x²
    tensors["a"] = TensorView{pt.q.data(), DType::int8, {M, K}, {}};
    tensors["a_scales"] = TensorView{pt.scales.data(), DType::float32, {M}, {}};
  } else {
    x_hat = x;
    tensors["a"] = TensorView{x.data(), DType::float32, {M, K}, {}};
  }
  std::vector<uint8_t> zp(qw.zero_points.begin(), qw.zero_points.end());  // each in [0, 15]
  tensors["w"] = TensorView{qw.q.data(), DType::uint8, {N, K / 2}, {}};
  tensors["scales"] = TensorView{qw.scales.data(), DType::float32, {N, qw.groups}, {}};
  if (!job.scheme.symmetric) tensors["zero_points"] = TensorView{zp.data(), DType::uint8, {N, qw.groups}, {}};
  tensors["y"] = TensorView{y.data(), DType::float32, {M, N}, {}};
  const std::string group = std::to_string(job.scheme.group);
  run_call(bind_call(op, target, tensors, {{"out", "float32"}, {"group", group}}));
  rep.args = "--param group=" + group;
}

quant::OpReport measure(const OpSpec& op, const std::string& target, const Job& job) {
  std::vector<int64_t> x_shape, w_shape;
  const std::vector<float> x = read_floats(job.a, x_shape);
  const std::vector<float> w = read_floats(job.w, w_shape);
  if (w_shape.size() != 2)
    fail(Errc::invalid_argument, "{}: shape {}: weights must be 2-D [N, K]", job.w.where(), shape_string(w_shape));
  const int64_t N = w_shape[0], K = w_shape[1];
  if (x_shape.back() != K)
    fail(Errc::invalid_argument, "{}: shape {}: the last dimension must be K = {}, the weights' second", job.a.where(),
         shape_string(x_shape), K);
  const int64_t M = int64_t(x.size()) / K;

  // Weights: int8 per channel, symmetric (int8_gemm's w_scale has no zero point), or int4
  // in groups, packed two per byte as int4_gemm takes them.
  quant::Quantized qw;
  try {
    qw = quant::quantize(w.data(), N, K, job.scheme);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, "{}: {}", job.w.where(), e.what());
  }
  const std::vector<float> w_hat = quant::dequantize(qw, job.scheme);

  quant::OpReport rep;
  rep.activations = job.activations;
  rep.x_count = int64_t(x.size());
  std::vector<float> x_hat, y(static_cast<size_t>(M * N));
  if (job.activations == "int8-per-tensor") {
    std::vector<int8_t> qx;
    x_hat = quantize_per_tensor(x, K, job, rep, qx);
    run_int8_gemm(op, target, M, N, K, qx, qw, rep, y);
  } else {
    run_int4_gemm(op, target, x, M, N, K, job, qw, rep, x_hat, y);
  }

  const std::vector<double> ref = quant::linear_f64(x.data(), w.data(), M, N, K);
  const std::vector<double> wo = quant::linear_f64(x.data(), w_hat.data(), M, N, K);
  const std::vector<double> ao = quant::linear_f64(x_hat.data(), w.data(), M, N, K);
  const std::vector<double> exact = quant::linear_f64(x_hat.data(), w_hat.data(), M, N, K);
  const std::vector<double> kernel(y.begin(), y.end());
  rep.stages = quant::stage_errors(ref, wo, ao, exact, kernel);

  rep.name = job.name;
  rep.op = op.name;
  rep.target = target;
  rep.M = M;
  rep.N = N;
  rep.K = K;
  rep.weights_file = job.w.path;
  rep.scheme = quant::scheme_name(job.scheme, true);
  rep.activations_file = job.a.path;
  return rep;
}

// The single op of --op/--in/--weights[/--calibration].
int run_single(const QuantReportArgs& a, const CLI::App& sub) {
  const OpSpec& op = find_op(a.op);
  if (op.name != kInt8Op && op.name != kInt4Op)
    fail(Errc::invalid_argument, "--op {}: quant-report covers {} (a linear layer y = a · wᵀ)", op.name, kLayerOps);
  Job job;
  choose_forms(op.name, a.scheme, a.activations, "--scheme ", "--activations ", job);
  if (job.activations != "int8-per-tensor") {
    for (const char* flag : {"--calibration", "--method", "--symmetric", "--asymmetric"}) {
      if (sub.count(flag))
        fail(Errc::invalid_argument, "{}: {}'s activations are {}: nothing to calibrate (the flag is int8_gemm's)", flag,
             op.name, job.activations == "float32" ? "not quantized" : "quantized per row at run time");
    }
  }
  try {
    job.method = quant::parse_method(a.method);
    quant::check_method(job.method, a.symmetric);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
  job.symmetric = a.symmetric;
  const std::map<std::string, std::string> ins = assignment_map(a.ins, "--in");
  const std::map<std::string, std::string> ws = assignment_map(a.weights, "--weights");
  const std::map<std::string, std::string> cal = assignment_map(a.calibration, "--calibration");
  for (const auto& [name, path] : ins) {
    if (name != "a") fail(Errc::invalid_argument, "--in {}={}: quant-report takes --in a=X.npy (float32 [.., K])", name, path);
  }
  for (const auto& [name, path] : ws) {
    if (name != "w") fail(Errc::invalid_argument, "--weights {}={}: quant-report takes --weights w=W.npy (float32 [N, K])", name, path);
  }
  for (const auto& [name, path] : cal) {
    if (name != "a")
      fail(Errc::invalid_argument, "--calibration {}={}: quant-report takes --calibration a=CAL.npy (float32 [.., K])", name,
           path);
  }
  if (!ins.count("a")) fail(Errc::invalid_argument, "quant-report: missing --in a=X.npy (float32 activations [.., K])");
  if (!ws.count("w")) fail(Errc::invalid_argument, "quant-report: missing --weights w=W.npy (float32 weights [N, K])");
  job.a = {"--in a=", ins.at("a")};
  job.w = {"--weights w=", ws.at("w")};
  if (cal.count("a")) job.cal = {"--calibration a=", cal.at("a")};
  const quant::OpReport rep = measure(op, a.target, job);
  if (a.format == "json") std::cout << quant::to_json(rep).dump(2) << '\n';
  else std::cout << quant::format_text(rep);
  return 0;
}

// Every op of --layer LAYER.json, ranked.
int run_layer(const QuantReportArgs& a, bool threshold_given) {
  std::vector<quant::LayerEntry> entries;
  try {
    entries = quant::read_layer(a.layer);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
  std::vector<const OpSpec*> ops;
  for (const quant::LayerEntry& e : entries) {
    const OpSpec* known = nullptr;
    for (const OpSpec* o : all_ops()) {
      if (o->name == e.op) known = o;
    }
    if (!known) fail(Errc::invalid_argument, "{}: {}.op: '{}': unknown op (a layer's ops are {})", a.layer, e.key, e.op, kLayerOps);
    if (known->name != kInt8Op && known->name != kInt4Op)
      fail(Errc::invalid_argument, "{}: {}.op: '{}': quant-report covers {} (a linear layer y = a · wᵀ)", a.layer, e.key, e.op,
           kLayerOps);
    ops.push_back(known);
  }
  std::vector<quant::OpReport> reports;
  for (size_t i = 0; i < entries.size(); ++i) {
    const quant::LayerEntry& e = entries[i];
    const std::string at = a.layer + ": " + e.key;
    Job job;
    job.name = e.name;
    job.a = {at + ".in.a: ", e.a};
    job.w = {at + ".weights.w: ", e.w};
    if (!e.calibration.empty()) job.cal = {at + ".calibration.a: ", e.calibration};
    // The entry's scheme, else --scheme, else the op's; a refusal names where it came from.
    choose_forms(e.op, !e.scheme.empty() ? e.scheme : a.scheme, e.activations,
                 e.scheme.empty() ? at + ": --scheme " : at + ".scheme: ", at + ".activations: ", job);
    if (job.activations != "int8-per-tensor" && e.calibration_keys)
      fail(Errc::invalid_argument, "{}: {}'s activations are {}: calibration, method and mode are int8_gemm's", at, e.op,
           job.activations == "float32" ? "not quantized" : "quantized per row at run time");
    job.method = e.method;
    job.symmetric = e.symmetric;
    reports.push_back(measure(*ops[i], a.target, job));
  }
  if (a.format == "json") std::cout << quant::layer_json(a.layer, reports, a.threshold, threshold_given).dump(2) << '\n';
  else std::cout << quant::format_layer_text(a.layer, reports, a.threshold, threshold_given);
  return 0;
}

int run_quant_report(const QuantReportArgs& a, const CLI::App& sub) {
  if (a.format != "text" && a.format != "json") fail(Errc::invalid_argument, "--format {}: must be text or json", a.format);
  if (a.symmetric && a.asymmetric)
    fail(Errc::invalid_argument, "--symmetric and --asymmetric: give one of them (activations; default asymmetric)");
  const bool threshold_given = sub.count("--threshold") > 0;
  if (!a.layer.empty()) {
    for (const char* flag :
         {"--op", "--in", "--weights", "--calibration", "--method", "--symmetric", "--asymmetric", "--activations"}) {
      if (sub.count(flag))
        fail(Errc::invalid_argument,
             "--layer and {}: LAYER.json names each op, its files, calibration set, method and mode (give one or the other)",
             flag);
    }
    if (threshold_given && !(std::isfinite(a.threshold) && a.threshold >= 0))
      fail(Errc::invalid_argument, "--threshold {}: must be a finite nmse >= 0", a.threshold);
    return run_layer(a, threshold_given);
  }
  if (threshold_given)
    fail(Errc::invalid_argument, "--threshold: only with --layer (it marks which of a layer's ops are sensitive)");
  if (a.op.empty())
    fail(Errc::invalid_argument,
         "quant-report: give --op int8_gemm|int4_gemm --in a=X.npy --weights w=W.npy, or --layer LAYER.json");
  return run_single(a, sub);
}

}  // namespace

void add_quant_report(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<QuantReportArgs>();
  CLI::App* sub = app.add_subcommand(
      "quant-report",
      "error a quantized int8_gemm or int4_gemm layer adds to its fp32 output, split by weight and activation rounding; "
      "over a layer list, the ops ranked and the sensitive ones named");
  sub->add_option("--op", args->op, "the layer's op (int8_gemm or int4_gemm)");
  sub->add_option("--in", args->ins, "a=X.npy: float32 or float16 activations [.., K], where the error is measured");
  sub->add_option("--weights", args->weights, "w=W.npy: float32 or float16 weights [N, K], one row per output channel");
  sub->add_option("--calibration", args->calibration,
                  "a=CAL.npy: float32 or float16 activations [.., K] to calibrate on (default: X itself)");
  sub->add_option("--layer", args->layer, "LAYER.json: several int8_gemm/int4_gemm ops to rank (docs/quantization.md)");
  sub->add_option("--threshold", args->threshold,
                  "with --layer: an op is sensitive above this output nmse (default 1e-6, the gate's fp16 rtol squared)");
  sub->add_option("--scheme", args->scheme,
                  "weight scheme: int8-per-channel (int8_gemm's, symmetric) or int4-group:32|64|128[,asymmetric] "
                  "(int4_gemm's; default int4-group:32, symmetric)");
  sub->add_option("--activations", args->activations,
                  "int4_gemm's activations: int8-per-token (default; a scale per row) or float32 (int8_gemm's are "
                  "int8-per-tensor, calibrated)");
  sub->add_option("--method", args->method, "activation calibration: minmax (default), percentile:P or mse");
  sub->add_flag("--symmetric", args->symmetric, "activations symmetric (zero point 0)");
  sub->add_flag("--asymmetric", args->asymmetric, "activations asymmetric (the default)");
  sub->add_option("--target", args->target, "where the kernel runs (default cpu)");
  sub->add_option("--format", args->format, "text (default) or json");
  sub->callback([args, sub, &exit_code] { exit_code = run_quant_report(*args, *sub); });
}

}  // namespace npukit::cli
