// Golden activation calibration (docs/quantization.md), the reference `npukit calibrate`'s
// library (tools/quantize/calibration.h) is checked against bit for bit: int8, one scale
// and zero point for all samples. Written apart from tools/quantize (full sorts instead of
// selection, golden's own round half to even, no shared code), in the contract's fp32 with
// fp64 sums in index order; built with -ffp-contract=off.
#pragma once

#include <cstdint>

namespace npukit::golden {

enum class CalibMethod { minmax, percentile, mse };

struct ActivationCalibration {
  float scale = 1;
  int32_t zero_point = 0;
  float lo = 0, hi = 0;  // the clipping range (symmetric: −t, t)
  int64_t clipped = 0;   // samples with rhe(x / s) + zp outside the q range
  double err2 = 0;       // Σ (x − x')², fp64 in index order
  double ref2 = 0;       // Σ x²
};

// x[0, n), n ≥ 1, all finite. q range: symmetric [−127, 127] with zp = 0, asymmetric
// [−128, 127]. s = t / 127 or fp32((fp64(hi) − fp64(lo)) / 255), 1 if 0;
// zp = clamp(rhe(−128 − lo / s), −128, 127); x' = s · (q − zp).
//   minmax:     t = max|x|, [lo, hi] = [min(0, min x), max(0, max x)]
//   percentile: numpy-linear percentiles of |x| (P) or of x (100 − P and P), 0 kept in range
//   mse:        the minmax range times i / 100, i = 1 … 100, least err2, ties to larger i
ActivationCalibration calibrate_int8(const float* x, int64_t n, CalibMethod method, double percentile, bool symmetric);

}  // namespace npukit::golden
