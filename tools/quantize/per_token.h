// Per-token (per-row) int8 activations for `npukit quant-report` on int4_gemm, whose int8
// activations come with one scale per row (docs/ops/int4_gemm.md): the same formula as the
// per_token_quant op (ops/per_token_quant.h), restated here because tools/quantize links
// no kernel code. fp32 arithmetic, built with -ffp-contract=off like the rest of this library.
#pragma once

#include <cstdint>
#include <vector>

namespace npukit::quant {

struct PerToken {
  std::vector<int8_t> q;       // [M, K]
  std::vector<float> scales;   // [M]
  std::vector<float> x_hat;    // [M, K]: scales[m] · q, what the kernel's int8 input stands for
};

// x [M, K], every value finite. Per row: s = max|x| / 127 (fp32), q = clamp(rne(x / s), −127,
// 127); a row of zeros gets s = 0 and q = 0 (its dequantized row is exactly 0).
PerToken quantize_per_token(const float* x, int64_t M, int64_t K);

}  // namespace npukit::quant
