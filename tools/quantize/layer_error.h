// The error a quantized linear layer adds to its output, and where it comes from, for
// `npukit quant-report` (docs/quantization.md): y = x · wᵀ in fp32 against the same with
// dequantized weights only, dequantized activations only, and both (the kernel).
// Plain C++, no runtime; the fp32 reference is fp64 sums of fp32 products' operands.
#pragma once

#include <cstdint>
#include <vector>

namespace npukit::quant {

// y[m, n] = Σ_k x[m, k] · w[n, k], summed in fp64 in k order; x [M, K], w [N, K] (nn.Linear).
std::vector<double> linear_f64(const float* x, const float* w, int64_t M, int64_t N, int64_t K);

struct OutputError {
  double nmse = 0;     // Σ (y − ref)² / Σ ref² (the error energy itself when Σ ref² = 0)
  double cosine = 1;   // Σ y·ref / sqrt(Σ y² · Σ ref²); 1 when both are zero, 0 when one is
  double max_abs = 0;  // max |y − ref|
  int64_t max_at = 0;  // flat index of the first max
};

OutputError output_error(const double* ref, const double* y, int64_t n);

// The stages against the fp32 output `ref`: weights only, activations only, and the kernel
// (`both`); and the kernel against the exact product of the operands it was given
// (`dequantized` = x' · w'ᵀ in fp64), which is what its own arithmetic adds (fp32 sums and
// epilogue; the output's rounding): `accumulation`, its nmse over Σ ref² like the others.
// The shares split the error between the three by their NMSE alone, e.g. weight_share =
// nmse(weights only) / (nmse(weights only) + nmse(activations only) + nmse(accumulation))
// (all 0 when none has any error); `interaction` = nmse(both) − the three, what the
// roundings add (or cancel) together.
struct StageErrors {
  OutputError weights_only, activations_only, accumulation, both;
  double weight_share = 0, activation_share = 0, accumulation_share = 0, interaction = 0;
};

StageErrors stage_errors(const std::vector<double>& ref, const std::vector<double>& weights_only,
                         const std::vector<double>& activations_only, const std::vector<double>& dequantized,
                         const std::vector<double>& kernel);

}  // namespace npukit::quant
