/* docs/c_api.md's prepared-op example as a C program against libnpukit.so: it must
 * compile as C and normalize a row to unit RMS. */
#include <math.h>
#include <stdio.h>

#include "npukit/npukit.h"

int main(void) {
  static float x_data[4096], w_data[4096], y_data[4096];
  for (int i = 0; i < 4096; ++i) x_data[i] = (float)(i % 7) - 3.0f, w_data[i] = 1.0f;
  if (npukit_abi_version() != NPUKIT_ABI_VERSION) return 1;
  /* The example, as the documentation shows it. */
  int64_t xs[2] = {1, 4096}, ws[1] = {4096};
  DLTensor x = {x_data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, NULL, 0}, w = x, y = x;
  w.data = w_data; w.ndim = 1; w.shape = ws; y.data = y_data;
  npukit_param p[] = {{"eps", "1e-5"}};
  npukit_op* norm = npukit_op_create("rms_norm", "cpu", p, 1);
  if (!norm) { fprintf(stderr, "%s\n", npukit_last_error()); return 1; }
  const DLTensor* args[] = {&x, &w, &y};          /* the order `npukit list` shows */
  for (int layer = 0; layer < 32; ++layer)
    if (npukit_op_run_positional(norm, args, 3) != NPUKIT_OK) fprintf(stderr, "%s\n", npukit_last_error());
  npukit_op_destroy(norm);
  /* Its result. */
  double ss = 0;
  for (int i = 0; i < 4096; ++i) ss += (double)y_data[i] * y_data[i];
  const double rms = sqrt(ss / 4096);
  printf("rms of y = %.6f\n", rms);
  return fabs(rms - 1.0) < 1e-4 ? 0 : 1;
}
