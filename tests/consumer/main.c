/* A consumer of an installed npukit (tests/install_check.py builds it with find_package
 * and with pkg-config): a prepared rms_norm on a 2 x 4 tensor against a hand computation,
 * and the versions of the library loaded against the header and the package. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <npukit/npukit.h>

#ifndef NPUKIT_EXPECTED_VERSION
#error "build with -DNPUKIT_EXPECTED_VERSION=\"<the package's version>\""
#endif

int main(void) {
  if (npukit_abi_version() != NPUKIT_ABI_VERSION) {
    fprintf(stderr, "abi %d loaded, header has %d\n", npukit_abi_version(), NPUKIT_ABI_VERSION);
    return 1;
  }
  if (strcmp(npukit_version(), NPUKIT_EXPECTED_VERSION) != 0) {
    fprintf(stderr, "npukit_version() = %s, package says %s\n", npukit_version(), NPUKIT_EXPECTED_VERSION);
    return 1;
  }

  float x[2][4] = {{1, 2, 3, 4}, {-2, 0, 0, 2}}, w[4] = {1, 0.5f, 2, -1}, y[2][4];
  int64_t xs[2] = {2, 4}, ws[1] = {4};
  DLTensor tx = {x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, NULL, 0}, tw = tx, ty = tx;
  tw.data = w; tw.ndim = 1; tw.shape = ws; ty.data = y;
  npukit_param p[] = {{"eps", "0.5"}};
  npukit_op* op = npukit_op_create("rms_norm", "cpu", p, 1);
  if (!op) { fprintf(stderr, "create: %s\n", npukit_last_error()); return 1; }
  npukit_tensor t[] = {{"x", &tx}, {"weight", &tw}, {"y", &ty}};
  const npukit_status s = npukit_op_run(op, t, 3);
  npukit_op_destroy(op);
  if (s != NPUKIT_OK) { fprintf(stderr, "run: %s\n", npukit_last_error()); return 1; }

  /* By hand: mean(x^2) + eps is 30/4 + 0.5 = 8 for row 0 and 8/4 + 0.5 = 2.5 for row 1. */
  const double rms[2] = {sqrt(8.0), sqrt(2.5)};
  int bad = 0;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 4; ++i) {
      const double want = x[r][i] / rms[r] * w[i];
      if (fabs(y[r][i] - want) > 1e-6 * (1 + fabs(want))) {
        fprintf(stderr, "y[%d][%d] = %.9g, want %.9g\n", r, i, y[r][i], want);
        bad = 1;
      }
    }
  if (!bad) printf("consumer: npukit %s (abi %d), rms_norm ok\n", npukit_version(), npukit_abi_version());
  return bad;
}
