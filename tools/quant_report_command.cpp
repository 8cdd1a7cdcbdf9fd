// `npukit quant-report`: how much error quantizing a linear layer adds to its output, and
// which rounding it comes from (docs/quantization.md). The weights are quantized by
// tools/quantize/weight_quant.h, the activations calibrated by tools/quantize/calibration.h,
// the quantized layer is npukit's int8_gemm kernel through the runtime (out=float32), and the
// fp32 layer and the single-stage variants are tools/quantize/layer_error.h's fp64-summed
// matmul.
#include <cstring>
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
#include "tools/npy.h"
#include "tools/quantize/calibration.h"
#include "tools/quantize/half.h"
#include "tools/quantize/layer_error.h"
#include "tools/quantize/weight_quant.h"

namespace npukit::cli {
namespace {

struct QuantReportArgs {
  std::string op, scheme = "int8-per-channel", method = "minmax", format = "text", target = "cpu";
  std::vector<std::string> ins, weights;
  bool symmetric = false, asymmetric = false;
};

// Only the linear layer so far: its activation input, weight input and weight scales.
constexpr const char* kLayerOp = "int8_gemm";

// A float32 (or float16, widened exactly) array of at least one dimension, every element finite.
std::vector<float> read_floats(const char* flag, const std::string& name, const std::string& path,
                               std::vector<int64_t>& shape) {
  npy::NpyArray arr;
  try {
    arr = npy::read(path);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, "{} {}={}", flag, name, e.what());
  }
  if (arr.dtype != DType::float32 && arr.dtype != DType::float16)
    fail(Errc::invalid_argument, "{} {}={}: dtype {}: must be float32 or float16 (x.astype(np.float32))", flag, name, path,
         dtype_name(arr.dtype));
  const int64_t count = arr.size();
  if (arr.shape.empty() || count <= 0 || arr.bytes.size() != uint64_t(count) * dtype_size(arr.dtype))
    fail(Errc::invalid_argument, "{} {}={}: shape {}: must have at least one dimension and one element", flag, name, path,
         shape_string(arr.shape));
  std::vector<float> x(static_cast<size_t>(count));
  if (arr.dtype == DType::float16) x = quant::widen_halves(arr.bytes.data(), count);
  else std::memcpy(x.data(), arr.bytes.data(), arr.bytes.size());
  const int64_t bad = quant::first_non_finite(x.data(), count);
  if (bad >= 0)
    fail(Errc::invalid_argument, "{} {}={}: element {} = {}: every value must be finite", flag, name, path, bad,
         x[size_t(bad)]);
  shape = arr.shape;
  return x;
}

nlohmann::json error_json(const quant::OutputError& e) {
  return {{"nmse", e.nmse}, {"cosine", e.cosine}, {"max_abs_error", e.max_abs}};
}

int run_quant_report(const QuantReportArgs& a) {
  if (a.format != "text" && a.format != "json") fail(Errc::invalid_argument, "--format {}: must be text or json", a.format);
  if (a.symmetric && a.asymmetric)
    fail(Errc::invalid_argument, "--symmetric and --asymmetric: give one of them (activations; default asymmetric)");
  const OpSpec& op = find_op(a.op);
  if (op.name != kLayerOp)
    fail(Errc::invalid_argument, "--op {}: quant-report covers {} only (a linear layer y = a · wᵀ)", op.name, kLayerOp);
  quant::Scheme scheme;
  quant::CalibrationMethod method;
  try {
    scheme = quant::parse_scheme(a.scheme, true);
    method = quant::parse_method(a.method);
    quant::check_method(method, a.symmetric);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
  if (scheme.bits != quant::Bits::int8)
    fail(Errc::invalid_argument, "--scheme {}: {} reads int8 weights with one scale per channel (int8-per-channel)", a.scheme,
         op.name);
  const std::map<std::string, std::string> ins = assignment_map(a.ins, "--in");
  const std::map<std::string, std::string> ws = assignment_map(a.weights, "--weights");
  for (const auto& [name, path] : ins) {
    if (name != "a") fail(Errc::invalid_argument, "--in {}={}: quant-report takes --in a=X.npy (float32 [.., K])", name, path);
  }
  for (const auto& [name, path] : ws) {
    if (name != "w") fail(Errc::invalid_argument, "--weights {}={}: quant-report takes --weights w=W.npy (float32 [N, K])", name, path);
  }
  if (!ins.count("a")) fail(Errc::invalid_argument, "quant-report: missing --in a=X.npy (float32 activations [.., K])");
  if (!ws.count("w")) fail(Errc::invalid_argument, "quant-report: missing --weights w=W.npy (float32 weights [N, K])");

  std::vector<int64_t> x_shape, w_shape;
  const std::vector<float> x = read_floats("--in", "a", ins.at("a"), x_shape);
  const std::vector<float> w = read_floats("--weights", "w", ws.at("w"), w_shape);
  if (w_shape.size() != 2)
    fail(Errc::invalid_argument, "--weights w={}: shape {}: weights must be 2-D [N, K]", ws.at("w"), shape_string(w_shape));
  const int64_t N = w_shape[0], K = w_shape[1];
  if (x_shape.back() != K)
    fail(Errc::invalid_argument, "--in a={}: shape {}: the last dimension must be K = {}, the weights' second", ins.at("a"),
         shape_string(x_shape), K);
  const int64_t M = int64_t(x.size()) / K;

  // Weights: int8 per channel, symmetric (int8_gemm's w_scale has no zero point).
  quant::Quantized qw;
  try {
    qw = quant::quantize(w.data(), N, K, scheme);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, "--weights w={}: {}", ws.at("w"), e.what());
  }
  const std::vector<float> w_hat = quant::dequantize(qw, scheme);

  // Activations: calibrated on X itself, then quantized with the parameters as run takes them.
  const bool sym = a.symmetric;
  const quant::QRange r8{-128, 127};
  const quant::Calibration c = quant::calibrate(x.data(), int64_t(x.size()), method, sym, r8);
  const std::string scale_text = quant::param_float_text(c.scale);
  std::vector<int8_t> qx(x.size());
  quant::quantize_samples(x.data(), int64_t(x.size()), c.scale, c.zero_point, sym, r8, qx.data());
  std::vector<float> x_hat(x.size());
  for (size_t i = 0; i < x.size(); ++i) x_hat[i] = c.scale * float(int32_t(qx[i]) - c.zero_point);

  // Both roundings: the kernel itself.
  std::vector<float> y(static_cast<size_t>(M * N));
  TensorMap tensors;
  tensors["a"] = TensorView{qx.data(), DType::int8, {M, K}, {}};
  tensors["w"] = TensorView{qw.q.data(), DType::int8, {N, K}, {}};
  tensors["w_scale"] = TensorView{qw.scales.data(), DType::float32, {N}, {}};
  tensors["y"] = TensorView{y.data(), DType::float32, {M, N}, {}};
  const std::map<std::string, std::string> params{
      {"out", "float32"}, {"a_scale", scale_text}, {"a_zero_point", std::to_string(c.zero_point)}};
  run_call(bind_call(op, a.target, tensors, params));

  const std::vector<double> ref = quant::linear_f64(x.data(), w.data(), M, N, K);
  const std::vector<double> wo = quant::linear_f64(x.data(), w_hat.data(), M, N, K);
  const std::vector<double> ao = quant::linear_f64(x_hat.data(), w.data(), M, N, K);
  const std::vector<double> both(y.begin(), y.end());
  const quant::StageErrors s = quant::stage_errors(ref, wo, ao, both);

  const std::string mode = sym ? "symmetric" : "asymmetric";
  const std::string args = fmt::format("--param a_scale={} --param a_zero_point={}", scale_text, c.zero_point);
  if (a.format == "json") {
    nlohmann::json j;
    j["op"] = op.name;
    j["target"] = a.target;
    j["shape"] = {{"M", M}, {"N", N}, {"K", K}};
    j["weights"] = {{"file", ws.at("w")}, {"scheme", quant::scheme_name(scheme, true)}};
    j["activations"] = {{"file", ins.at("a")},       {"method", quant::method_name(method)}, {"mode", mode},
                        {"scale", c.scale},           {"zero_point", c.zero_point},           {"clipped", c.clipped},
                        {"clip_fraction", c.clip_fraction}, {"nmse", c.nmse}};
    j["output_error"] = error_json(s.both);
    j["stages"] = {{"weights_only", error_json(s.weights_only)},
                   {"activations_only", error_json(s.activations_only)},
                   {"both", error_json(s.both)}};
    j["shares"] = {{"weights", s.weight_share}, {"activations", s.activation_share}, {"interaction_nmse", s.interaction}};
    j["args"] = args;
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::cout << fmt::format("{} [M={}, N={}, K={}] on {}: weights {} as {}, activations {} by {}, {}\n", op.name, M, N, K,
                           a.target, ws.at("w"), quant::scheme_name(scheme, true), ins.at("a"), quant::method_name(method),
                           mode);
  std::cout << fmt::format("  {}  ({:.4f}% of samples clipped)\n", args, 100.0 * c.clip_fraction);
  std::cout << "output error against fp32\n";
  std::cout << fmt::format("  {:<18} {:>13} {:>13} {:>13} {:>7}\n", "stage", "nmse", "cosine", "max abs", "share");
  const auto row = [](const char* name, const quant::OutputError& e, const std::string& share) {
    std::cout << fmt::format("  {:<18} {:>13.6e} {:>13.9f} {:>13.6e} {:>7}\n", name, e.nmse, e.cosine, e.max_abs, share);
  };
  row("weights only", s.weights_only, fmt::format("{:.1f}%", 100.0 * s.weight_share));
  row("activations only", s.activations_only, fmt::format("{:.1f}%", 100.0 * s.activation_share));
  row("both (kernel)", s.both, "");
  std::cout << fmt::format("  interaction nmse   {:.6e} (both minus the two stages)\n", s.interaction);
  return 0;
}

}  // namespace

void add_quant_report(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<QuantReportArgs>();
  CLI::App* sub = app.add_subcommand(
      "quant-report", "error a quantized int8_gemm layer adds to its fp32 output, split by weight and activation rounding");
  sub->add_option("--op", args->op, "the layer's op (int8_gemm)")->required();
  sub->add_option("--in", args->ins, "a=X.npy: float32 or float16 activations [.., K], also the calibration set")->required();
  sub->add_option("--weights", args->weights, "w=W.npy: float32 or float16 weights [N, K], one row per output channel")->required();
  sub->add_option("--scheme", args->scheme, "weight scheme: int8-per-channel (default; symmetric)");
  sub->add_option("--method", args->method, "activation calibration: minmax (default), percentile:P or mse");
  sub->add_flag("--symmetric", args->symmetric, "activations symmetric (zero point 0)");
  sub->add_flag("--asymmetric", args->asymmetric, "activations asymmetric (the default)");
  sub->add_option("--target", args->target, "where the int8 kernel runs (default cpu)");
  sub->add_option("--format", args->format, "text (default) or json");
  sub->callback([args, &exit_code] { exit_code = run_quant_report(*args); });
}

}  // namespace npukit::cli
