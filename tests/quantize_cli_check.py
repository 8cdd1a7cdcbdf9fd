"""`npukit quantize` end to end on small .npy files: exit codes, one-line refusals, the
files it writes (dtypes, shapes, the int4 packing) and the JSON report against numpy.

usage: quantize_cli_check.py NPUKIT_BINARY
"""
import json
import os
import sys
import tempfile

import numpy as np

from cli_checks import check, finish, subcommand

run, refused = subcommand("quantize", timeout=60)


def main():
    binary = sys.argv[1]
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as d:
        p = lambda name: os.path.join(d, name)
        w = (rng.standard_normal((8, 128)) * 0.05).astype(np.float32)
        w[3] = 0  # an all-zero channel
        w[5, 9] = 3.0  # an outlier
        np.save(p("w.npy"), w)
        np.save(p("w16.npy"), w.astype(np.float16))
        nan = w.copy()
        nan[2, 40] = np.nan
        np.save(p("nan.npy"), nan)
        np.save(p("odd.npy"), w[:, :96].copy())
        np.save(p("i32.npy"), np.zeros((4, 32), np.int32))
        outs = ["--out", f"q={p('q.npy')}", "--out", f"scales={p('s.npy')}"]

        # int8 symmetric, JSON report.
        rc, out, err = run(binary, ["--in", f"w={p('w.npy')}", "--scheme", "int8-per-channel", "--format", "json"] + outs)
        check(rc == 0, f"int8: exit {rc} ({err.strip()})")
        if rc == 0:
            q, s = np.load(p("q.npy")), np.load(p("s.npy"))
            check(q.dtype == np.int8 and q.shape == (8, 128), f"int8 q {q.dtype} {q.shape}")
            check(s.dtype == np.float32 and s.shape == (8, 1), f"int8 scales {s.dtype} {s.shape}")
            check(q.min() >= -127, "int8 symmetric q reaches -128")
            check(s[3, 0] == 1.0 and not q[3].any(), "the all-zero channel: scale 1, q 0")
            w_hat = s * q.astype(np.float32)
            r = json.loads(out)["error"]
            nmse = float(((w.astype(np.float64) - w_hat) ** 2).sum() / (w.astype(np.float64) ** 2).sum())
            check(abs(r["nmse"] - nmse) <= 1e-9 + 1e-6 * nmse, f"nmse {r['nmse']} vs numpy {nmse}")
            check(abs(r["max_abs_error"] - float(np.abs(w - w_hat).max())) < 1e-12, "max abs error vs numpy")
            check(0.999 < r["cosine"] <= 1.0 + 1e-12, f"cosine {r['cosine']}")
            check(len(r["worst_channels"]) == 5, "five worst channels")

        # int4 asymmetric from float16, text report; unpack and rebuild.
        rc, out, err = run(binary, ["--in", f"w={p('w16.npy')}", "--scheme", "int4-group:64", "--asymmetric",
                                    "--out", f"zero_points={p('z.npy')}"] + outs)
        check(rc == 0, f"int4: exit {rc} ({err.strip()})")
        if rc == 0:
            q, s, z = np.load(p("q.npy")), np.load(p("s.npy")), np.load(p("z.npy"))
            check(q.dtype == np.uint8 and q.shape == (8, 64), f"int4 q {q.dtype} {q.shape}")
            check(s.shape == (8, 2) and z.shape == (8, 2) and z.dtype == np.uint8, f"int4 scales {s.shape} zp {z.dtype} {z.shape}")
            nib = np.empty((8, 128), np.int32)
            nib[:, 0::2] = q & 0xF  # low nibble = even k
            nib[:, 1::2] = q >> 4
            w_hat = np.repeat(s, 64, axis=1) * (nib - np.repeat(z.astype(np.int32), 64, axis=1))
            err_max = np.abs(w_hat - w.astype(np.float16).astype(np.float32)).max()
            check(err_max <= np.repeat(s, 64, axis=1).max() * 0.51, f"int4 rebuilt within half a step: {err_max}")
            check("nmse" in out and "worst channels" in out, "text report lists nmse and worst channels")

        refused(binary, ["--in", f"w={p('w.npy')}", "--scheme", "int3"] + outs, "--scheme int3", "bad scheme")
        refused(binary, ["--in", f"w={p('w.npy')}", "--scheme", "int4-group:48"] + outs, "int4-group:48", "bad group")
        refused(binary, ["--in", f"w={p('odd.npy')}", "--scheme", "int4-group:64"] + outs,
                "K = 96: must be a multiple of the group 64", "K not a multiple of G")
        refused(binary, ["--in", f"w={p('nan.npy')}", "--scheme", "int8-per-channel"] + outs, "w[2, 40] = nan", "NaN weight")
        refused(binary, ["--in", f"w={p('i32.npy')}", "--scheme", "int8-per-channel"] + outs, "int32", "int32 weights")
        refused(binary, ["--in", f"w={p('w.npy')}", "--scheme", "int8-per-channel", "--asymmetric"] + outs,
                "zero_points", "asymmetric without zero_points")
        refused(binary, ["--in", f"w={p('missing.npy')}", "--scheme", "int8-per-channel"] + outs, "missing.npy", "no such file")
        refused(binary, ["--in", f"w={p('w.npy')}", "--scheme", "int8-per-channel", "--format", "xml"] + outs,
                "--format xml", "bad format")
    return finish("npukit quantize: exit codes, files and report as documented")


if __name__ == "__main__":
    sys.exit(main())
