// `npukit quantize`: float weights [N, K] to int8 per channel or int4 per group, the
// quantized tensors written as .npy and the reconstruction error reported
// (docs/quantization.md). The arithmetic is tools/quantize/weight_quant.h's.
#include <iostream>
#include <map>
#include <memory>

#include "runtime/error.h"
#include "runtime/text.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/float_npy.h"
#include "tools/npy.h"
#include "tools/quantize/quant_report.h"
#include "tools/quantize/weight_quant.h"

namespace npukit::cli {
namespace {

struct QuantizeArgs {
  std::vector<std::string> ins, outs;
  std::string scheme, format = "text";
  bool symmetric = false, asymmetric = false;
};

// The worst channels the report lists.
constexpr int64_t kWorstChannels = 5;

std::vector<float> read_weights(const std::string& path, int64_t& N, int64_t& K) {
  FloatNpy arr = read_float_npy("--in w=", path, "weights");
  if (arr.shape.size() != 2)
    fail(Errc::invalid_argument, "--in w={}: {} dimensions: weights must be 2-D [N, K] (one row per output channel)", path,
         arr.shape.size());
  N = arr.shape[0];
  K = arr.shape[1];
  return std::move(arr.values);
}

void write_npy(const std::string& name, const std::string& path, DType dtype, std::vector<int64_t> shape, const void* data,
               size_t bytes) {
  npy::NpyArray arr;
  arr.dtype = dtype;
  arr.shape = std::move(shape);
  const auto* p = static_cast<const uint8_t*>(data);
  arr.bytes.assign(p, p + bytes);
  try {
    npy::write(path, arr);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, "--out {}={}: {}", name, path, e.what());
  }
}

int run_quantize(const QuantizeArgs& a) {
  if (a.format != "text" && a.format != "json") fail(Errc::invalid_argument, "--format {}: must be text or json", a.format);
  if (a.symmetric && a.asymmetric) fail(Errc::invalid_argument, "--symmetric and --asymmetric: give one of them (default symmetric)");
  quant::Scheme scheme;
  try {
    scheme = quant::parse_scheme(a.scheme, !a.asymmetric);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
  const std::map<std::string, std::string> ins = assignment_map(a.ins, "--in");
  for (const auto& [name, path] : ins) {
    if (name != "w") fail(Errc::invalid_argument, "--in {}={}: quantize has no input '{}' (inputs: w)", name, path, name);
  }
  if (!ins.count("w")) fail(Errc::invalid_argument, "quantize: missing --in w=W.npy (float32 or float16 [N, K])");
  const std::map<std::string, std::string> outs = assignment_map(a.outs, "--out");
  for (const auto& [name, path] : outs) {
    if (name != "q" && name != "scales" && name != "zero_points")
      fail(Errc::invalid_argument, "--out {}={}: quantize has no output '{}' (outputs: q, scales, zero_points)", name, path, name);
  }
  for (const char* need : {"q", "scales"}) {
    if (!outs.count(need)) fail(Errc::invalid_argument, "quantize: missing --out {}=FILE.npy", need);
  }
  if (scheme.symmetric && outs.count("zero_points"))
    fail(Errc::invalid_argument, "--out zero_points={}: a symmetric scheme has no zero points (add --asymmetric)", outs.at("zero_points"));
  if (!scheme.symmetric && !outs.count("zero_points"))
    fail(Errc::invalid_argument, "quantize --asymmetric: missing --out zero_points=FILE.npy (the weights cannot be rebuilt without them)");

  const std::string& w_path = ins.at("w");
  int64_t N = 0, K = 0;
  const std::vector<float> w = read_weights(w_path, N, K);
  quant::Quantized qw;
  try {
    qw = quant::quantize(w.data(), N, K, scheme);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, "--in w={}: {}", w_path, e.what());
  }

  const bool int8 = scheme.bits == quant::Bits::int8;
  quant::Summary s;
  s.scheme = quant::scheme_name(scheme, true);
  s.input = w_path;
  s.q_shape = {N, int8 ? K : K / 2};
  s.scales_shape = {N, qw.groups};
  s.q_dtype = int8 ? "int8" : "uint8";
  write_npy("q", outs.at("q"), int8 ? DType::int8 : DType::uint8, s.q_shape, qw.q.data(), qw.q.size());
  write_npy("scales", outs.at("scales"), DType::float32, s.scales_shape, qw.scales.data(), qw.scales.size() * sizeof(float));
  double stored_bits = 8.0 * double(qw.q.size()) + 32.0 * double(qw.scales.size());
  if (!scheme.symmetric) {
    // int8's zero points are signed like its q; int4's unsigned like its nibbles.
    std::vector<uint8_t> zp(qw.zero_points.size());
    for (size_t i = 0; i < zp.size(); ++i) zp[i] = static_cast<uint8_t>(qw.zero_points[i]);
    s.zero_point_dtype = int8 ? "int8" : "uint8";
    write_npy("zero_points", outs.at("zero_points"), int8 ? DType::int8 : DType::uint8, s.scales_shape, zp.data(), zp.size());
    stored_bits += 8.0 * double(zp.size());
  }
  s.bits_per_weight = stored_bits / double(N * K);
  const std::vector<float> w_hat = quant::dequantize(qw, scheme);
  s.error = quant::reconstruction_error(w.data(), w_hat.data(), N, K, kWorstChannels);
  if (a.format == "json")
    std::cout << quant::to_json(s).dump(2) << '\n';
  else
    std::cout << quant::format_text(s);
  return 0;
}

}  // namespace

void add_quantize(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* sub = app.add_subcommand("quantize", "quantize float weights [N, K] to int8 per channel or int4 per group; report the error");
  sub->add_option("--in", args->ins, "w=W.npy: float32 or float16 weights [N, K], one row per output channel")->required();
  sub->add_option("--scheme", args->scheme, "int8-per-channel or int4-group[:32|:64|:128] (group 32 by default)")->required();
  sub->add_flag("--symmetric", args->symmetric, "scale only, q in [-127, 127] or [-7, 7] (the default)");
  sub->add_flag("--asymmetric", args->asymmetric, "scale and zero point per group, q over the whole int8 or uint4 range");
  sub->add_option("--out", args->outs, "q=Q.npy, scales=S.npy and, with --asymmetric, zero_points=Z.npy")->required();
  sub->add_option("--format", args->format, "text (default) or json");
  sub->callback([args, &exit_code] { exit_code = run_quantize(*args); });
}

}  // namespace npukit::cli
