"""`npukit quant-report` end to end: the stage errors against numpy's own fp32, weight-only,
activation-only and both-dequantized products, shares that are exactly 0 where a stage is
exact (weights q · 2^-e; activations 0.25 · q), a separate calibration set (parameters as
`npukit calibrate` gives them; one without X's outliers clips them), a layer list (--layer)
ranked by numpy's nmse with the sensitive ops flagged, the default threshold, and one-line
refusals.

usage: quant_report_cli_check.py NPUKIT_BINARY
"""
import json
import os
import sys
import tempfile

import numpy as np

from cli_checks import check, finish, run_npukit, subcommand

run, refused = subcommand("quant-report")


def nmse(ref, y):
    return float(((y - ref) ** 2).sum() / (ref ** 2).sum())


def report(binary, a, w, extra=()):
    rc, out, err = run(binary, ["--op", "int8_gemm", "--in", f"a={a}", "--weights", f"w={w}", "--format", "json", *extra])
    check(rc == 0, f"quant-report {extra}: exit {rc} ({err.strip()})")
    return json.loads(out) if rc == 0 else None


def numpy_both(x, w, act):
    """The both-dequantized output from the parameters the report states, and the fp32 reference."""
    s, zp = np.float32(act["scale"]), act["zero_point"]
    lo = -127 if act["mode"] == "symmetric" else -128
    q = np.clip(np.rint(x / s) + zp, lo, 127)
    x_hat = (s * (q - zp).astype(np.float32)).astype(np.float64)
    ws = (np.abs(w).max(axis=1) / np.float32(127)).astype(np.float32)
    w_hat = (ws[:, None] * np.clip(np.rint(w / ws[:, None]), -127, 127).astype(np.float32)).astype(np.float64)
    return x_hat @ w_hat.T, x.astype(np.float64) @ w.astype(np.float64).T


def check_calibration_set(binary, rng, p):
    """X has outliers, CAL the same distribution without them: calibrating on CAL clips them."""
    M, N, K = 16, 24, 64
    cal = rng.standard_normal((64, K)).astype(np.float32)
    x = rng.standard_normal((M, K)).astype(np.float32)
    x.flat[rng.choice(M * K, 6, replace=False)] = 25.0
    w = (rng.standard_normal((N, K)) * 0.05).astype(np.float32)
    for name, arr in (("cx.npy", x), ("cal.npy", cal), ("cw.npy", w)):
        np.save(p(name), arr)
    own = report(binary, p("cx.npy"), p("cw.npy"))
    sep = report(binary, p("cx.npy"), p("cw.npy"), ["--calibration", f"a={p('cal.npy')}"])
    if not own or not sep:
        return
    oc, sc = own["activations"]["calibration"], sep["activations"]["calibration"]
    check(oc["file"] == p("cx.npy") and oc["separate"] is False, f"calibrated on X: {oc}")
    check(sc["file"] == p("cal.npy") and sc["separate"] is True and sc["samples"] == cal.size, f"calibrated on CAL: {sc}")
    # The parameters are npukit calibrate's on CAL.
    rc, out, err = run_npukit(binary, ["calibrate", "--op", "int8_gemm", "--in", f"a={p('cal.npy')}", "--format", "json"])
    check(rc == 0, f"calibrate on CAL: exit {rc} ({err.strip()})")
    if rc == 0:
        c = json.loads(out)["inputs"][0]
        check(sep["activations"]["scale"] == c["scale"] and sep["activations"]["zero_point"] == c["zero_point"],
              f"CAL's parameters {sep['activations']['scale']}, {sep['activations']['zero_point']} vs calibrate's {c}")
    check(own["activations"]["clip_fraction"] == 0, f"minmax on X clips nothing of X: {own['activations']}")
    check(sep["activations"]["clipped"] >= 6 and sep["activations"]["clip_fraction"] > own["activations"]["clip_fraction"],
          f"CAL without X's outliers clips them: {sep['activations']}")
    check(sc["clip_fraction"] == 0, f"minmax on CAL clips nothing of CAL: {sc}")
    so, ss = own["stages"]["activations_only"]["nmse"], sep["stages"]["activations_only"]["nmse"]
    check(ss > 10 * so, f"activation nmse calibrated on CAL {ss} vs on X {so}")
    check(sep["activations"]["nmse"] > own["activations"]["nmse"], f"X's own nmse: {sep['activations']} vs {own['activations']}")
    both, ref = numpy_both(x, w, sep["activations"])
    want = nmse(ref, both)
    got = sep["stages"]["both"]["nmse"]
    check(abs(got - want) <= 1e-4 * want, f"calibrated on CAL: both nmse {got} vs numpy {want}")
    rc, out, err = run(binary, ["--op", "int8_gemm", "--in", f"a={p('cx.npy')}", "--weights", f"w={p('cw.npy')}",
                                "--calibration", f"a={p('cal.npy')}"])
    check(rc == 0 and f"calibrated on {p('cal.npy')} ({cal.size} samples" in out and f"measured on {p('cx.npy')}" in out,
          f"text names the calibration set: {out!r} {err.strip()}")
    rc, out, err = run(binary, ["--op", "int8_gemm", "--in", f"a={p('cx.npy')}", "--weights", f"w={p('cw.npy')}"])
    check(rc == 0 and f"calibrated on {p('cx.npy')} itself" in out, f"text says X itself: {out!r} {err.strip()}")
    np.save(p("cal_badk.npy"), cal[:, :32].copy())
    base = ["--op", "int8_gemm", "--in", f"a={p('cx.npy')}", "--weights", f"w={p('cw.npy')}"]
    refused(binary, base + ["--calibration", f"a={p('cal_badk.npy')}"],
            (f"--calibration a={p('cal_badk.npy')}: shape [64, 32]: the last dimension must be K = 64",), "CAL's K")
    refused(binary, base + ["--calibration", f"x={p('cal.npy')}"], "--calibration x=", "CAL for another input")
    refused(binary, base + ["--calibration", f"a={p('none.npy')}"], (f"--calibration a={p('none.npy')}: no such file",),
            "missing CAL")


def check_layer(binary, rng, d, p):
    """Four ops: an outlier-heavy activation by minmax (clearly sensitive: one value of 90
    among normal ones stretches the scale, and at o² ≈ M·K the rounding noise of every other
    value is ~5e-3 of the output's energy), a plain normal layer, one calibrated by mse on a
    separate set of its distribution (both ~1e-4), and one that int8 holds exactly (0)."""
    M, N, K = 32, 32, 256
    files = {}

    def save(name, arr):
        np.save(p(name), arr.astype(np.float32))
        files[name] = arr.astype(np.float32)

    xo = rng.standard_normal((M, K))
    xo[3, 5] = 90.0
    save("l_xo.npy", xo)
    save("l_xn.npy", rng.standard_normal((M, K)))
    save("l_xc.npy", rng.standard_normal((M, K)) * 2)
    save("l_cal.npy", rng.standard_normal((4 * M, K)) * 2)
    qa = rng.integers(-127, 128, (M, K))
    qa[0, 0] = 127
    save("l_xe.npy", qa * 0.25)
    save("l_w1.npy", rng.standard_normal((N, K)) * 0.05)
    save("l_w2.npy", rng.standard_normal((N, K)) * 0.05)
    qw = rng.integers(-127, 128, (N, K))
    qw[:, 3] = 127
    save("l_we.npy", qw * np.exp2(-6.0))
    ops = [
        {"name": "plain", "op": "int8_gemm", "in": {"a": "l_xn.npy"}, "weights": {"w": "l_w1.npy"}},
        {"name": "outlier_minmax", "op": "int8_gemm", "in": {"a": "l_xo.npy"}, "weights": {"w": "l_w2.npy"}},
        {"name": "exact", "op": "int8_gemm", "in": {"a": "l_xe.npy"}, "weights": {"w": "l_we.npy"}, "mode": "symmetric"},
        {"name": "calibrated", "op": "int8_gemm", "in": {"a": "l_xc.npy"}, "weights": {"w": "l_w1.npy"}, "method": "mse",
         "calibration": {"a": "l_cal.npy"}},
    ]
    with open(p("layer.json"), "w") as f:
        json.dump({"ops": ops}, f)
    rc, out, err = run(binary, ["--layer", p("layer.json"), "--threshold", "1e-3", "--format", "json"])
    check(rc == 0, f"--layer: exit {rc} ({err.strip()})")
    if rc != 0:
        return
    j = json.loads(out)
    by_name = {o["name"]: o for o in j["ops"]}
    want = {}
    for op in ops:
        o = by_name[op["name"]]
        both, ref = numpy_both(files[op["in"]["a"]], files[op["weights"]["w"]], o["activations"])
        want[op["name"]] = nmse(ref, both)
        got = o["output_error"]["nmse"]
        check(abs(got - want[op["name"]]) <= 1e-4 * want[op["name"]] + 1e-12,
              f"{op['name']}: nmse {got} vs numpy {want[op['name']]}")
        check(o["weights"]["file"] == p(op["weights"]["w"]), f"{op['name']}: weights resolved {o['weights']['file']}")
    order = sorted(want, key=lambda n: -want[n])
    check([o["name"] for o in j["ops"]] == order, f"ranking {[o['name'] for o in j['ops']]} vs numpy's {order} ({want})")
    check([o["rank"] for o in j["ops"]] == [1, 2, 3, 4], f"ranks {[o['rank'] for o in j['ops']]}")
    check(order[0] == "outlier_minmax" and order[-1] == "exact", f"the outlier layer is worst, the exact one best: {order}")
    check(want["outlier_minmax"] > 1e-3 > max(want["plain"], want["calibrated"], want["exact"]),
          f"the case separates at 1e-3: {want}")
    check(j["sensitive"] == ["outlier_minmax"], f"sensitive at 1e-3: {j['sensitive']}")
    check([o["sensitive"] for o in j["ops"]] == [o["name"] == "outlier_minmax" for o in j["ops"]], "sensitive flags")
    check(j["threshold"] == 1e-3 and j["threshold_source"] == "--threshold", f"threshold {j['threshold']} {j['threshold_source']}")
    check(by_name["exact"]["activations"]["mode"] == "symmetric" and by_name["calibrated"]["activations"]["method"] == "mse",
          "method and mode from the file")
    check(by_name["calibrated"]["activations"]["calibration"]["file"] == p("l_cal.npy") and
          by_name["plain"]["activations"]["calibration"]["separate"] is False, "calibration from the file")

    # The default threshold: the gate's float16 rtol 1e-3, squared.
    rc, out, err = run(binary, ["--layer", p("layer.json"), "--format", "json"])
    if rc == 0:
        jd = json.loads(out)
        check(jd["threshold"] == 1e-3 * 1e-3, f"default threshold {jd['threshold']}, expected 1e-3 squared")
        check(jd["threshold_source"].startswith("default: the gate's float16 rtol 0.001"), jd["threshold_source"])
        check(jd["sensitive"] == [n for n in order if want[n] > 1e-6], f"sensitive at the default: {jd['sensitive']}")
    else:
        check(False, f"--layer without --threshold: exit {rc} ({err.strip()})")

    # Text, from the file's directory with a relative path: the table in rank order and the fp16 line.
    rc, out, err = run(binary, ["--layer", "layer.json", "--threshold", "1e-3"], cwd=d)
    check(rc == 0, f"--layer text: exit {rc} ({err.strip()})")
    lines = out.splitlines()
    rows = [l.split()[1] for l in lines if l.strip()[:1].isdigit()]
    check(rows == order, f"text rows {rows} vs {order}: {out}")
    check(sum("SENSITIVE" in l for l in lines) == 1 and "SENSITIVE" in next(l for l in lines if "outlier_minmax" in l),
          f"one SENSITIVE row, outlier_minmax's: {out}")
    check(lines and lines[-1] == "keep in fp16: outlier_minmax", f"last line {lines[-1:]!r}")

    # Refusals: the file, the key path and the rule on one line.
    def layer_file(name, text):
        with open(p(name), "w") as f:
            f.write(text)
        return p(name)

    def variant(file_name, i, **change):
        bad = json.loads(json.dumps(ops))
        for k, v in change.items():
            if v is None:
                bad[i].pop(k)
            else:
                bad[i][k] = v
        return layer_file(file_name, json.dumps({"ops": bad}))

    f = layer_file("bad_json.json", '{"ops": [')
    refused(binary, ["--layer", f], (f"{f}: not JSON:",), "malformed JSON")
    f = variant("no_w.json", 2, weights={})
    refused(binary, ["--layer", f], (f"{f}: ops[2].weights.w: missing",), "missing weights key")
    f = variant("no_in.json", 1, **{"in": None})
    refused(binary, ["--layer", f], (f"{f}: ops[1].in.a: missing",), "missing in")
    f = variant("unknown_op.json", 1, op="matmul")
    refused(binary, ["--layer", f], (f"{f}: ops[1].op: 'matmul': unknown op",), "unknown op")
    f = variant("other_op.json", 0, op="rms_norm")
    refused(binary, ["--layer", f], (f"{f}: ops[0].op: 'rms_norm': quant-report covers int8_gemm only",), "other op")
    f = variant("no_file.json", 3, weights={"w": "missing.npy"})
    refused(binary, ["--layer", f], (f"{f}: ops[3].weights.w: {p('missing.npy')}: no such file",), "missing file")
    np.save(p("l_wk.npy"), files["l_w1.npy"][:, :48].copy())
    f = variant("bad_k.json", 0, weights={"w": "l_wk.npy"})
    refused(binary, ["--layer", f], (f"{f}: ops[0].in.a: {p('l_xn.npy')}: shape [32, 256]: the last dimension must be K = 48",),
            "shape mismatch")
    f = variant("bad_cal_k.json", 0, calibration={"a": "l_wk.npy"})
    refused(binary, ["--layer", f], (f"{f}: ops[0].calibration.a: {p('l_wk.npy')}: shape [32, 48]: the last dimension must be K = 256",),
            "calibration shape mismatch")
    f = variant("bad_mode.json", 0, mode="signed")
    refused(binary, ["--layer", f], (f"{f}: ops[0].mode: 'signed': must be asymmetric or symmetric",), "bad mode")
    f = variant("dup.json", 2, name="plain")
    refused(binary, ["--layer", f], (f"{f}: ops[2].name: 'plain' is also ops[0]'s name",), "duplicate name")
    refused(binary, ["--layer", p("nothing.json")], (f"{p('nothing.json')}: cannot open",), "missing layer file")
    refused(binary, ["--layer", p("layer.json"), "--in", f"a={p('l_xn.npy')}"], "--layer and --in", "--layer with --in")
    refused(binary, ["--layer", p("layer.json"), "--method", "mse"], "--layer and --method", "--layer with --method")
    refused(binary, ["--layer", p("layer.json"), "--threshold=-1"], "--threshold -1: must be a finite nmse >= 0",
            "negative threshold")
    refused(binary, ["--op", "int8_gemm", "--in", f"a={p('l_xn.npy')}", "--weights", f"w={p('l_w1.npy')}", "--threshold", "1"],
            "--threshold: only with --layer", "threshold without a layer")
    refused(binary, [], "give --op int8_gemm --in a=X.npy --weights w=W.npy, or --layer LAYER.json", "nothing to report")


def main():
    binary = os.path.abspath(sys.argv[1])  # the layer's text run starts in another directory
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

        check_calibration_set(binary, rng, p)
        check_layer(binary, rng, d, p)
    return finish("npukit quant-report: stage errors and shares as documented")


if __name__ == "__main__":
    sys.exit(main())
