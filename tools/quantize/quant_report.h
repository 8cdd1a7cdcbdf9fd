// The reconstruction error `npukit quantize` reports: how far the dequantized weights are
// from the originals, overall and for the worst output channels (docs/quantization.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npukit::quant {

struct ChannelError {
  int64_t channel = 0;
  double nmse = 0;
};

struct ErrorReport {
  int64_t N = 0, K = 0;
  // Σ (w − w')² / Σ w², in fp64; 0 when both sums are 0 (all-zero weights, exactly rebuilt).
  double nmse = 0;
  // Σ w·w' / sqrt(Σ w² · Σ w'²); 1 when both are all zeros, 0 when only one is.
  double cosine = 1;
  double max_abs_error = 0;
  int64_t max_error_n = 0, max_error_k = 0;
  std::vector<ChannelError> worst;  // highest per-channel NMSE first, ties by channel
};

// w and w_hat are [N, K]; keeps the `worst` channels.
ErrorReport reconstruction_error(const float* w, const float* w_hat, int64_t N, int64_t K, int64_t worst);

// What the command prints: the scheme, the shapes written and the error.
struct Summary {
  std::string scheme;          // scheme_name(…, true)
  std::string input;           // the path of w
  std::vector<int64_t> q_shape, scales_shape;
  std::string q_dtype, zero_point_dtype;  // zero_point_dtype "" when symmetric
  double bits_per_weight = 0;  // q, scales and zero points over N·K weights
  ErrorReport error;
};

std::string format_text(const Summary& s);
nlohmann::json to_json(const Summary& s);

}  // namespace npukit::quant
