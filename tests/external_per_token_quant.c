/* per_token_quant kernels that npukit did not build, in the signature of
 * npukit/external_kernel.h, for `npukit gate --impl` (tests/gate_external_check.py): a
 * correct one, and one whose int8 output is one LSB off in a single element, which the
 * gate must FAIL (the op's contract is bit-exact). float32 input only. */
#include <math.h>
#include <stdio.h>

#include "npukit/external_kernel.h"

static int per_token_quant(const DLTensor* const* t, size_t n_tensors, size_t n_params, char* error,
                           size_t error_size, int lsb_off) {
  if (n_tensors != 3 || n_params != 0) {
    snprintf(error, error_size, "expected 3 tensors and no parameters, got %zu and %zu", n_tensors, n_params);
    return 1;
  }
  if (t[0]->dtype.code != kDLFloat || t[0]->dtype.bits != 32) {
    snprintf(error, error_size, "float32 only");
    return NPUKIT_UNSUPPORTED;
  }
  const float* a = (const float*)t[0]->data;
  signed char* q = (signed char*)t[1]->data;
  float* scale = (float*)t[2]->data;
  const long rows = (long)t[0]->shape[0], k = (long)t[0]->shape[1];
  for (long r = 0; r < rows; ++r) {
    const float* row = a + r * k;
    float m = 0;
    int finite = 1;
    for (long c = 0; c < k; ++c) {
      if (!isfinite(row[c])) finite = 0;
      if (fabsf(row[c]) > m) m = fabsf(row[c]);
    }
    const float s = finite ? m / 127.0f : NAN;
    const int zero = !finite || s == 0.0f;
    for (long c = 0; c < k; ++c) {
      float v = zero ? 0.0f : nearbyintf(row[c] / s);
      v = v < -127.0f ? -127.0f : v > 127.0f ? 127.0f : v;
      q[r * k + c] = (signed char)v;
    }
    scale[r] = s;
  }
  /* One LSB in the last element, toward zero so it stays in [-127, 127]. */
  if (lsb_off && rows * k > 0) {
    signed char* last = &q[rows * k - 1];
    *last = (signed char)(*last > 0 ? *last - 1 : *last + 1);
  }
  return NPUKIT_OK;
}

int per_token_quant_correct(const DLTensor* const* t, size_t nt, const npukit_param_value* p, size_t np, char* e,
                            size_t es) {
  (void)p;
  return per_token_quant(t, nt, np, e, es, 0);
}

int per_token_quant_one_lsb(const DLTensor* const* t, size_t nt, const npukit_param_value* p, size_t np, char* e,
                            size_t es) {
  (void)p;
  return per_token_quant(t, nt, np, e, es, 1);
}
