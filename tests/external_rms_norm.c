/* RMSNorm kernels that npukit did not build, in the signature of npukit/external_kernel.h,
 * for `npukit gate --impl` (tests/gate_external_check.py): one correct, and one for each
 * way a kernel goes wrong that the gate must catch. float32 only; the sum of squares is
 * double, so a correct result is the golden one rounded once. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npukit/external_kernel.h"

/* A library that crashes while it loads (a constructor or a dependency that faults): the
 * gate must say so and exit 3, not die itself. Only when the test asks. */
__attribute__((constructor)) static void crash_on_load_when_asked(void) {
  if (getenv("NPUKIT_TEST_CRASH_ON_LOAD")) raise(SIGSEGV);
}

static int rms_norm(const DLTensor* const* t, size_t n_tensors, const npukit_param_value* p, size_t n_params,
                    char* error, size_t error_size, long extra) {
  if (n_tensors != 3 || n_params != 1 || p[0].kind != NPUKIT_PARAM_REAL) {
    snprintf(error, error_size, "expected 3 tensors and 1 real parameter, got %zu and %zu", n_tensors, n_params);
    return 1;
  }
  if (t[0]->dtype.code != kDLFloat || t[0]->dtype.bits != 32) {
    snprintf(error, error_size, "float32 only");
    return NPUKIT_UNSUPPORTED;
  }
  const float* x = (const float*)t[0]->data;
  const float* w = (const float*)t[1]->data;
  float* y = (float*)t[2]->data;
  const long rows = (long)t[0]->shape[0], hidden = (long)t[0]->shape[1];
  for (long r = 0; r < rows; ++r) {
    double ssq = 0;
    for (long i = 0; i < hidden; ++i) ssq += (double)x[r * hidden + i] * x[r * hidden + i];
    const double inv = 1 / sqrt(ssq / (double)hidden + p[0].real);
    for (long i = 0; i < hidden + (r == rows - 1 ? extra : 0); ++i) y[r * hidden + i] = (float)(x[r * hidden + i] * inv * w[i % hidden]);
  }
  return 0;
}

int rms_norm_correct(const DLTensor* const* t, size_t nt, const npukit_param_value* p, size_t np, char* e, size_t es) {
  return rms_norm(t, nt, p, np, e, es, 0);
}

/* The first finite output one fp32 ulp away from its correct value. */
int rms_norm_one_ulp(const DLTensor* const* t, size_t nt, const npukit_param_value* p, size_t np, char* e, size_t es) {
  const int status = rms_norm(t, nt, p, np, e, es, 0);
  float* y = (float*)t[2]->data;
  const long n = (long)(t[2]->shape[0] * t[2]->shape[1]);
  for (long i = 0; status == 0 && i < n; ++i) {
    if (isfinite(y[i]) && y[i] != 0) {
      y[i] = nextafterf(y[i], INFINITY);
      break;
    }
  }
  return status;
}

/* One element written past the end of y. */
int rms_norm_past_end(const DLTensor* const* t, size_t nt, const npukit_param_value* p, size_t np, char* e, size_t es) {
  return rms_norm(t, nt, p, np, e, es, 1);
}

int rms_norm_crash(const DLTensor* const* t, size_t nt, const npukit_param_value* p, size_t np, char* e, size_t es) {
  (void)t, (void)nt, (void)p, (void)np, (void)e, (void)es;
  raise(SIGSEGV);
  return 0;
}

/* Leaves y as the gate gave it (NaN bytes). */
int rms_norm_untouched(const DLTensor* const* t, size_t nt, const npukit_param_value* p, size_t np, char* e, size_t es) {
  (void)t, (void)nt, (void)p, (void)np, (void)e, (void)es;
  return 0;
}
