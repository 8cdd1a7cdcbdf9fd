"""`npukit quant-report` end to end: the stage errors against numpy's own fp32, weight-only,
activation-only and both-dequantized products, shares that are exactly 0 where a stage is
exact (weights q · 2^-e; activations 0.25 · q), a separate calibration set (parameters as
`npukit calibrate` gives them; one without X's outliers clips them), a layer list (--layer)
ranked by numpy's nmse with the sensitive ops flagged, the default threshold, int4_gemm
(int4 weights in groups, symmetric and asymmetric, per-token or float activations; in a layer
beside int8_gemm) against numpy's own int4 and per-token quantization, and one-line refusals.

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
    refused(binary, ["--layer", f], (f"{f}: ops[0].op: 'rms_norm': quant-report covers int8_gemm or int4_gemm",), "other op")
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
    refused(binary, [], "give --op int8_gemm|int4_gemm --in a=X.npy --weights w=W.npy, or --layer LAYER.json",
            "nothing to report")

    # int4_gemm beside int8_gemm on the same weights: int4's coarser weights rank above.
    mixed = [
        {"name": "w8", "op": "int8_gemm", "in": {"a": "l_xn.npy"}, "weights": {"w": "l_w1.npy"}},
        {"name": "w4_g128", "op": "int4_gemm", "in": {"a": "l_xn.npy"}, "weights": {"w": "l_w1.npy"},
         "scheme": "int4-group:128,asymmetric"},
        {"name": "w4_float", "op": "int4_gemm", "in": {"a": "l_xn.npy"}, "weights": {"w": "l_w1.npy"},
         "activations": "float32"},
    ]
    f = layer_file("mixed.json", json.dumps({"ops": mixed}))
    rc, out, err = run(binary, ["--layer", f, "--format", "json"])
    check(rc == 0, f"mixed layer: exit {rc} ({err.strip()})")
    if rc == 0:
        j = json.loads(out)
        by = {o["name"]: o for o in j["ops"]}
        check(by["w4_g128"]["weights"]["scheme"] == "int4-group:128,asymmetric" and
              by["w4_float"]["weights"]["scheme"] == "int4-group:32,symmetric" and
              by["w8"]["weights"]["scheme"] == "int8-per-channel,symmetric", "schemes from the entries and the defaults")
        check(by["w4_float"]["activations"]["scheme"] == "float32" and by["w4_g128"]["activations"]["scheme"] ==
              "int8-per-token", "activations from the entries and the default")
        check(j["ops"][-1]["name"] == "w8", f"int8 weights rank below int4's: {[o['name'] for o in j['ops']]}")
    def mixed_variant(file_name, i, **change):
        bad = json.loads(json.dumps(mixed))
        bad[i].update(change)
        return layer_file(file_name, json.dumps({"ops": bad}))
    f = mixed_variant("int4_method.json", 1, method="mse")
    refused(binary, ["--layer", f], (f"{f}: ops[1]: int4_gemm's activations are quantized per row at run time",),
            "int4 entry with a method")
    f = mixed_variant("int8_int4scheme.json", 0, scheme="int4-group:32")
    refused(binary, ["--layer", f], (f"{f}: ops[0].scheme: int4-group:32: int8_gemm reads int8 weights",),
            "int8 entry with an int4 scheme")
    f = mixed_variant("bad_acts.json", 2, activations="int8-per-tensor")
    refused(binary, ["--layer", f], (f"{f}: ops[2].activations: int8-per-tensor: int4_gemm takes",), "int4 per-tensor")
    f = mixed_variant("bad_scheme.json", 1, scheme="int4-group:16")
    refused(binary, ["--layer", f], (f"{f}: ops[1].scheme: int4-group:16: the group must be 32, 64 or 128",),
            "bad group in the file")
    f = layer_file("global_int4.json", json.dumps({"ops": mixed[:1]}))
    refused(binary, ["--layer", f, "--scheme", "int4-group:64"], (f"{f}: ops[0]: --scheme int4-group:64: int8_gemm reads",),
            "--scheme int4 on an int8 entry")


def int4_dequantized(w, group, symmetric):
    """numpy's int4 group quantization as docs/quantization.md states it, w' = s · (q − zp)."""
    N, K = w.shape
    g = w.reshape(N, K // group, group)
    if symmetric:
        s = (np.abs(g).max(axis=2) / np.float32(7)).astype(np.float32)
        s[s == 0] = 1
        q = np.clip(np.rint(g / s[..., None]), -7, 7)
        zp = np.zeros_like(s)
    else:
        lo = np.minimum(g.min(axis=2), 0).astype(np.float64)
        hi = np.maximum(g.max(axis=2), 0).astype(np.float64)
        s = ((hi - lo) / 15).astype(np.float32)
        s[s == 0] = 1
        zp = np.clip(np.rint(np.float32(0) - lo.astype(np.float32) / s), 0, 15)
        q = np.clip(np.rint(g / s[..., None]) + zp[..., None], 0, 15)
    return (s[..., None] * (q - zp[..., None]).astype(np.float32)).reshape(N, K).astype(np.float64)


def per_token_dequantized(x):
    s = (np.abs(x).max(axis=1) / np.float32(127)).astype(np.float32)
    safe = np.where(s == 0, np.float32(1), s)
    q = np.where(s[:, None] == 0, 0, np.clip(np.rint(x / safe[:, None]), -127, 127))
    return (s[:, None] * q.astype(np.float32)).astype(np.float64)


def check_int4(binary, rng, p):
    """int4_gemm: every stage against numpy's int4 and per-token quantization, groups of 32
    and 128 (finer groups, smaller weight error), symmetric and asymmetric weights, float32
    activations (no activation error), weights int4 holds exactly (no weight error)."""
    M, N, K = 12, 40, 256
    z = rng.standard_normal((M, K)) * 2
    x = (z / (1 + np.exp(-z))).astype(np.float32)
    x[4, 17] = 30.0
    w = (rng.standard_normal((N, K)) * 0.05).astype(np.float32)
    np.save(p("x4.npy"), x)
    np.save(p("w4.npy"), w)
    ref = x.astype(np.float64) @ w.astype(np.float64).T
    x_hat = per_token_dequantized(x)
    weight_nmse = {}
    for scheme, group, symmetric in (("int4-group:32", 32, True), ("int4-group:128", 128, True),
                                     ("int4-group:64,asymmetric", 64, False), ("int4-group:128,asymmetric", 128, False)):
        rc, out, err = run(binary, ["--op", "int4_gemm", "--in", f"a={p('x4.npy')}", "--weights", f"w={p('w4.npy')}",
                                    "--scheme", scheme, "--format", "json"])
        check(rc == 0, f"int4 {scheme}: exit {rc} ({err.strip()})")
        if rc != 0:
            continue
        j = json.loads(out)
        w_hat = int4_dequantized(w, group, symmetric)
        st = j["stages"]
        for name, y, tol in (("weights_only", x.astype(np.float64) @ w_hat.T, 1e-4),
                             ("activations_only", x_hat @ w.astype(np.float64).T, 1e-4),
                             ("both", x_hat @ w_hat.T, 1e-3)):  # the kernel's fp32 sums against numpy's fp64
            want = nmse(ref, y)
            check(abs(st[name]["nmse"] - want) <= tol * want, f"int4 {scheme} {name} nmse {st[name]['nmse']} vs numpy {want}")
        # fp32 sums within and across groups: the kernel's arithmetic is far below the roundings'.
        check(st["accumulation"]["nmse"] < 1e-6 * st["both"]["nmse"], f"int4 {scheme}: accumulation {st['accumulation']}")
        weight_nmse[scheme] = st["weights_only"]["nmse"]
        check(j["args"] == f"--param group={group}", f"int4 {scheme}: args {j['args']}")
        check(j["weights"]["scheme"] == (scheme if "," in scheme else scheme + ",symmetric"), j["weights"]["scheme"])
        check(j["activations"]["scheme"] == "int8-per-token", f"int4 default activations {j['activations']}")
        want_x = float(((x_hat - x) ** 2).sum() / (x.astype(np.float64) ** 2).sum())
        check(abs(j["activations"]["nmse"] - want_x) <= 1e-6 * want_x, f"x nmse {j['activations']['nmse']} vs {want_x}")
    if len(weight_nmse) == 4:
        check(weight_nmse["int4-group:32"] < weight_nmse["int4-group:128"], f"finer groups, less error: {weight_nmse}")
        check(weight_nmse["int4-group:128,asymmetric"] < weight_nmse["int4-group:128"],
              f"a zero point per group uses all 16 levels: {weight_nmse}")

    # float32 activations: the activation stage is exact.
    j = None
    rc, out, err = run(binary, ["--op", "int4_gemm", "--in", f"a={p('x4.npy')}", "--weights", f"w={p('w4.npy')}",
                                "--activations", "float32", "--format", "json"])
    check(rc == 0, f"int4 float32: exit {rc} ({err.strip()})")
    if rc == 0:
        j = json.loads(out)
        check(j["stages"]["activations_only"]["nmse"] == 0 and j["shares"]["weights"] > 1 - 1e-6,
              f"float32 activations: {j['stages']['activations_only']}, shares {j['shares']}")
        want = nmse(ref, x.astype(np.float64) @ int4_dequantized(w, 32, True).T)
        check(abs(j["output_error"]["nmse"] - want) <= 1e-3 * want, f"int4 float32 both {j['output_error']['nmse']} vs {want}")

    # Weights int4 holds exactly (q · 2^-e, ±7 in every group of 32): no weight error.
    q = rng.integers(-7, 8, (N, K))
    q[:, ::32] = 7
    np.save(p("w4_exact.npy"), (q * np.exp2(-rng.integers(2, 6, N))[:, None]).astype(np.float32))
    rc, out, err = run(binary, ["--op", "int4_gemm", "--in", f"a={p('x4.npy')}", "--weights", f"w={p('w4_exact.npy')}",
                                "--format", "json"])
    if rc == 0:
        j = json.loads(out)
        check(j["stages"]["weights_only"]["nmse"] == 0 and j["shares"]["weights"] == 0,
              f"exact int4 weights: {j['stages']['weights_only']}, share {j['shares']['weights']}")
    else:
        check(False, f"exact int4 weights: exit {rc} ({err.strip()})")

    rc, out, err = run(binary, ["--op", "int4_gemm", "--in", f"a={p('x4.npy')}", "--weights", f"w={p('w4.npy')}"])
    check(rc == 0 and "as int8-per-token" in out and "--param group=32" in out and "both (kernel)" in out,
          f"int4 text report: {rc} {out} {err.strip()}")

    base = ["--op", "int4_gemm", "--in", f"a={p('x4.npy')}", "--weights", f"w={p('w4.npy')}"]
    refused(binary, base + ["--scheme", "int8-per-channel"], "--scheme int8-per-channel: int4_gemm reads int4 weights",
            "int4_gemm with int8 weights")
    refused(binary, base + ["--method", "mse"], "--method: int4_gemm's activations are quantized per row at run time",
            "int4_gemm with a calibration method")
    refused(binary, base + ["--activations", "float32", "--symmetric"], "--symmetric: int4_gemm's activations are not quantized",
            "float activations with a mode")
    refused(binary, base + ["--activations", "int8-per-tensor"], "--activations int8-per-tensor: int4_gemm takes",
            "int4_gemm per tensor")
    refused(binary, base + ["--scheme", "int4-group:32,signed"], "--scheme int4-group:32,signed: the mode after ','",
            "bad weight mode")
    np.save(p("w4_k96.npy"), w[:, :96].copy())
    np.save(p("x4_k96.npy"), x[:, :96].copy())
    refused(binary, ["--op", "int4_gemm", "--in", f"a={p('x4_k96.npy')}", "--weights", f"w={p('w4_k96.npy')}", "--scheme",
                     "int4-group:64"], "K = 96: must be a multiple of the group 64", "K not a multiple of the group")
    refused(binary, ["--op", "int8_gemm", "--in", f"a={p('x4.npy')}", "--weights", f"w={p('w4.npy')}", "--activations",
                     "float32"], "--activations float32: int8_gemm takes int8 activations", "int8_gemm float activations")
    refused(binary, ["--op", "int8_gemm", "--in", f"a={p('x4.npy')}", "--weights", f"w={p('w4.npy')}", "--scheme",
                     "int8-per-channel,asymmetric"], "--scheme int8-per-channel,asymmetric: int8_gemm reads int8 weights",
            "int8 weights with a zero point")


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
            check(abs(sh["weights"] + sh["activations"] + sh["accumulation"] - 1) < 1e-12, f"shares sum to 1: {sh}")
            three = st["weights_only"]["nmse"] + st["activations_only"]["nmse"] + st["accumulation"]["nmse"]
            want = st["weights_only"]["nmse"] / three
            check(abs(sh["weights"] - want) < 1e-12, f"weight share {sh['weights']} vs {want}")
            check(abs(sh["interaction_nmse"] - (st["both"]["nmse"] - three)) <= 1e-12 * st["both"]["nmse"],
                  f"interaction {sh['interaction_nmse']} = both minus the three stages")
            # int32 sums and an fp32 epilogue: the kernel adds a few fp32 roundings, no more.
            check(0 < st["accumulation"]["nmse"] < 1e-12, f"int8_gemm's accumulation nmse {st['accumulation']['nmse']}")
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
            check(j["shares"]["activations"] > 1 - 1e-6, f"exact weights: activation share {j['shares']['activations']}")

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
                "--op rms_norm: quant-report covers int8_gemm or int4_gemm", "other op")
        refused(binary, base + ["--weights", f"w={p('w_badk.npy')}"], "the last dimension must be K = 64", "K mismatch")
        refused(binary, base + ["--weights", f"w={p('w.npy')}", "--scheme", "int4-group:32"],
                "--scheme int4-group:32: int8_gemm reads int8 weights", "int4 scheme")
        refused(binary, base + ["--weights", f"w={p('w.npy')}", "--method", "percentile:200"], "--method percentile:200",
                "bad method")

        check_calibration_set(binary, rng, p)
        check_layer(binary, rng, d, p)
        check_int4(binary, rng, p)
    return finish("npukit quant-report: stage errors and shares as documented")


if __name__ == "__main__":
    sys.exit(main())
