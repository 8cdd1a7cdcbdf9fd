"""`npukit run --op qkv_attention` against an independent numpy computation, with the
command line of issue 5: --in x, w_qkv, w_o, k_cache, v_cache [, mask], the parameters,
--out y and the updated caches (--out k_cache=..., --out v_cache=...); with float weights
and with int8 weights (--in w_qkv_scale, w_o_scale; per-token quantization in numpy).

Usage: /usr/bin/python3 qkv_attention_vs_numpy.py PATH/TO/npukit
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def rope(x, positions, theta, style):
    """x [T, H, Dh] in float64, rotary_dim = Dh."""
    dh = x.shape[-1]
    inv_freq = theta ** (-np.arange(0, dh, 2, dtype=np.float64) / dh)
    ang = positions.astype(np.float64)[:, None] * inv_freq[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    y = x.copy()
    if style == "half":
        a, b = x[..., :dh // 2], x[..., dh // 2:]
        y[..., :dh // 2], y[..., dh // 2:] = a * cos - b * sin, a * sin + b * cos
    else:
        a, b = x[..., 0::2], x[..., 1::2]
        y[..., 0::2], y[..., 1::2] = a * cos - b * sin, a * sin + b * cos
    return y


def quantize_rows(a):
    """Per-token symmetric int8 (docs/ops/attention.md): everything in float32, ties to even.
    Returns q (int64) and the per-row scales (float32; NaN for rows with NaN/Inf)."""
    a = a.astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.max(np.abs(a), axis=1)
        s = np.where(np.all(np.isfinite(a), axis=1), m / np.float32(127), np.float32(np.nan)).astype(np.float32)
        ok = (s > 0) & np.isfinite(s)
        q = np.where(ok[:, None], np.clip(np.rint(a / np.where(ok, s, np.float32(1))[:, None]), -127, 127), 0)
    return q.astype(np.int64), s


def project_int8(a, w, w_scale):
    """a [T, K] quantized per token, times int8 w [N, K]ᵀ exactly, dequantized in float32."""
    q, s = quantize_rows(a)
    acc = q @ w.astype(np.int64).T
    return (acc.astype(np.float32) * (s[:, None] * w_scale[None, :].astype(np.float32))).astype(np.float64)


def layer(x, w_qkv, w_o, k_cache, v_cache, mask, pos, hq, hkv, dh, theta, style, scales=None):
    """The attention block of one layer, step by step in float64 (with int8 weights and their
    `scales`, the projections quantize per token). Returns y, k, v caches."""
    cache_dtype = k_cache.dtype
    if scales is None:
        x, w_qkv, w_o = (a.astype(np.float64) for a in (x, w_qkv, w_o))
    k_cache, v_cache = k_cache.astype(np.float64), v_cache.astype(np.float64)
    T = x.shape[0]
    qkv = x @ w_qkv.T if scales is None else project_int8(x, w_qkv, scales[0])
    q = qkv[:, :hq * dh].reshape(T, hq, dh)
    k = qkv[:, hq * dh:(hq + hkv) * dh].reshape(T, hkv, dh)
    v = qkv[:, (hq + hkv) * dh:].reshape(T, hkv, dh)
    positions = np.arange(pos, pos + T)
    q, k = rope(q, positions, theta, style), rope(k, positions, theta, style)
    k_cache[:, pos:pos + T] = k.transpose(1, 0, 2)
    v_cache[:, pos:pos + T] = v.transpose(1, 0, 2)
    if scales is not None:  # the int8 path quantizes o: attend over what the cache stores
        k_cache[:, pos:pos + T] = k_cache[:, pos:pos + T].astype(cache_dtype)
        v_cache[:, pos:pos + T] = v_cache[:, pos:pos + T].astype(cache_dtype)
    o = np.zeros((T, hq, dh))
    for t in range(T):
        for h in range(hq):
            g = h // (hq // hkv)
            live = np.arange(pos + t + 1)
            if mask is not None:
                live = live[mask[t, live] != -np.inf]
            if live.size == 0:
                continue
            s = k_cache[g, live] @ q[t, h] / np.sqrt(dh)
            if mask is not None:
                s = s + mask[t, live]
            w = np.exp(s - s.max())
            o[t, h] = (w / w.sum()) @ v_cache[g, live]
    o = o.reshape(T, hq * dh)
    y = o @ w_o.T if scales is None else project_int8(o, w_o, scales[1])
    return y, k_cache, v_cache


def run(npukit, *args):
    p = subprocess.run([npukit, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    npukit = sys.argv[1]
    rng = np.random.default_rng(55)
    failures, passed = 0, 0
    D, S, pos, theta = 64, 32, 17, 10000.0
    with tempfile.TemporaryDirectory() as d:
        p = {n: os.path.join(d, n + ".npy") for n in ("x", "wqkv", "wo", "k", "v", "m", "y", "k2", "v2", "sq", "so")}
        cases = [(np.float32, 1, 8, 2, 16, "half", False, 2e-5),
                 (np.float32, 7, 8, 8, 16, "interleaved", True, 2e-5),
                 (np.float16, 1, 8, 1, 16, "interleaved", False, 4e-3),
                 (np.float16, 7, 4, 2, 32, "half", True, 4e-3)]
        # int8 weights, per-channel scales over three orders of magnitude, x of either dtype.
        cases += [(np.float32, 1, 8, 2, 16, "half", False, 2e-5, "int8"),
                  (np.float32, 7, 4, 2, 32, "interleaved", True, 2e-5, "int8"),
                  (np.float16, 7, 8, 1, 16, "half", True, 4e-3, "int8")]
        for dtype, T, hq, hkv, dh, style, with_mask, tol, *wtype in [c + ("float",) * (len(c) == 8) for c in cases]:
            int8 = wtype[0] == "int8"
            x = rng.standard_normal((T, D)).astype(dtype)
            scales = None
            if int8:
                w_qkv = rng.integers(-127, 128, ((hq + 2 * hkv) * dh, D), dtype=np.int8)
                w_o = rng.integers(-128, 128, (D, hq * dh), dtype=np.int8)
                scales = (10.0 ** rng.uniform(-1.5, 1.5, w_qkv.shape[0]) / (73 * np.sqrt(D)),
                          10.0 ** rng.uniform(-1.5, 1.5, D) / (73 * np.sqrt(hq * dh)))
                scales = tuple(sc.astype(np.float32) for sc in scales)
                x[T // 2] = 0  # a zero token: exact zero rows in the caches
            else:
                w_qkv = (rng.standard_normal(((hq + 2 * hkv) * dh, D)) / np.sqrt(D)).astype(dtype)
                w_o = (rng.standard_normal((D, hq * dh)) / np.sqrt(hq * dh)).astype(dtype)
            k = rng.standard_normal((hkv, S, dh)).astype(dtype)
            v = rng.standard_normal((hkv, S, dh)).astype(dtype)
            k[:, pos + T:] = np.nan  # not yet written: never read
            v[:, pos:] = np.inf      # overwritten at pos ... pos+T-1, never read past
            mask = None
            for n, a in (("x", x), ("wqkv", w_qkv), ("wo", w_o), ("k", k), ("v", v)):
                np.save(p[n], a)
            args = ["run", "--op", "qkv_attention", "--in", f"x={p['x']}", "--in", f"w_qkv={p['wqkv']}",
                    "--in", f"w_o={p['wo']}", "--in", f"k_cache={p['k']}", "--in", f"v_cache={p['v']}"]
            if int8:
                np.save(p["sq"], scales[0])
                np.save(p["so"], scales[1])
                args += ["--in", f"w_qkv_scale={p['sq']}", "--in", f"w_o_scale={p['so']}"]
            if with_mask:
                mask = np.zeros((T, S), dtype=np.float32)
                mask[:, 3:9] = -np.inf  # padding
                np.save(p["m"], mask)
                args += ["--in", f"mask={p['m']}"]
            args += ["--param", f"pos={pos}", "--param", f"heads={hq}", "--param", f"kv_heads={hkv}",
                     "--param", f"head_dim={dh}", "--param", f"theta={theta:g}", "--param", f"style={style}",
                     "--out", f"y={p['y']}", "--out", f"k_cache={p['k2']}", "--out", f"v_cache={p['v2']}"]
            name = (f"qkv_attention {np.dtype(dtype).name}{' w=int8' if int8 else ''} T={T} Hq={hq} Hkv={hkv} Dh={dh} "
                    f"{style}" + (" mask" if with_mask else ""))
            code, out = run(npukit, *args)
            if code != 0:
                print(f"FAIL {name}: exit {code}: {out}")
                failures += 1
                continue
            want_y, want_k, want_v = layer(x, w_qkv, w_o, k, v, mask, pos, hq, hkv, dh, theta, style, scales)
            y, k2, v2 = (np.load(p[n]) for n in ("y", "k2", "v2"))
            new = slice(pos, pos + T)
            untouched = np.ones(S, dtype=bool)
            untouched[new] = False
            ok = (y.dtype == dtype and y.shape == (T, D) and k2.dtype == dtype and k2.shape == k.shape
                  and np.allclose(y.astype(np.float64), want_y, rtol=tol, atol=tol)
                  and np.allclose(k2[:, new].astype(np.float64), want_k[:, new], rtol=tol, atol=tol)
                  and np.allclose(v2[:, new].astype(np.float64), want_v[:, new], rtol=tol, atol=tol)
                  and np.array_equal(k2[:, untouched], k[:, untouched], equal_nan=True)
                  and np.array_equal(v2[:, untouched], v[:, untouched])
                  and np.array_equal(np.load(p["k"]), k, equal_nan=True))  # the --in file is not rewritten
            if int8:  # the zero token's new rows are exactly 0
                ok = ok and not np.any(k2[:, pos + T // 2]) and not np.any(v2[:, pos + T // 2])
            err = np.max(np.abs(y.astype(np.float64) - want_y))
            print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs err y {err:.3g}")
            failures += not ok
            passed += ok
        # A position past the cache is an error that names pos, T and S_max; nothing is written.
        code, out = run(npukit, "run", "--op", "qkv_attention", "--in", f"x={p['x']}", "--in", f"w_qkv={p['wqkv']}",
                        "--in", f"w_o={p['wo']}", "--in", f"k_cache={p['k']}", "--in", f"v_cache={p['v']}",
                        "--param", "pos=30", "--out", f"y={d}/y_err.npy")
        ok = code == 2 and "pos = 30 with T = 7" in out and "S_max = 32" in out and not os.path.exists(f"{d}/y_err.npy")
        print(f"{'ok  ' if ok else 'FAIL'} pos + T > S_max rejected: exit {code}: {out.strip()}")
        failures += not ok
        passed += ok
        # Int8 weights without their scales: an error naming the missing input.
        code, out = run(npukit, "run", "--op", "qkv_attention", "--in", f"x={p['x']}", "--in", f"w_qkv={p['wqkv']}",
                        "--in", f"w_o={p['wo']}", "--in", f"k_cache={p['k']}", "--in", f"v_cache={p['v']}",
                        "--in", f"w_o_scale={p['so']}", "--param", "pos=3", "--out", f"y={d}/y_err.npy")
        ok = code == 2 and "w_qkv is int8 but input w_qkv_scale is missing" in out and not os.path.exists(f"{d}/y_err.npy")
        print(f"{'ok  ' if ok else 'FAIL'} int8 weights without w_qkv_scale rejected: exit {code}: {out.strip()}")
        failures += not ok
        passed += ok
    print(f"{passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
