#include "tools/quantize/layer_error.h"

#include <cmath>

namespace npukit::quant {

std::vector<double> linear_f64(const float* x, const float* w, int64_t M, int64_t N, int64_t K) {
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(x[m * K + k]) * double(w[n * K + k]);
      y[size_t(m * N + n)] = acc;
    }
  }
  return y;
}

OutputError output_error(const double* ref, const double* y, int64_t n) {
  OutputError e;
  double err2 = 0, ref2 = 0, y2 = 0, dot = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = y[i] - ref[i];
    err2 += d * d;
    ref2 += ref[i] * ref[i];
    y2 += y[i] * y[i];
    dot += y[i] * ref[i];
    if (std::fabs(d) > e.max_abs) {
      e.max_abs = std::fabs(d);
      e.max_at = i;
    }
  }
  e.nmse = ref2 == 0 ? err2 : err2 / ref2;
  if (ref2 == 0 && y2 == 0) e.cosine = 1;
  else if (ref2 == 0 || y2 == 0) e.cosine = 0;
  else e.cosine = dot / std::sqrt(ref2 * y2);
  return e;
}

StageErrors stage_errors(const std::vector<double>& ref, const std::vector<double>& weights_only,
                         const std::vector<double>& activations_only, const std::vector<double>& dequantized,
                         const std::vector<double>& kernel) {
  StageErrors s;
  const auto n = static_cast<int64_t>(ref.size());
  s.weights_only = output_error(ref.data(), weights_only.data(), n);
  s.activations_only = output_error(ref.data(), activations_only.data(), n);
  s.both = output_error(ref.data(), kernel.data(), n);
  // The kernel against its exact operands, its error energy over the fp32 output's.
  s.accumulation = output_error(dequantized.data(), kernel.data(), n);
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = kernel[size_t(i)] - dequantized[size_t(i)];
    err2 += d * d;
    ref2 += ref[size_t(i)] * ref[size_t(i)];
  }
  s.accumulation.nmse = ref2 == 0 ? err2 : err2 / ref2;
  const double sum = s.weights_only.nmse + s.activations_only.nmse + s.accumulation.nmse;
  if (sum > 0) {
    s.weight_share = s.weights_only.nmse / sum;
    s.activation_share = s.activations_only.nmse / sum;
    s.accumulation_share = s.accumulation.nmse / sum;
  }
  s.interaction = s.both.nmse - sum;
  return s;
}

}  // namespace npukit::quant
