"""`npukit run` against an independent numpy computation, as a new user would try it.

Usage: /usr/bin/python3 run_vs_numpy.py PATH/TO/npukit
"""
import os
import stat
import subprocess
import sys
import tempfile

import numpy as np


def rms_norm_numpy(x, w, eps):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps) * w.astype(np.float64)


def rope_numpy(x, positions, theta, rotary_dim, style):
    """HF / GPT-J RoPE in float64, written from the papers' formulas."""
    x64 = x.astype(np.float64)
    half = rotary_dim // 2
    inv_freq = theta ** (-np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)
    ang = positions.astype(np.float64)[:, None] * inv_freq[None, :]          # (tokens, half)
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    y = x64.copy()
    if style == "half":
        a, b = x64[..., :half], x64[..., half:rotary_dim]
        y[..., :half], y[..., half:rotary_dim] = a * cos - b * sin, a * sin + b * cos
    else:
        a, b = x64[..., 0:rotary_dim:2], x64[..., 1:rotary_dim:2]
        y[..., 0:rotary_dim:2], y[..., 1:rotary_dim:2] = a * cos - b * sin, a * sin + b * cos
    return y


def silu_mul_numpy(gate_up):
    """SwiGLU's activation on a fused [T, 2F] gate|up projection output, gate first."""
    g64 = gate_up.astype(np.float64)
    f = g64.shape[-1] // 2
    gate, up = g64[..., :f], g64[..., f:]
    return gate / (1 + np.exp(-gate)) * up


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
        for dtype, rtol, atol in ((np.float32, 1e-5, 1e-5), (np.float16, 2e-3, 2e-3)):
            for (tokens, heads, head_dim, rd, style, theta) in ((1, 32, 128, 128, "half", 10000.0),
                                                                (7, 4, 64, 32, "interleaved", 500000.0),
                                                                (5, 2, 80, 64, "half", 10000.0)):
                x = rng.standard_normal((tokens, heads, head_dim)).astype(dtype)
                pos = rng.integers(0, 1 << 20, tokens).astype(np.int32)
                xp, pp, yp = (os.path.join(d, n) for n in ("x.npy", "p.npy", "y.npy"))
                np.save(xp, x)
                np.save(pp, pos)
                code, out = run(npukit, "run", "--op", "rope", "--in", f"x={xp}", "--in", f"positions={pp}",
                                "--param", f"theta={theta:g}", "--param", f"style={style}", "--param", f"rotary_dim={rd}",
                                "--out", f"y={yp}")
                name = f"rope {np.dtype(dtype).name} {tokens}x{heads}x{head_dim} rd={rd} {style}"
                if code != 0:
                    print(f"FAIL {name}: exit {code}: {out}")
                    failures += 1
                    continue
                y = np.load(yp)
                want = rope_numpy(x, pos, theta, rd, style)
                ok = y.dtype == dtype and y.shape == x.shape and np.allclose(y.astype(np.float64), want, rtol=rtol, atol=atol)
                print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs err {np.max(np.abs(y.astype(np.float64) - want)):.3g}")
                failures += not ok
        # INT8 GEMM: int32 exactly, float32 within tolerance, int8 (float rounding) exactly.
        for (m, n, k, zp) in ((1, 64, 4096, 3), (17, 33, 130, -7)):
            a = rng.integers(-128, 128, (m, k), dtype=np.int8)
            w = rng.integers(-128, 128, (n, k), dtype=np.int8)
            s = rng.uniform(0.001, 0.01, n).astype(np.float32)
            acc = (a.astype(np.int64) - zp) @ w.astype(np.int64).T
            ap, wp, sp, yp = (os.path.join(d, f) for f in ("a.npy", "w.npy", "s.npy", "y.npy"))
            np.save(ap, a)
            np.save(wp, w)
            np.save(sp, s)
            base = ["run", "--op", "int8_gemm", "--in", f"a={ap}", "--in", f"w={wp}", "--param", f"a_zero_point={zp}"]
            for out, extra, want, exact in (
                    ("int32", [], acc, True),
                    ("float32", ["--in", f"w_scale={sp}", "--param", "a_scale=0.02"],
                     acc * 0.02 * s.astype(np.float64), False),
                    ("int8", ["--in", f"w_scale={sp}", "--param", "a_scale=0.02", "--param", "out_scale=0.5",
                              "--param", "rounding=float", "--param", "out_zero_point=-4"],
                     np.clip(np.rint(acc.astype(np.float32) * ((np.float32(0.02) * s) / np.float32(0.5))) - 4, -128, 127),
                     True)):
                code, msg = run(npukit, *base, *extra, "--param", f"out={out}", "--out", f"y={yp}")
                name = f"int8_gemm out={out} {m}x{n}x{k} zp={zp}"
                if code != 0:
                    print(f"FAIL {name}: exit {code}: {msg}")
                    failures += 1
                    continue
                y = np.load(yp)
                ok = (np.array_equal(y.astype(np.int64), want.astype(np.int64)) if exact
                      else np.allclose(y.astype(np.float64), want, rtol=2e-6, atol=1e-6))
                print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs err {np.max(np.abs(y.astype(np.float64) - want)):.3g}")
                failures += not ok
        # int4 weights as a user makes them: `npukit quantize --scheme int4-group:G`, then
        # `npukit run --op int4_gemm` on its files, against numpy's dequantized product.
        for (m, n, k, g, asym, act, out) in ((1, 96, 512, 64, False, np.float32, "float32"),
                                             (3, 40, 256, 128, True, np.float16, "float16"),
                                             (5, 33, 320, 32, True, np.int8, "float32")):
            w = (0.05 * rng.standard_normal((n, k))).astype(np.float32)
            w[3, 7] = 1.5  # an outlier
            p = {f: os.path.join(d, f + ".npy") for f in ("w4", "q4", "s4", "z4", "a4", "as4", "y4")}
            np.save(p["w4"], w)
            outs = ["--out", f"q={p['q4']}", "--out", f"scales={p['s4']}"]
            if asym:
                outs += ["--out", f"zero_points={p['z4']}"]
            name = f"int4_gemm {m}x{n}x{k} int4-group:{g} {'asym' if asym else 'sym'} a {np.dtype(act).name} out={out}"
            code, msg = run(npukit, "quantize", "--in", f"w={p['w4']}", "--scheme",
                            f"int4-group:{g}", "--asymmetric" if asym else "--symmetric", *outs)
            if code != 0:
                print(f"FAIL {name}: quantize exit {code}: {msg}")
                failures += 1
                continue
            q, sc = np.load(p["q4"]), np.load(p["s4"]).astype(np.float64)
            nib = np.empty((n, k), np.int64)
            nib[:, 0::2], nib[:, 1::2] = q & 0xF, q >> 4
            zp = np.load(p["z4"]).astype(np.int64) if asym else 0
            if not asym:
                nib = np.where(nib >= 8, nib - 16, nib)
            wd = np.repeat(sc, g, axis=1) * (nib - (np.repeat(zp, g, axis=1) if asym else 0))
            x = rng.standard_normal((m, k))
            args = ["run", "--op", "int4_gemm", "--in", f"w={p['q4']}", "--in", f"scales={p['s4']}",
                    "--param", f"group={g}", "--param", f"out={out}", "--out", f"y={p['y4']}"]
            if asym:
                args += ["--in", f"zero_points={p['z4']}"]
            if act == np.int8:  # per-token symmetric, as per_token_quant gives them
                a_s = (np.abs(x).max(axis=1) / 127).astype(np.float32)
                a = np.clip(np.rint(x / a_s[:, None]), -127, 127).astype(np.int8)
                np.save(p["as4"], a_s)
                args += ["--in", f"a_scales={p['as4']}"]
                a64 = a.astype(np.float64) * a_s.astype(np.float64)[:, None]
            else:
                a = x.astype(act)
                a64 = a.astype(np.float64)
            np.save(p["a4"], a)
            args += ["--in", f"a={p['a4']}"]
            code, msg = run(npukit, *args)
            if code != 0:
                print(f"FAIL {name}: run exit {code}: {msg}")
                failures += 1
                continue
            y = np.load(p["y4"]).astype(np.float64)
            want = a64 @ wd.T
            bound = 1e-5 * (np.abs(a64) @ np.abs(wd).T)  # fp32 sums of a few hundred terms
            if out == "float16":
                bound += 1e-3 * np.abs(want)
            ok = np.load(p["y4"]).dtype == np.dtype(out) and np.all(np.abs(y - want) <= bound + 1e-7)
            print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs err {np.max(np.abs(y - want)):.3g}")
            failures += not ok
        # Attention core, grouped-query, causal over a cache with garbage past each position.
        for dtype, tol in ((np.float32, 2e-5), (np.float16, 3e-3)):
            T, Hq, Hkv, Dh, S = 3, 8, 2, 64, 50
            q = rng.standard_normal((T, Hq, Dh)).astype(dtype)
            k = rng.standard_normal((Hkv, S, Dh)).astype(dtype)
            v = rng.standard_normal((Hkv, S, Dh)).astype(dtype)
            pos = np.array([20, 21, 22], dtype=np.int32)
            k[:, 23:, :] = np.nan  # never read: past every query's position
            paths = {n: os.path.join(d, n + ".npy") for n in ("q", "k", "v", "p", "o")}
            for n, arr in (("q", q), ("k", k), ("v", v), ("p", pos)):
                np.save(paths[n], arr)
            code, msg = run(npukit, "run", "--op", "attention", "--in", f"q={paths['q']}", "--in", f"k_cache={paths['k']}",
                            "--in", f"v_cache={paths['v']}", "--in", f"positions={paths['p']}", "--out", f"o={paths['o']}")
            name = f"attention {np.dtype(dtype).name} T={T} Hq={Hq} Hkv={Hkv} S={S}"
            if code != 0:
                print(f"FAIL {name}: exit {code}: {msg}")
                failures += 1
                continue
            want = np.zeros((T, Hq, Dh))
            for t in range(T):
                for h in range(Hq):
                    g = h // (Hq // Hkv)
                    kk, vv = k[g, :pos[t] + 1].astype(np.float64), v[g, :pos[t] + 1].astype(np.float64)
                    sc = kk @ q[t, h].astype(np.float64) / np.sqrt(Dh)
                    w = np.exp(sc - sc.max())
                    want[t, h] = (w / w.sum()) @ vv
            o = np.load(paths["o"]).astype(np.float64)
            ok = np.allclose(o, want, rtol=tol, atol=tol)
            print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs err {np.max(np.abs(o - want)):.3g}")
            failures += not ok
        for dtype, rtol, atol in ((np.float32, 2e-5, 1e-6), (np.float16, 2e-3, 1e-3)):
            # silu_mul takes the projection's [T, 2F] output as the [T, 2, F] view of it.
            gu = (3 * rng.standard_normal((3, 2 * 1000))).astype(dtype)
            gp, yp = os.path.join(d, "gu.npy"), os.path.join(d, "y.npy")
            np.save(gp, gu.reshape(3, 2, 1000))
            code, out = run(npukit, "run", "--op", "silu_mul", "--in", f"gate_up={gp}", "--out", f"y={yp}")
            name = f"silu_mul {np.dtype(dtype).name} 3x2x1000"
            if code != 0:
                print(f"FAIL {name}: exit {code}: {out}")
                failures += 1
            else:
                y, want = np.load(yp), silu_mul_numpy(gu)
                ok = y.dtype == dtype and y.shape == want.shape and np.allclose(y.astype(np.float64), want, rtol=rtol, atol=atol)
                print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs err {np.max(np.abs(y.astype(np.float64) - want)):.3g}")
                failures += not ok
            # add_rms_norm: the residual is inout, saved with --out after the call.
            x = rng.standard_normal((5, 4096)).astype(dtype)
            r = rng.standard_normal((5, 4096)).astype(dtype)
            w = rng.uniform(0.5, 1.5, 4096).astype(dtype)
            paths = {n: os.path.join(d, n + ".npy") for n in ("x", "r", "w", "y", "r2")}
            for n, arr in (("x", x), ("r", r), ("w", w)):
                np.save(paths[n], arr)
            code, out = run(npukit, "run", "--op", "add_rms_norm", "--in", f"x={paths['x']}", "--in", f"residual={paths['r']}",
                            "--in", f"weight={paths['w']}", "--param", "eps=1e-6", "--out", f"y={paths['y']}",
                            "--out", f"residual={paths['r2']}")
            name = f"add_rms_norm {np.dtype(dtype).name} 5x4096"
            if code != 0:
                print(f"FAIL {name}: exit {code}: {out}")
                failures += 1
            else:
                r2, y = np.load(paths["r2"]), np.load(paths["y"])
                want_r = (x.astype(np.float64) + r.astype(np.float64)).astype(dtype)  # one rounding of the exact sum
                want_y = rms_norm_numpy(want_r, w, 1e-6)
                ok = np.array_equal(r2, want_r) and np.allclose(y.astype(np.float64), want_y, rtol=rtol, atol=atol)
                print(f"{'ok  ' if ok else 'FAIL'} {name}: residual exact {np.array_equal(r2, want_r)}, "
                      f"y max abs err {np.max(np.abs(y.astype(np.float64) - want_y)):.3g}")
                failures += not ok
        # A new user's typical mistake: float64 input. It must be a clear error, exit 2.
        np.save(os.path.join(d, "x64.npy"), np.ones((2, 8)))
        np.save(os.path.join(d, "w64.npy"), np.ones(8))
        code, out = run(npukit, "run", "--op", "rms_norm", "--in", f"x={d}/x64.npy", "--in", f"weight={d}/w64.npy",
                        "--out", f"y={d}/y.npy")
        ok = code == 2 and "dtype float64 is not supported" in out
        print(f"{'ok  ' if ok else 'FAIL'} float64 input rejected: exit {code}: {out.strip()}")
        failures += not ok
        # Bad command lines and unbounded inputs (issue 15): exit 2, one line, nothing read whole.
        np.save(os.path.join(d, "x.npy"), np.ones((2, 8), np.float32))
        np.save(os.path.join(d, "w.npy"), np.ones(8, np.float32))
        with open(os.path.join(d, "x.npy"), "rb") as f, open(os.path.join(d, "xbig.npy"), "wb") as g:
            g.write(f.read() + b"\0" * 2_000_000)  # a valid header, then far more data than it says
        good = ["--in", f"x={d}/x.npy", "--in", f"weight={d}/w.npy"]
        for name, args, env, text in [
                ("--out given twice", good + ["--out", f"y={d}/a.npy", "--out", f"y={d}/b.npy"], {}, "--out y given twice"),
                ("--in /dev/zero refused at its first bytes", ["--in", "x=/dev/zero", "--in", f"weight={d}/w.npy",
                                                             "--out", f"y={d}/a.npy"], {}, "bad magic"),
                ("a .npy over NPUKIT_MAX_NPY_BYTES refused", ["--in", f"x={d}/xbig.npy", "--in", f"weight={d}/w.npy",
                                                             "--out", f"y={d}/a.npy"],
                 {"NPUKIT_MAX_NPY_BYTES": "1000000"}, "larger than 1000000 bytes")]:
            p = subprocess.run([npukit, "run", "--op", "rms_norm", *args], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, **env))
            ok = p.returncode == 2 and text in p.stderr and p.stderr.count("\n") == 1
            print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {p.returncode}: {p.stderr.strip()}")
            failures += not ok
        # A failed write leaves no truncated file, and never removes a device (run as root).
        p = subprocess.run([npukit, "run", "--op", "rms_norm", *good, "--out", "y=/dev/full"],
                           capture_output=True, text=True, timeout=60)
        ok = p.returncode == 2 and "/dev/full" in p.stderr and stat.S_ISCHR(os.stat("/dev/full").st_mode)
        print(f"{'ok  ' if ok else 'FAIL'} --out y=/dev/full: exit {p.returncode}, /dev/full still a device: {p.stderr.strip()}")
        failures += not ok
    print(f"{34 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
