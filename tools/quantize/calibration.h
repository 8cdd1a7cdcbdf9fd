// Activation calibration for `npukit calibrate` (docs/quantization.md): one scale and zero
// point for a whole quantized input (per tensor, as int8_gemm's a_scale/a_zero_point are),
// from a stack of sample activations. fp32 arithmetic where the parameters are made, fp64
// for sums, so that every result is reproducible bit for bit (golden/calibration.h checks
// it; this library is built with -ffp-contract=off, like golden/).
#pragma once

#include <cstdint>
#include <string>

#include "tools/quantize/weight_quant.h"

namespace npukit::quant {

enum class Method { minmax, percentile, mse };

struct CalibrationMethod {
  Method method = Method::minmax;
  double percentile = 100;  // P for Method::percentile, in (0, 100]
};

// "minmax", "percentile:P" (P a number in (0, 100]) or "mse". Throws std::invalid_argument
// naming the text and the rule.
CalibrationMethod parse_method(const std::string& text);

// Asymmetric clipping takes [pct(x, 100 − P), pct(x, P)], which is inverted below P = 50:
// refused there (std::invalid_argument naming the method and the rule).
void check_method(const CalibrationMethod& m, bool symmetric);

// "minmax", "percentile:99.99" (P as shortest round-trip text) or "mse".
std::string method_name(const CalibrationMethod& m);

// The thresholds Method::mse tries: the minmax range scaled by i / kMseSteps, i = 1 … kMseSteps.
inline constexpr int kMseSteps = 100;

// The flat index of the first NaN or ±Inf in x[0, n), or −1 when every sample is finite.
int64_t first_non_finite(const float* x, int64_t n);

struct Calibration {
  float scale = 1;         // finite, > 0
  int32_t zero_point = 0;  // 0 when symmetric, else inside the range
  float lo = 0, hi = 0;    // the clipping range in real values (symmetric: −t, t); holds 0
  float data_min = 0, data_max = 0;
  int64_t count = 0;
  int64_t clipped = 0;     // samples whose q before clamping fell outside the range
  double clip_fraction = 0;  // clipped / count
  double nmse = 0;         // Σ (x − x')² / Σ x² in fp64; the error energy itself when Σ x² = 0
};

// Scale and zero point of x[0, n) (n ≥ 1, every x finite: the caller's rule) for a q range
// r of a signed type (int8: [−128, 127]). With rne = round half to even (nearbyint):
//   symmetric:  t = the threshold (below), s = t / r.hi, zp = 0, q = clamp(rne(x / s), −r.hi, r.hi)
//   asymmetric: [lo, hi] the range (below, always holding 0), s = fp32((fp64(hi) − fp64(lo)) / (r.hi − r.lo)),
//               zp = clamp(rne(r.lo − lo / s), r.lo, r.hi), q = clamp(rne(x / s) + zp, r.lo, r.hi)
// and s = 1 where that s is 0 (all-zero samples, or a range so small that s underflows).
// Dequantized x' = s · (q − zp) in fp32. Ranges:
//   minmax:        t = max |x|;               [lo, hi] = [min(0, min x), max(0, max x)]
//   percentile:P:  t = pct(|x|, P);           [lo, hi] = [min(0, pct(x, 100 − P)), max(0, pct(x, P))]
//                  pct = linear interpolation between order statistics (numpy's default):
//                  h = (n − 1) · P / 100, i = ⌊h⌋, pct = fp32(v[i] + (h − i) · (v[i+1] − v[i])) in fp64
//   mse:           of t_i = fp32(t_minmax · i / kMseSteps) (asymmetric: lo and hi both scaled),
//                  i = 1 … kMseSteps, the one with the least Σ (x − x')² (fp64, in index order);
//                  ties go to the larger i (less clipping).
Calibration calibrate(const float* x, int64_t n, const CalibrationMethod& m, bool symmetric, QRange r);

// Σ (x − x')² in fp64 over x[0, n) quantized with (s, zp) as above; counts the clipped samples.
double squared_error(const float* x, int64_t n, float scale, int32_t zero_point, bool symmetric, QRange r,
                     int64_t* clipped);

// The shortest text that `npukit run --param` (strtod, then fp32, as int8_gemm reads
// a_scale) turns back into exactly `f`; the double's own shortest text where the float's
// would round differently through double.
std::string param_float_text(float f);

// q of each sample with (s, zp) as above, the int8 a that int8_gemm reads.
void quantize_samples(const float* x, int64_t n, float scale, int32_t zero_point, bool symmetric, QRange r, int8_t* q);

}  // namespace npukit::quant
