"""`npukit run` against an independent numpy computation, as a new user would try it.

Usage: /usr/bin/python3 run_vs_numpy.py PATH/TO/npukit
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def rms_norm_numpy(x, w, eps):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps) * w.astype(np.float64)


def run(npukit, *args):
    p = subprocess.run([npukit, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    npukit = sys.argv[1]
    rng = np.random.default_rng(1234)
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        for dtype, rtol, atol in ((np.float32, 1e-5, 1e-6), (np.float16, 2e-3, 1e-3)):
            for rows, hidden in ((1, 4096), (7, 65), (33, 4097)):
                x = rng.standard_normal((rows, hidden)).astype(dtype)
                w = rng.uniform(0.5, 1.5, hidden).astype(dtype)
                xp, wp, yp = (os.path.join(d, n) for n in ("x.npy", "w.npy", "y.npy"))
                np.save(xp, x)
                np.save(wp, w)
                code, out = run(npukit, "run", "--op", "rms_norm", "--target", "cpu", "--in", f"x={xp}",
                                "--in", f"weight={wp}", "--param", "eps=1e-5", "--out", f"y={yp}")
                if code != 0:
                    print(f"FAIL {dtype.__name__} {rows}x{hidden}: exit {code}: {out}")
                    failures += 1
                    continue
                y = np.load(yp)
                want = rms_norm_numpy(x, w, 1e-5)
                ok = y.dtype == dtype and y.shape == x.shape and np.allclose(y.astype(np.float64), want, rtol=rtol, atol=atol)
                err = np.max(np.abs(y.astype(np.float64) - want))
                print(f"{'ok  ' if ok else 'FAIL'} {np.dtype(dtype).name} {rows}x{hidden}: max abs err {err:.3g}")
                failures += not ok
        # A new user's typical mistake: float64 input. It must be a clear error, exit 2.
        np.save(os.path.join(d, "x64.npy"), np.ones((2, 8)))
        np.save(os.path.join(d, "w64.npy"), np.ones(8))
        code, out = run(npukit, "run", "--op", "rms_norm", "--in", f"x={d}/x64.npy", "--in", f"weight={d}/w64.npy",
                        "--out", f"y={d}/y.npy")
        ok = code == 2 and "dtype float64 is not supported" in out
        print(f"{'ok  ' if ok else 'FAIL'} float64 input rejected: exit {code}: {out.strip()}")
        failures += not ok
    print(f"{9 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
