// Weight quantization for `npukit quantize` (docs/quantization.md): float [N, K] weights,
// one row per output channel as int8_gemm's `w`, into int8 per channel or int4 per group
// of K, symmetric or asymmetric. fp32 arithmetic, so that every scale, zero point and q is
// reproducible bit for bit (golden/weight_quant.h checks it; this library is built with
// -ffp-contract=off, like golden/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npukit::quant {

enum class Bits { int8, int4 };

struct Scheme {
  Bits bits = Bits::int8;
  int64_t group = 0;  // int4: K elements per scale (32, 64 or 128); int8: 0 = the whole row
  bool symmetric = true;
};

// "int8-per-channel", "int4-group" (group 32), "int4-group:32|64|128". Throws
// std::invalid_argument naming the text and the accepted forms.
Scheme parse_scheme(const std::string& text, bool symmetric);

// The form scheme_name(s, true) prints: a scheme as above, then ",symmetric" (the default
// when absent) or ",asymmetric". Throws std::invalid_argument as parse_scheme does.
Scheme parse_scheme_and_mode(const std::string& text);

// "int8-per-channel" or "int4-group:G", plus ",symmetric"/",asymmetric" when `with_mode`.
std::string scheme_name(const Scheme& s, bool with_mode);

// The integer range q takes: symmetric [-qmax, qmax] (−128 and −8 never occur), asymmetric
// the whole type, int8 signed [−128, 127] and int4 unsigned [0, 15].
struct QRange {
  int32_t lo, hi;
};
QRange q_range(const Scheme& s);

struct Quantized {
  int64_t N = 0, K = 0, groups = 0;  // groups = scales per row: 1 for int8, K / group for int4
  // int8: N·K int8 bytes, row-major. int4: N·K/2 bytes, byte [n, j] holds k = 2j in its low
  // nibble and k = 2j + 1 in its high nibble; a symmetric nibble is two's complement.
  std::vector<uint8_t> q;
  std::vector<float> scales;        // [N, groups], every one finite and > 0
  std::vector<int32_t> zero_points;  // [N, groups], asymmetric only, inside q_range
};

// Checks the shape against the scheme (N, K ≥ 1, K a multiple of the group) and that every
// weight is finite; throws std::invalid_argument naming the value, the index and the rule.
void check_weights(const float* w, int64_t N, int64_t K, const Scheme& s);

// Quantizes w[N, K] (check_weights first). Per group of K values (the whole row for int8):
//   symmetric:  s = max|w| / qmax,                q = clamp(rne(w / s), −qmax, qmax)
//   asymmetric: lo = min(min w, 0), hi = max(max w, 0), s = fp32((hi − lo) / (qhi − qlo)) in fp64,
//               zp = clamp(rne(qlo − lo / s), qlo, qhi), q = clamp(rne(w / s) + zp, qlo, qhi)
// with s = 1 where that s is 0 (an all-zero group, or one so small its scale underflows).
Quantized quantize(const float* w, int64_t N, int64_t K, const Scheme& s);

// q (unpacked) of element [n, k].
int32_t q_at(const Quantized& qw, const Scheme& s, int64_t n, int64_t k);

// w'[n, k] = s · (q − zp) in fp32 (zp = 0 when symmetric), all N·K of them.
std::vector<float> dequantize(const Quantized& qw, const Scheme& s);

}  // namespace npukit::quant
