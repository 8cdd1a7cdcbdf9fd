"""`npukit calibrate` end to end on small .npy files: the parameters against numpy, the JSON
report, one-line refusals, and the printed `--param` line fed to `npukit run --op int8_gemm`
to prove that run takes it as it stands and that the quantized GEMM tracks the fp32 one.

usage: calibrate_cli_check.py NPUKIT_BINARY
"""
import json
import os
import shlex
import sys
import tempfile

import numpy as np

from cli_checks import check, finish, run_npukit, subcommand

npukit = run_npukit
_, refused = subcommand("calibrate")


def minmax_params(x, symmetric):
    """docs/quantization.md's formulas in numpy, fp32 as the contract has them."""
    x = x.astype(np.float32)
    if symmetric:
        s = np.float32(np.abs(x).max()) / np.float32(127)
        return (np.float32(1) if s == 0 else s), 0
    lo, hi = min(np.float32(0), x.min()), max(np.float32(0), x.max())
    s = np.float32((np.float64(hi) - np.float64(lo)) / 255)
    s = np.float32(1) if s == 0 else s
    zp = int(np.clip(np.rint(np.float32(-128) - lo / s), -128, 127))
    return s, zp


def main():
    binary = sys.argv[1]
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory() as d:
        p = lambda name: os.path.join(d, name)
        M, K, N = 6, 64, 24
        # A calibration stack [batches, tokens, K] of post-SiLU activations, and fresh
        # activations from the same distribution to run.
        z = rng.standard_normal((4, 8, K)).astype(np.float32) * 2
        samples = (z / (1 + np.exp(-z))).astype(np.float32)
        np.save(p("x.npy"), samples)
        zr = rng.standard_normal((M, K)).astype(np.float32) * 2
        x = (zr / (1 + np.exp(-zr))).astype(np.float32)

        # Asymmetric minmax (the default): the args line is exactly numpy's parameters.
        rc, out, err = npukit(binary, ["calibrate", "--op", "int8_gemm", "--in", f"a={p('x.npy')}"])
        check(rc == 0, f"minmax: exit {rc} ({err.strip()})")
        last = out.strip().splitlines()[-1] if out.strip() else ""
        s_want, zp_want = minmax_params(samples, False)
        words = shlex.split(last)
        params = dict(w.split("=", 1) for w in words[1::2]) if words[0::2] == ["--param"] * (len(words) // 2) else {}
        check(set(params) == {"a_scale", "a_zero_point"}, f"the last line is --param a_scale=… --param a_zero_point=…: {last!r}")
        if params:
            check(np.float32(float(params["a_scale"])) == s_want, f"a_scale {params['a_scale']} vs numpy {s_want!r}")
            check(int(params["a_zero_point"]) == zp_want, f"a_zero_point {params['a_zero_point']} vs numpy {zp_want}")
        check("nmse" in out and "clipped" in out and "clip range" in out, "the text report has range, clip and nmse")

        # The printed line, as it stands, on npukit run: quantize x in numpy with those
        # parameters, run the int8 GEMM to float32 and compare with the fp32 matmul.
        if params:
            s, zp = np.float32(float(params["a_scale"])), int(params["a_zero_point"])
            q = np.clip(np.rint(x / s) + zp, -128, 127).astype(np.int8)
            w = rng.standard_normal((N, K)).astype(np.float32) * 0.1
            ws = (np.abs(w).max(axis=1) / 127).astype(np.float32)
            wq = np.clip(np.rint(w / ws[:, None]), -127, 127).astype(np.int8)
            np.save(p("a.npy"), q)
            np.save(p("w.npy"), wq)
            np.save(p("ws.npy"), ws)
            rc, out2, err2 = npukit(binary, ["run", "--op", "int8_gemm", "--in", f"a={p('a.npy')}", "--in", f"w={p('w.npy')}",
                                             "--in", f"w_scale={p('ws.npy')}", "--param", "out=float32"]
                                    + words + ["--out", f"y={p('y.npy')}"])
            check(rc == 0, f"npukit run with the printed params: exit {rc} ({err2.strip()})")
            if rc == 0:
                y = np.load(p("y.npy")).astype(np.float64)
                want = (q.astype(np.float64) - zp) @ wq.astype(np.float64).T * (np.float64(s) * ws.astype(np.float64))
                check(np.allclose(y, want, rtol=1e-5, atol=1e-5), f"int8_gemm output vs numpy dequantized: {np.abs(y - want).max()}")
                ref = x.astype(np.float64) @ w.astype(np.float64).T
                cos = float((y * ref).sum() / np.sqrt((y * y).sum() * (ref * ref).sum()))
                check(cos > 0.995, f"quantized GEMM cosine to fp32 {cos}")

        # Symmetric minmax, JSON; percentile against numpy's; mse no worse than minmax.
        rc, out, err = npukit(binary, ["calibrate", "--op", "int8_gemm", "--in", f"a={p('x.npy')}", "--symmetric",
                                       "--format", "json"])
        check(rc == 0, f"symmetric json: exit {rc} ({err.strip()})")
        if rc == 0:
            j = json.loads(out)
            s_want, _ = minmax_params(samples, True)
            r = j["inputs"][0]
            check(np.float32(r["scale"]) == s_want and r["zero_point"] == 0, f"symmetric scale {r['scale']} vs {s_want!r}")
            check(j["params"] == {"a_scale": str(j["params"]["a_scale"]), "a_zero_point": "0"}, f"params {j['params']}")
            check(j["args"].startswith("--param a_scale="), f"args {j['args']}")
            check(r["samples"] == samples.size and r["shape"] == [4, 8, K], f"samples {r['samples']} shape {r['shape']}")
            check(r["clipped"] == 0, "minmax clips nothing")
            minmax_nmse = r["nmse"]
        rc, out, err = npukit(binary, ["calibrate", "--op", "int8_gemm", "--in", f"a={p('x.npy')}", "--symmetric",
                                       "--method", "percentile:99", "--format", "json"])
        check(rc == 0, f"percentile: exit {rc} ({err.strip()})")
        if rc == 0:
            r = json.loads(out)["inputs"][0]
            t = np.percentile(np.abs(samples).astype(np.float64), 99)
            check(abs(r["clip_range"][1] - t) <= 1e-6 * t, f"percentile:99 threshold {r['clip_range'][1]} vs numpy {t}")
            clipped = int((np.abs(np.rint(samples / np.float32(r["scale"]))) > 127).sum())
            check(r["clipped"] == clipped and clipped > 0, f"clipped {r['clipped']} vs numpy {clipped}")
        rc, out, err = npukit(binary, ["calibrate", "--op", "int8_gemm", "--in", f"a={p('x.npy')}", "--symmetric",
                                       "--method", "mse", "--format", "json"])
        check(rc == 0, f"mse: exit {rc} ({err.strip()})")
        if rc == 0:
            check(json.loads(out)["inputs"][0]["nmse"] <= minmax_nmse, "mse no worse than minmax")

        # float16 samples: the same parameters as their exact float32 widening.
        np.save(p("x16.npy"), samples.astype(np.float16))
        np.save(p("x16as32.npy"), samples.astype(np.float16).astype(np.float32))
        lines = [npukit(binary, ["calibrate", "--op", "int8_gemm", "--in", f"a={p(f)}", "--method", "mse"])[1].strip().splitlines()[-1:]
                 for f in ("x16.npy", "x16as32.npy")]
        check(lines[0] == lines[1] and lines[0], f"float16 samples as their float32 widening: {lines}")

        # All zero: scale 1.
        np.save(p("zeros.npy"), np.zeros((3, K), np.float32))
        rc, out, err = npukit(binary, ["calibrate", "--op", "int8_gemm", "--in", f"a={p('zeros.npy')}"])
        check(rc == 0 and out.strip().splitlines()[-1] == "--param a_scale=1 --param a_zero_point=-128",
              f"all zero: {out.strip().splitlines()[-1:] if out.strip() else err.strip()}")

        nan = samples.copy()
        nan[2, 5, 17] = np.inf
        np.save(p("nan.npy"), nan)
        np.save(p("empty.npy"), np.zeros((0, K), np.float32))
        np.save(p("i8.npy"), np.zeros((2, K), np.int8))
        x_arg = ["--in", f"a={p('x.npy')}"]
        refused(binary, ["--op", "softmax"] + x_arg, "softmax", "unknown op")
        refused(binary, ["--op", "rms_norm", "--in", f"x={p('x.npy')}"], "--op rms_norm: has no quantized inputs",
                "op without quantized inputs")
        refused(binary, ["--op", "int8_gemm", "--in", f"w={p('x.npy')}"],
                "'w' is not a quantized input of int8_gemm (quantized inputs: a)", "input that is not quantized")
        refused(binary, ["--op", "int8_gemm", "--method", "percentile:0"] + x_arg, "--method percentile:0: P must be",
                "percentile out of range")
        refused(binary, ["--op", "int8_gemm", "--method", "percentile:30"] + x_arg, "so P must be at least 50",
                "asymmetric percentile below 50")
        refused(binary, ["--op", "int8_gemm", "--method", "kl"] + x_arg, "--method kl: must be minmax", "unknown method")
        refused(binary, ["--op", "int8_gemm", "--in", f"a={p('empty.npy')}"], "holds no samples", "empty file")
        refused(binary, ["--op", "int8_gemm", "--in", f"a={p('i8.npy')}"], "dtype int8: calibration samples must be float32 or float16",
                "wrong dtype")
        refused(binary, ["--op", "int8_gemm", "--in", f"a={p('nan.npy')}"], "a[2, 5, 17] = inf", "Inf sample")
        refused(binary, ["--op", "int8_gemm", "--symmetric", "--asymmetric"] + x_arg, "--symmetric and --asymmetric",
                "both modes")
        refused(binary, ["--op", "int8_gemm", "--format", "xml"] + x_arg, "--format xml", "bad format")
        refused(binary, ["--op", "int8_gemm", "--in", f"a={p('missing.npy')}"], "missing.npy", "no such file")
    return finish("npukit calibrate: parameters, report, refusals as documented; npukit run takes the printed line")


if __name__ == "__main__":
    sys.exit(main())
