#include "tools/quantize/quant_report.h"

#include <algorithm>
#include <cmath>

#include "runtime/message.h"

namespace npukit::quant {
namespace {

// NMSE of a channel or the whole tensor: an exactly rebuilt zero signal has error 0, a
// zero signal rebuilt as non-zero has no finite ratio and reports the error energy itself.
double nmse(double err2, double ref2) {
  if (ref2 == 0) return err2;
  return err2 / ref2;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) append(out, "{}{}", i ? ", " : "", shape[i]);
  return out + "]";
}

}  // namespace

ErrorReport reconstruction_error(const float* w, const float* w_hat, int64_t N, int64_t K, int64_t worst) {
  ErrorReport r;
  r.N = N;
  r.K = K;
  double err2 = 0, ref2 = 0, hat2 = 0, dot = 0;
  std::vector<ChannelError> channels(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    double ce = 0, cr = 0;
    for (int64_t k = 0; k < K; ++k) {
      const double a = w[n * K + k], b = w_hat[n * K + k], d = a - b;
      ce += d * d;
      cr += a * a;
      hat2 += b * b;
      dot += a * b;
      if (std::fabs(d) > r.max_abs_error) {
        r.max_abs_error = std::fabs(d);
        r.max_error_n = n;
        r.max_error_k = k;
      }
    }
    channels[size_t(n)] = {n, nmse(ce, cr)};
    err2 += ce;
    ref2 += cr;
  }
  r.nmse = nmse(err2, ref2);
  if (ref2 == 0 && hat2 == 0) r.cosine = 1;
  else if (ref2 == 0 || hat2 == 0) r.cosine = 0;
  else r.cosine = dot / std::sqrt(ref2 * hat2);
  const size_t keep = size_t(std::min<int64_t>(std::max<int64_t>(worst, 0), N));
  std::partial_sort(channels.begin(), channels.begin() + keep, channels.end(), [](const ChannelError& a, const ChannelError& b) {
    return a.nmse != b.nmse ? a.nmse > b.nmse : a.channel < b.channel;
  });
  r.worst.assign(channels.begin(), channels.begin() + keep);
  return r;
}

std::string format_text(const Summary& s) {
  const ErrorReport& e = s.error;
  std::string out;
  append(out, "quantized {} [{}, {}] as {}\n", s.input, e.N, e.K, s.scheme);
  append(out, "  q {} {}, scales float32 {}", s.q_dtype, shape_text(s.q_shape), shape_text(s.scales_shape));
  if (!s.zero_point_dtype.empty()) append(out, ", zero_points {} {}", s.zero_point_dtype, shape_text(s.scales_shape));
  append(out, "; {:.3f} bits per weight\n", s.bits_per_weight);
  append(out, "reconstruction error\n");
  append(out, "  nmse           {:.6e}\n", e.nmse);
  append(out, "  cosine         {:.9f}\n", e.cosine);
  append(out, "  max abs error  {:.6e} at w[{}, {}]\n", e.max_abs_error, e.max_error_n, e.max_error_k);
  append(out, "worst channels by nmse\n");
  for (const ChannelError& c : e.worst) append(out, "  channel {:>6}  nmse {:.6e}\n", c.channel, c.nmse);
  return out;
}

nlohmann::json to_json(const Summary& s) {
  const ErrorReport& e = s.error;
  nlohmann::json worst = nlohmann::json::array();
  for (const ChannelError& c : e.worst) worst.push_back({{"channel", c.channel}, {"nmse", c.nmse}});
  nlohmann::json j = {
      {"input", s.input},
      {"scheme", s.scheme},
      {"shape", {e.N, e.K}},
      {"q", {{"dtype", s.q_dtype}, {"shape", s.q_shape}}},
      {"scales", {{"dtype", "float32"}, {"shape", s.scales_shape}}},
      {"bits_per_weight", s.bits_per_weight},
      {"error",
       {{"nmse", e.nmse},
        {"cosine", e.cosine},
        {"max_abs_error", e.max_abs_error},
        {"max_abs_error_at", {e.max_error_n, e.max_error_k}},
        {"worst_channels", worst}}},
  };
  if (!s.zero_point_dtype.empty()) j["zero_points"] = {{"dtype", s.zero_point_dtype}, {"shape", s.scales_shape}};
  return j;
}

}  // namespace npukit::quant
