// Accuracy metrics of a kernel's output against the golden reference.
//
// Contract (per position i, a = actual[i], e = expected[i]; e is already rounded to the
// output dtype by the caller):
// - A pair is finite when both a and e are finite. NaN matches NaN (any payload), +Inf
//   matches +Inf only, -Inf matches -Inf only; every other non-finite pair (including
//   finite vs non-finite) is a NaN/Inf mismatch.
// - max_abs = max |a-e| and max_rel = max rel_err over finite pairs, where
//   rel_err = |a-e| / |e|, or |a-e| itself where |e| <= 1e-5 (no blow-up near zero).
// - mismatches = finite pairs with |a-e| > atol + rtol*|e|, plus every NaN/Inf mismatch;
//   mismatch_ratio = mismatches / count (0 when count is 0).
// - nmse = Σ(a-e)² / Σe² over finite pairs; 0 when both sums are 0, +Inf when only Σe² is 0.
// - cosine = Σae / sqrt(Σa² Σe²) over finite pairs; 1 when both are all zero, 0 when only
//   one is. Sums are scaled by powers of two, so float64 outputs near 1e300 neither
//   overflow nor change the result.
// - max_ulp: float32/float16 outputs only (0 otherwise): max over finite pairs of the
//   number of representable values of the output dtype between a and e (ordered-integer
//   view of the bit patterns, so +0 and -0 are 0 apart and ±smallest subnormal are 2).
// - lsb_histogram: integer outputs only: |a-e| -> number of finite pairs (0 included).
// - nan_inf_mismatches: count of NaN/Inf mismatches.
// - zero_ratio: fraction of all expected values that are exactly ±0.
// - worst: up to 10 points: NaN/Inf mismatches first (by index), then finite pairs with
//   |a-e| > 0 by abs_err descending (ties by index). For a NaN/Inf mismatch abs_err and
//   rel_err are |a-e| as computed (NaN or Inf).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "npukit/dtype.h"

namespace npukit::golden {

inline constexpr double kRelErrFloor = 1e-5;  // |e| at or below this: rel_err is abs error
inline constexpr size_t kWorstPoints = 10;

struct Point {
  int64_t index;
  double actual, expected, abs_err, rel_err;
};

struct Metrics {
  int64_t count = 0;
  double max_abs = 0, max_rel = 0;
  int64_t mismatches = 0;
  double mismatch_ratio = 0;
  double nmse = 0;
  double cosine = 1;
  double max_ulp = 0;                        // fp32/fp16 ULP distance in the output dtype
  std::map<int64_t, int64_t> lsb_histogram;  // integer outputs: |a-e| -> count
  int64_t nan_inf_mismatches = 0;
  double zero_ratio = 0;
  std::vector<Point> worst;
};

Metrics compare(const double* actual, const double* expected, int64_t n, DType out_dtype,
                double atol, double rtol);

}  // namespace npukit::golden
