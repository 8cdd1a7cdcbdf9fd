// tools/quantize/layer_error.h (npukit quant-report's arithmetic): the fp64 reference
// matmul, the error metrics, and the split of the error between weight and activation
// rounding, on cases whose answers are known exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tools/quantize/calibration.h"
#include "tools/quantize/layer_error.h"
#include "tools/quantize/weight_quant.h"

namespace npukit::quant {
namespace {

TEST(LayerError, LinearIsXTimesWTransposed) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};            // [2, 3]
  const std::vector<float> w{1, 0, -1, 0.5f, 0.5f, 0.5f};  // [2, 3]
  const std::vector<double> y = linear_f64(x.data(), w.data(), 2, 2, 3);
  EXPECT_EQ(y, (std::vector<double>{-2, 3, -2, 7.5}));
}

TEST(LayerError, OutputErrorMetrics) {
  const std::vector<double> ref{3, 4, 0}, same = ref, off{3, 5, 0}, zero(3, 0.0);
  OutputError e = output_error(ref.data(), same.data(), 3);
  EXPECT_EQ(e.nmse, 0);
  EXPECT_EQ(e.cosine, 1);
  EXPECT_EQ(e.max_abs, 0);
  e = output_error(ref.data(), off.data(), 3);
  EXPECT_EQ(e.nmse, 1.0 / 25);
  EXPECT_EQ(e.max_abs, 1);
  EXPECT_EQ(e.max_at, 1);
  EXPECT_DOUBLE_EQ(e.cosine, 29 / std::sqrt(25.0 * 34));
  EXPECT_EQ(output_error(zero.data(), zero.data(), 3).cosine, 1);
  EXPECT_EQ(output_error(ref.data(), zero.data(), 3).cosine, 0);
  EXPECT_EQ(output_error(zero.data(), off.data(), 3).nmse, 34);  // the error energy itself
}

TEST(LayerError, SharesSplitByStageNmse) {
  // Errors of 0.5 and 0.25 (exact in binary): nmse 0.0625 and 0.015625, shares 0.8 and 0.2.
  const std::vector<double> ref{1, 1, 1, 1}, a{1, 1, 1, 1.5}, b{1, 1.25, 1, 1}, both{1, 1.25, 1, 1.5};
  const StageErrors s = stage_errors(ref, a, b, both, both);
  EXPECT_EQ(s.weights_only.nmse, 0.0625);
  EXPECT_EQ(s.activations_only.nmse, 0.015625);
  EXPECT_EQ(s.accumulation.nmse, 0);
  EXPECT_DOUBLE_EQ(s.weight_share, 0.8);
  EXPECT_DOUBLE_EQ(s.activation_share, 0.2);
  EXPECT_EQ(s.accumulation_share, 0);
  EXPECT_EQ(s.interaction, 0);
  const StageErrors none = stage_errors(ref, ref, ref, ref, ref);
  EXPECT_EQ(none.weight_share, 0);
  EXPECT_EQ(none.activation_share, 0);
  EXPECT_EQ(none.accumulation_share, 0);
}

TEST(LayerError, AccumulationIsTheKernelAgainstItsExactOperands) {
  // The kernel's own rounding: 0.5 off the exact product in one element of four. Its nmse is
  // over the fp32 output's energy (4), so 0.0625, and it takes a share beside the stages'.
  const std::vector<double> ref{1, 1, 1, 1}, a{1, 1, 1, 1.5}, b{1, 1.25, 1, 1}, exact{1, 1.25, 1, 1.5},
      kernel{1.5, 1.25, 1, 1.5};
  const StageErrors s = stage_errors(ref, a, b, exact, kernel);
  EXPECT_EQ(s.accumulation.nmse, 0.0625);
  EXPECT_EQ(s.accumulation.max_abs, 0.5);
  EXPECT_EQ(s.accumulation.max_at, 0);
  EXPECT_DOUBLE_EQ(s.weight_share, 0.0625 / 0.140625);
  EXPECT_DOUBLE_EQ(s.activation_share, 0.015625 / 0.140625);
  EXPECT_DOUBLE_EQ(s.accumulation_share, 0.0625 / 0.140625);
  EXPECT_DOUBLE_EQ(s.weight_share + s.activation_share + s.accumulation_share, 1);
  EXPECT_EQ(s.both.nmse, 0.25 / 4 + 0.0625 / 4 + 0.25 / 4);
  EXPECT_DOUBLE_EQ(s.interaction, s.both.nmse - 0.140625);
}

// Weights that int8 per channel holds exactly (q · 2^-e with |q| = 127 in every row): the
// weight stage adds no error at all, so its share is exactly 0.
TEST(LayerError, ExactlyRepresentableWeightsHaveNoShare) {
  const int64_t M = 4, N = 8, K = 32;
  std::vector<float> w(size_t(N * K)), x(size_t(M * K));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) w[size_t(n * K + k)] = std::ldexp(float((n * 37 + k * 11) % 255 - 127), -int(n % 5) - 3);
    w[size_t(n * K)] = std::ldexp(127.0f, -int(n % 5) - 3);
  }
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) * 0.7f) * 3.0f;
  const Scheme sc{Bits::int8, 0, true};
  const std::vector<float> w_hat = dequantize(quantize(w.data(), N, K, sc), sc);
  ASSERT_EQ(w_hat, w);
  const Calibration c = calibrate(x.data(), M * K, parse_method("minmax"), false, {-128, 127});
  std::vector<int8_t> q(x.size());
  quantize_samples(x.data(), M * K, c.scale, c.zero_point, false, {-128, 127}, q.data());
  std::vector<float> x_hat(x.size());
  for (size_t i = 0; i < x.size(); ++i) x_hat[i] = c.scale * float(q[i] - c.zero_point);
  const std::vector<double> ref = linear_f64(x.data(), w.data(), M, N, K);
  const StageErrors s = stage_errors(ref, linear_f64(x.data(), w_hat.data(), M, N, K),
                                     linear_f64(x_hat.data(), w.data(), M, N, K),
                                     linear_f64(x_hat.data(), w_hat.data(), M, N, K),
                                     linear_f64(x_hat.data(), w_hat.data(), M, N, K));
  EXPECT_EQ(s.weights_only.nmse, 0);
  EXPECT_EQ(s.weight_share, 0);
  EXPECT_EQ(s.activation_share, 1);
  EXPECT_GT(s.activations_only.nmse, 0);
  EXPECT_EQ(s.both.nmse, s.activations_only.nmse);
}

TEST(LayerError, QuantizeSamplesMatchesTheCalibrationError) {
  std::vector<float> x;
  for (int i = -300; i <= 300; ++i) x.push_back(float(i) * 0.013f);
  const Calibration c = calibrate(x.data(), int64_t(x.size()), parse_method("percentile:90"), false, {-128, 127});
  std::vector<int8_t> q(x.size());
  quantize_samples(x.data(), int64_t(x.size()), c.scale, c.zero_point, false, {-128, 127}, q.data());
  double err2 = 0, ref2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = double(x[i]) - double(c.scale * float(q[i] - c.zero_point));
    err2 += d * d;
    ref2 += double(x[i]) * double(x[i]);
  }
  EXPECT_EQ(err2 / ref2, c.nmse);
}

}  // namespace
}  // namespace npukit::quant
