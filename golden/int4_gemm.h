// Golden INT4-weight GEMM (docs/ops/int4_gemm.md): y = a · w'ᵀ, w'[n, k] = s[n, g] · (q[n, k] −
// zp[n, g]) with g = k / G, the int4 q packed two per byte as `npukit quantize --scheme
// int4-group:G` writes them. In double, independently of the kernels (its own nibble
// unpacking, no Halide). Then its input classes (golden/int4_gemm_cases.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// q[n, k] of w, row-major [N, ceil(K / 2)] bytes: k = 2j is the low nibble (bits 0–3) of
// byte j, k = 2j + 1 its high nibble. Unsigned: 0 … 15 (asymmetric, with zero points);
// otherwise two's complement: −8 … 7.
int int4_at(const uint8_t* w, int64_t row_bytes, int64_t n, int64_t k, bool unsigned_q);

// One call's inputs. a[M, K] holds int8 integers (a_int8) or floats (fp32 or fp16 values);
// scales and zero_points are [N, ceil(K / group)]; zero_points and a_scales [M] may be null.
struct Int4GemmInputs {
  int64_t M = 0, N = 0, K = 0, group = 32;
  bool a_int8 = false;
  const double* a = nullptr;
  const uint8_t* w = nullptr;
  const double* scales = nullptr;
  const uint8_t* zero_points = nullptr;
  const double* a_scales = nullptr;
};

// y[m·N + n] in double, before rounding to the output dtype. With d = q − zp (zp = 0 and q
// signed without zero points), exact integers in [−15, 15]:
//   int8 a:  P[g] = Σ_{k in g} a[m, k] · d[n, k], exact (|P| ≤ 128 · 15 · G ≤ 245760: it
//            fits int32 for every group size, so no K limit exists);
//            y = (Σ_g s[n, g] · P[g]) · a_scales[m], groups in k order (without a_scales the
//            product is left out);
//   float a: y = Σ_g s[n, g] · (Σ_{k in g} a[m, k] · d[n, k]).
// The kernels evaluate the same expressions in fp32 (docs/ops/int4_gemm.md, "Arithmetic");
// the double products s · P and a · d are exact, so IEEE NaN/Inf follow the same way:
// a NaN scale makes its column NaN, an infinite one ±Inf by the sign of its group's sum and
// NaN where that sum is 0 (or meets the opposite infinity); a NaN or infinite a[m, k]
// likewise makes row m NaN or ±Inf (NaN where d = 0); a_scales[m] NaN makes row m NaN.
// Errors, std::invalid_argument naming the value: group not 32, 64 or 128; a zero point
// above 15; a_scales with float a; an int8 a outside [−128, 127] or not an integer.
std::vector<double> int4_gemm_reference(const Int4GemmInputs& in);

// For each element, the sum of the magnitudes of the terms y adds up in fp32: |a_scales[m]|
// · Σ_g |s · P[g]| for int8 a, Σ_g |s| · Σ_{k in g} |a · d| for float a (Inf where a term is
// not finite). Any fp32 evaluation order of the sums stays within (terms) · 2^−24 of it.
std::vector<double> int4_gemm_magnitude(const Int4GemmInputs& in);

// The number of fp32 roundings an element of y goes through in the kernels' arithmetic,
// whatever the order: 2·groups + 1 for int8 a (the products s · P, their sums, the row
// scale), group + 2·groups + 1 for float a (the products a · d and sums in each group too).
int64_t int4_gemm_roundings(int64_t K, int64_t group, bool a_int8);

// The reference and magnitudes of a case of int4_gemm_cases(): dims "M", "N", "K"; params
// "group" (default 32); inputs "a", "w", "scales", and "zero_points", "a_scales" where
// present.
std::vector<double> int4_gemm_reference(const Case& c);
std::vector<double> int4_gemm_magnitude(const Case& c);

// The cases of one input class for activations `a_dtype` (int8, float32 or float16; any
// other dtype: empty).
//
// Tensor t of case i is drawn from case_seed("int4_gemm/<class>/<t>", i, chunk).
// Dims "M", "N", "K"; inputs "a" [M, K] of a_dtype, "w" uint8 [N, ceil(K/2)], "scales"
// float32 or float16 [N, ceil(K/G)] (alternating between cases), "zero_points" uint8 of the
// same shape in about half the cases (asymmetric; the others symmetric), "a_scales" float32
// [M] in most int8 cases. Params "group" (32, 64, 128, in turn) and "out" (float32 for int8
// and float32 a, float16 for float16 a, the other one in every third case). Unless a case
// says otherwise: every byte of w ~ U{0 … 255}, zero points ~ U{0 … 15}, scales ~ U(0.001,
// 0.02), a ~ U{−128 … 127} (int8, a_scales ~ U(0.002, 0.05)) or N(0, 1) (floats).
//   normal:   decode M = 1 at K 1024 … 4096, N 256 … 4096, and M 4 … 128.
//   boundary: K around a group (G − 1, G, G + 1), K 1, 2, 3; N on and off the kernels'
//             16-channel blocks (1, 15, 16, 17, 31, 33); nibbles and a at their ends only
//             (q 0/15 against zero points 0/15, or −8/7; a −128/127 or ±1); a zero scale, a
//             subnormal and the smallest normal scale, a zero row scale.
//   overflow: the largest group sums: |P| = 128 · 15 · G (245760 at G = 128, beyond int16,
//             within int32) in both signs, over K up to 8192; a sum past fp32's range
//             (scales 1e33: ±Inf) and, for float16 output, past 65504; float a at fp16's
//             largest values and fp32 a of 1e35 (products and group sums stay finite).
//   nan_inf:  NaN, +Inf, −Inf scales (fp32 and fp16), one on a group whose sum is 0 (NaN);
//             int8: NaN/±Inf a_scales, one on a row whose sum is 0; float a: NaN, ±Inf
//             activations, one against d = 0 (NaN).
//   shape:    odd K (1 … 4097), odd N (1 … 4097), M 1 … 100.
// Every case's reference is finite except in nan_inf and the cases named "overflows".
std::vector<Case> int4_gemm_cases(InputClass input_class, DType a_dtype);

}  // namespace npukit::golden
