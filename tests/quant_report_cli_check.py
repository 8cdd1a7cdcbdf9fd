"""`npukit quant-report` end to end: the stage errors against numpy's own fp32, weight-only,
activation-only and both-dequantized products, shares that are exactly 0 where a stage is
exact (weights q · 2^-e; activations 0.25 · q), and one-line refusals.

usage: quant_report_cli_check.py NPUKIT_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(binary, args):
    p = subprocess.run([binary, "quant-report"] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def refused(binary, args, needle, what):
    rc, _, err = run(binary, args)
    lines = err.strip().splitlines()
    check(rc == 2, f"{what}: exit {rc}, expected 2 ({err.strip()})")
    check(len(lines) == 1, f"{what}: {len(lines)} lines of error, expected 1: {err!r}")
    check(needle in err, f"{what}: '{needle}' not in {err.strip()!r}")


def nmse(ref, y):
    return float(((y - ref) ** 2).sum() / (ref ** 2).sum())


def report(binary, a, w, extra=()):
    rc, out, err = run(binary, ["--op", "int8_gemm", "--in", f"a={a}", "--weights", f"w={w}", "--format", "json", *extra])
    check(rc == 0, f"quant-report {extra}: exit {rc} ({err.strip()})")
    return json.loads(out) if rc == 0 else None


def main():
    binary = sys.argv[1]
    rng = np.random.default_rng(5)
    M, N, K = 12, 40, 96
    with tempfile.TemporaryDirectory() as d:
        p = lambda name: os.path.join(d, name)
        z = rng.standard_normal((M, K)) * 2
        x = (z / (1 + np.exp(-z))).astype(np.float32)
        w = (rng.standard_normal((N, K)) * 0.05).astype(np.float32)
        np.save(p("x.npy"), x)
        np.save(p("w.npy"), w)

        # Random: each stage against numpy's, with the parameters the report states.
        j = report(binary, p("x.npy"), p("w.npy"))
        if j:
            act = j["activations"]
            s, zp = np.float32(act["scale"]), act["zero_point"]
            q = np.clip(np.rint(x / s) + zp, -128, 127)
            x_hat = (s * (q - zp).astype(np.float32)).astype(np.float64)
            ws = (np.abs(w).max(axis=1) / np.float32(127)).astype(np.float32)
            w_hat = (ws[:, None] * np.clip(np.rint(w / ws[:, None]), -127, 127).astype(np.float32)).astype(np.float64)
            ref = x.astype(np.float64) @ w.astype(np.float64).T
            st = j["stages"]
            for name, y in (("weights_only", x.astype(np.float64) @ w_hat.T), ("activations_only", x_hat @ w.astype(np.float64).T),
                            ("both", x_hat @ w_hat.T)):
                want = nmse(ref, y)
                check(abs(st[name]["nmse"] - want) <= 1e-4 * want, f"{name} nmse {st[name]['nmse']} vs numpy {want}")
            sh = j["shares"]
            check(abs(sh["weights"] + sh["activations"] - 1) < 1e-12, f"shares sum to 1: {sh}")
            want = st["weights_only"]["nmse"] / (st["weights_only"]["nmse"] + st["activations_only"]["nmse"])
            check(abs(sh["weights"] - want) < 1e-12, f"weight share {sh['weights']} vs {want}")
            check(0.99 < j["output_error"]["cosine"] <= 1 + 1e-12, f"cosine {j['output_error']['cosine']}")
            check(j["args"] == f"--param a_scale={j['args'].split('=')[1].split()[0]} --param a_zero_point={zp}", j["args"])

        # Exactly representable weights: no weight error, so a weight share of exactly 0.
        qw = rng.integers(-127, 128, (N, K))
        qw[:, 3] = -127
        w_exact = (qw * np.exp2(-rng.integers(3, 9, N))[:, None]).astype(np.float32)
        np.save(p("w_exact.npy"), w_exact)
        j = report(binary, p("x.npy"), p("w_exact.npy"), ["--method", "mse"])
        if j:
            check(j["stages"]["weights_only"]["nmse"] == 0 and j["shares"]["weights"] == 0,
                  f"exact weights: weight nmse {j['stages']['weights_only']['nmse']}, share {j['shares']['weights']}")
            check(j["shares"]["activations"] == 1, f"exact weights: activation share {j['shares']['activations']}")

        # Exactly representable activations (symmetric, 0.25 · q with ±127 present): share 0.
        qa = rng.integers(-127, 128, (M, K))
        qa[0, 0], qa[1, 1] = 127, -127
        np.save(p("x_exact.npy"), (qa * 0.25).astype(np.float32))
        j = report(binary, p("x_exact.npy"), p("w.npy"), ["--symmetric"])
        if j:
            check(j["activations"]["scale"] == 0.25, f"exact activations: scale {j['activations']['scale']}")
            check(j["stages"]["activations_only"]["nmse"] == 0 and j["shares"]["activations"] == 0,
                  f"exact activations: nmse {j['stages']['activations_only']['nmse']}, share {j['shares']['activations']}")

        rc, out, err = run(binary, ["--op", "int8_gemm", "--in", f"a={p('x.npy')}", "--weights", f"w={p('w.npy')}"])
        check(rc == 0 and "weights only" in out and "activations only" in out and "both (kernel)" in out,
              f"text report: {rc} {err.strip()}")

        np.save(p("w_badk.npy"), w[:, :64].copy())
        base = ["--op", "int8_gemm", "--in", f"a={p('x.npy')}"]
        refused(binary, ["--op", "rms_norm", "--in", f"a={p('x.npy')}", "--weights", f"w={p('w.npy')}"],
                "--op rms_norm: quant-report covers int8_gemm only", "other op")
        refused(binary, base + ["--weights", f"w={p('w_badk.npy')}"], "the last dimension must be K = 64", "K mismatch")
        refused(binary, base + ["--weights", f"w={p('w.npy')}", "--scheme", "int4-group:32"],
                "--scheme int4-group:32: int8_gemm reads int8 weights", "int4 scheme")
        refused(binary, base + ["--weights", f"w={p('w.npy')}", "--method", "percentile:200"], "--method percentile:200",
                "bad method")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("npukit quant-report: stage errors and shares as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
