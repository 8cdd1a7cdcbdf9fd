// `npukit quant-report`'s reports (docs/quantization.md): one quantized linear layer's
// output error by stage, and over a layer list (LAYER.json) the ops ranked by that error,
// those above a threshold marked sensitive (the ones to keep in fp16). Plain C++, no
// runtime and no op registry: the command measures, this file parses, ranks and prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/quantize/calibration.h"
#include "tools/quantize/layer_error.h"

namespace npukit::quant {

// The default sensitivity threshold, from the gate's tolerance policy: a float16 output
// passes when every element is within rtol = 1e-3 of the reference (golden/tolerance.cpp,
// default_tolerance(float16); the float16 hooks of int8_gemm, rms_norm, rope, silu_mul use
// the same 1e-3). An output whose every element is within rtol relative has
// Σ (y − ref)² ≤ rtol² · Σ ref², so NMSE ≤ rtol²: an int8 layer above 1e-6 is further from
// fp32 than the gate lets an fp16 kernel be. Restated here (tools/quantize links no golden
// code); layer_report_test checks it against golden::default_tolerance.
inline constexpr double kGateFloat16Rtol = 1e-3;
inline constexpr double kDefaultSensitiveNmse = kGateFloat16Rtol * kGateFloat16Rtol;

// What one quantized layer measured: the inputs, the parameters and the error by stage.
struct OpReport {
  std::string name;  // the op's name in LAYER.json; "" for a single --op report
  std::string op, target;
  int64_t M = 0, N = 0, K = 0;
  std::string weights_file, scheme;  // scheme_name(…, true)
  std::string activations_file;      // X, where the error is measured
  std::string calibration_file;      // where the parameters come from: X itself or a separate set
  bool separate_calibration = false;
  // How X reaches the kernel: "int8-per-tensor" (int8_gemm: one scale and zero point,
  // calibrated as below), "int8-per-token" (int4_gemm: a scale per row at run time, no
  // calibration) or "float32" (int4_gemm: not quantized).
  std::string activations = "int8-per-tensor";
  // int8-per-tensor only: the calibration.
  std::string method, mode;          // method_name(…), "symmetric" / "asymmetric"
  Calibration calibration;           // on the calibration set (its count, clipping, nmse)
  std::string scale_text;            // param_float_text(calibration.scale)
  // X as the kernel takes it: samples, how many clip, Σ (x − x')² / Σ x².
  int64_t x_count = 0, x_clipped = 0;
  double x_clip_fraction = 0, x_nmse = 0;
  StageErrors stages;
  // The parameters `npukit run` takes for the same layer, as the command passed them:
  // "--param a_scale=S --param a_zero_point=Z" (int8_gemm), "--param group=G" (int4_gemm).
  std::string args;
};

std::string format_text(const OpReport& r);
nlohmann::json to_json(const OpReport& r);

// One entry of LAYER.json's "ops", its paths resolved against the file's directory.
struct LayerEntry {
  std::string key;  // "ops[2]", for messages
  std::string name, op;
  std::string a, w, calibration;  // calibration "" when the entry has none (X itself)
  CalibrationMethod method;
  bool symmetric = false;
  bool calibration_keys = false;  // calibration, method or mode given (int8-per-tensor only)
  // "" when absent: the op's default. scheme in parse_scheme_and_mode's form (checked here),
  // activations as OpReport::activations (checked by the command, which knows the ops).
  std::string scheme, activations;
};

// LAYER.json's text, `file` naming it in messages and anchoring relative paths:
//   {"ops": [{"name": str, "op": str, "in": {"a": path}, "weights": {"w": path},
//             "calibration": {"a": path}, "method": str, "mode": "asymmetric"|"symmetric",
//             "scheme": str, "activations": str}, …]}
// calibration, method (default minmax), mode (default asymmetric), scheme and activations
// optional; names unique;
// no other keys. Throws std::invalid_argument "FILE: KEY.PATH: what is wrong (the rule)" on
// one line. The op's name is checked by the caller (this library knows no ops).
std::vector<LayerEntry> parse_layer(const std::string& text, const std::string& file);

// The file's contents parsed as above; an unreadable file is a std::invalid_argument too.
std::vector<LayerEntry> read_layer(const std::string& file);

// Indices of `nmse` from the largest to the smallest (a NaN ranks first: nothing is known to
// be good about it); equal values keep their order.
std::vector<size_t> rank_by_nmse(const std::vector<double>& nmse);

// Sensitive: the quantized output's nmse is above the threshold (or NaN).
bool is_sensitive(double nmse, double threshold);

// Where the threshold came from, for the report: "--threshold" or the default's derivation.
std::string threshold_source(bool given);

// The ranked table (worst first) and the "keep in fp16: …" line; reports in LAYER.json's order.
std::string format_layer_text(const std::string& file, const std::vector<OpReport>& reports, double threshold,
                              bool threshold_given);
nlohmann::json layer_json(const std::string& file, const std::vector<OpReport>& reports, double threshold,
                          bool threshold_given);

}  // namespace npukit::quant
