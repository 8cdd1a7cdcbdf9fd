"""`import npukit` (python/npukit) over libnpukit.so's prepared-op C ABI: npukit.run and
npukit.Op on numpy arrays and torch tensors (by __dlpack__), outputs of the inputs' kind,
in/out tensors updated in place, errors as Python exceptions carrying npukit's message.

Usage: PYTHONPATH=build/python /usr/bin/python3 python_module_check.py
"""
import sys

import numpy as np

import npukit

from named_checks import report as report_checks

checks = []


def check(name, ok, detail=""):
    checks.append((name + (": " + detail if detail else ""), bool(ok)))


def rms_ref(x, w, eps):
    x = np.asarray(x, dtype=np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * np.asarray(w, dtype=np.float64)


def main():
    rng = np.random.default_rng(3)
    check("ops lists the registry", {"rms_norm", "rope", "int8_gemm", "per_token_quant"} <= set(npukit.ops()))
    check("cpu_model and cpu_tier name the machine", npukit.cpu_model() != ""
          and all(npukit.cpu_tier(op) in {"avx512", "avx512_vnni", "avx512_amx", "avx2", "sse41"} for op in npukit.ops()))
    d = npukit.describe("rms_norm")
    check("describe", [t.name for t in d.tensors] == ["x", "weight", "y"] and d.tensors[0].dims == ["rows", "hidden"]
          and d.params[0].name == "eps" and d.params[0].default == "1e-5")

    # numpy in, numpy out; float16 too.
    for dtype, tol in ((np.float32, 1e-5), (np.float16, 2e-3)):
        x, w = rng.standard_normal((3, 100)).astype(dtype), rng.uniform(0.5, 1.5, 100).astype(dtype)
        y = npukit.run("rms_norm", {"x": x, "weight": w}, {"eps": 1e-5})["y"]
        check(f"run rms_norm numpy {np.dtype(dtype).name}", isinstance(y, np.ndarray) and y.dtype == dtype
              and np.allclose(y, rms_ref(x, w, 1e-5), rtol=tol, atol=tol))
    norm = npukit.Op("rms_norm", eps=1e-3)
    x, w = rng.standard_normal((2, 64)).astype(np.float32), np.ones(64, np.float32)
    check("Op positional", np.allclose(norm(x, w), rms_ref(x, w, 1e-3), rtol=1e-5, atol=1e-6))
    check("Op by name", np.allclose(norm(weight=w, x=x), rms_ref(x, w, 1e-3), rtol=1e-5, atol=1e-6))

    # Two outputs, a dtype named by a parameter, a packed constant.
    a = rng.standard_normal((4, 64)).astype(np.float32)
    q, s = npukit.Op("per_token_quant")(a)
    check("per_token_quant numpy", q.dtype == np.int8 and s.dtype == np.float32 and q.shape == (4, 64)
          and np.array_equal(q, np.clip(np.rint(a / s[:, None]), -127, 127).astype(np.int8)))
    w8 = rng.integers(-127, 128, (24, 64), dtype=np.int8)
    gemm = npukit.Op("int8_gemm", out="float32", a_scale=0.25)
    gemm.set_constant("w", w8)
    w_scale = rng.uniform(0.5, 2, 24).astype(np.float32)
    y = gemm(q, w_scale)
    check("int8_gemm constant w, out=float32", y.dtype == np.float32 and y.shape == (4, 24)
          and np.allclose(y, (q.astype(np.int64) @ w8.astype(np.int64).T) * 0.25 * w_scale, rtol=1e-6))
    # like(): other parameters, the same packed w (the array it came from is not read again).
    half = gemm.like(a_scale=0.125)
    w8_kept = w8.copy()
    w8[:] = 0
    y2 = half(q, w_scale)
    check("Op.like shares the packed constant, takes the new parameter", y2.shape == (4, 24)
          and np.allclose(y2, (q.astype(np.int64) @ w8_kept.astype(np.int64).T) * 0.125 * w_scale, rtol=1e-6))

    # torch in, torch out.
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        xt, wt = torch.randn(3, 64), torch.ones(64)
        y = npukit.run("rms_norm", {"x": xt, "weight": wt})["y"]
        check("run rms_norm torch", isinstance(y, torch.Tensor) and np.allclose(y.numpy(), rms_ref(xt, wt, 1e-5), rtol=1e-5))
        # In place: qkv_attention's caches, given as torch tensors, are updated.
        kc, vc = torch.zeros(1, 8, 8), torch.zeros(1, 8, 8)
        yq = npukit.Op("qkv_attention", pos=2, heads=1)(torch.randn(1, 16), torch.randn(24, 16), torch.randn(16, 8), kc, vc)
        check("qkv_attention torch caches updated in place", yq.shape == (1, 16) and bool(kc[0, 2].abs().sum() > 0)
              and bool(vc[0, 2].abs().sum() > 0) and not bool(kc[0, 3:].abs().sum() > 0))

    # Errors: npukit's one-line message, as the right exception.
    def raises(name, f, exc, text):
        try:
            f()
        except exc as e:
            check(name, text in str(e) and "\n" not in str(e), str(e))
            return
        except Exception as e:  # noqa: BLE001
            check(name, False, f"{type(e).__name__}: {e}")
            return
        check(name, False, "no exception")
    raises("bad parameter", lambda: npukit.Op("rms_norm", eps=float("nan")), ValueError, "rms_norm: parameter eps=nan")
    raises("bad shape", lambda: norm(x, np.ones(65, np.float32)), ValueError, "rms_norm: ")
    raises("bad rank", lambda: norm(x[0], w), ValueError, "rms_norm: tensor x")
    raises("non-contiguous", lambda: norm(np.ones((64, 2), np.float32).T, w), ValueError, "rms_norm: tensor x")
    raises("unknown op", lambda: npukit.Op("no_such_op"), ValueError, "no_such_op")
    raises("unknown tensor", lambda: npukit.run("rms_norm", {"x": x, "wieght": w}), ValueError, "no tensor named wieght")
    raises("constant passed again", lambda: gemm.run({"a": q, "w": w8, "w_scale": w_scale}), ValueError, "constant")

    return report_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
