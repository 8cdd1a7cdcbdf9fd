"""torch.ops.npukit (libnpukit_torch.so) as a PyTorch user meets it: each op against a torch
reference in float64, Meta tensors (shapes, no run), torch.jit.script, errors as Python
exceptions with npukit's message, qkv_attention_ updating its caches in place.

Usage: PYTHONPATH=build/python /usr/bin/python3 torch_ops_check.py PATH/TO/libnpukit_torch.so
"""
import math
import sys

import numpy as np
import torch

import npukit

from named_checks import report as report_checks

checks = []


def check(name, ok, detail=""):
    checks.append((name + (": " + detail if detail else ""), bool(ok)))


def close(name, got, want, tol):
    err = (got.double() - want).abs().max().item() if got.numel() else 0.0
    check(name, got.shape == want.shape and err <= tol * (1 + want.abs().max().item()), f"max abs err {err:.3g}")


def raises(name, f, exc, text):
    """f() must raise `exc` whose message contains `text` (npukit's message) on one line."""
    try:
        f()
    except exc as e:
        msg = str(e)
        check(name, text in msg and "\n" not in msg.strip(), msg.strip())
        return msg
    except Exception as e:  # noqa: BLE001 - the wrong exception is the failure reported
        check(name, False, f"{type(e).__name__}: {e}")
        return None
    check(name, False, "no exception")
    return None


def rope_ref(x, positions, theta, style, rotary_dim):
    x = x.double()
    half = rotary_dim // 2
    inv = theta ** (-torch.arange(0, rotary_dim, 2, dtype=torch.float64) / rotary_dim)
    ang = positions.double()[:, None] * inv[None, :]
    cos, sin = ang.cos()[:, None, :], ang.sin()[:, None, :]
    y = x.clone()
    if style == "half":
        a, b = x[..., :half], x[..., half:rotary_dim]
        y[..., :half], y[..., half:rotary_dim] = a * cos - b * sin, a * sin + b * cos
    else:
        a, b = x[..., 0:rotary_dim:2], x[..., 1:rotary_dim:2]
        y[..., 0:rotary_dim:2], y[..., 1:rotary_dim:2] = a * cos - b * sin, a * sin + b * cos
    return y


def attention_ref(q, k, v, positions, mask):
    T, hq, dh = q.shape
    hkv = k.shape[0]
    o = torch.zeros(T, hq, dh, dtype=torch.float64)
    for t in range(T):
        live = torch.arange(int(positions[t]) + 1)
        for h in range(hq):
            g = h // (hq // hkv)
            s = k[g, live].double() @ q[t, h].double() / math.sqrt(dh)
            if mask is not None:
                s = s + mask[t, live].double()
            o[t, h] = torch.softmax(s, 0) @ v[g, live].double()
    return o


def quantize_ref(a):
    a = a.float()
    s = a.abs().amax(1) / 127
    q = torch.where(s[:, None] > 0, torch.clamp(torch.round(a / torch.where(s > 0, s, 1)[:, None]), -127, 127), 0)
    return q.to(torch.int8), s


def main():
    torch.ops.load_library(sys.argv[1])
    ops = torch.ops.npukit
    g = torch.Generator().manual_seed(7)
    randn = lambda *s, dtype=torch.float32: torch.randn(*s, generator=g).to(dtype)  # noqa: E731

    # rms_norm, both dtypes; eps by position and by name.
    for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 2e-3)):
        x, w = randn(3, 4096, dtype=dtype), (torch.rand(4096, generator=g) + 0.5).to(dtype)
        want = x.double() / (x.double().pow(2).mean(-1, keepdim=True) + 1e-5).sqrt() * w.double()
        y = ops.rms_norm(x, w, 1e-5)
        close(f"rms_norm {dtype}", y, want, tol)
        check(f"rms_norm {dtype} dtype", y.dtype == dtype)
    close("rms_norm eps by name", ops.rms_norm(x.float(), w.float(), eps=1e-2),
          x.double() / (x.double().pow(2).mean(-1, keepdim=True) + 1e-2).sqrt() * w.double(), 2e-3)

    # rope: both styles, whole and partial rotary_dim.
    x, pos = randn(5, 4, 64), torch.tensor([0, 1, 7, 100, 4095], dtype=torch.int32)
    for style, rd in (("half", 0), ("interleaved", 0), ("half", 32)):
        y = ops.rope(x, pos, 10000.0, style, rd)
        close(f"rope {style} rotary_dim={rd}", y, rope_ref(x, pos, 10000.0, style, rd or 64), 1e-5)

    # per_token_quant, then int8_gemm over packed weights: the decoder's int8 linear layer.
    a = randn(4, 256)
    q, s = ops.per_token_quant(a)
    qr, sr = quantize_ref(a)
    check("per_token_quant q", q.dtype == torch.int8 and torch.equal(q, qr))
    close("per_token_quant scale", s, sr.double(), 1e-7)
    w8 = torch.randint(-127, 128, (96, 256), dtype=torch.int8, generator=g)
    packed = torch.classes.npukit.Int8Weights(w8)
    acc = ops.int8_gemm(q, packed)
    want = q.long() @ w8.long().T
    check("int8_gemm packed int32 exact", acc.dtype == torch.int32 and torch.equal(acc.long(), want))
    check("int8_gemm plain w int32 exact", torch.equal(ops.int8_gemm(q, w8).long(), want))
    w_scale, bias = torch.rand(96, generator=g) / 100, randn(96)
    y = ops.int8_gemm(q, packed, w_scale, bias, a_scale=0.5, out="float32")
    close("int8_gemm packed float32 with w_scale, bias", y, want.double() * 0.5 * w_scale.double() + bias.double(), 1e-6)
    check("int8_gemm packed: one prepared op per parameter set", packed.prepared_ops() == 2)
    check("int8_gemm packed again: the same prepared op",
          torch.equal(ops.int8_gemm(q, packed).long(), want) and packed.prepared_ops() == 2)
    # New parameters on the same weights: a new prepared op that shares the packed copy
    # (npukit_op_create_like), so the weights' storage is not read again.
    kept = w8.clone()
    w8.zero_()
    y3 = ops.int8_gemm(q, packed, w_scale, a_scale=0.25, out="float32")
    w8.copy_(kept)
    close("int8_gemm packed, new parameters: the packed copy reused", y3, want.double() * 0.25 * w_scale.double(), 1e-6)
    check("int8_gemm packed, new parameters: one more prepared op", packed.prepared_ops() == 3)

    # out= overloads: the caller's outputs written and returned, nothing allocated.
    x, w = randn(3, 128), torch.rand(128, generator=g) + 0.5
    y = torch.full((3, 128), float("nan"))
    r = ops.rms_norm(x, w, 1e-5, y=y)
    check("rms_norm out=y", r.data_ptr() == y.data_ptr() and torch.equal(y, ops.rms_norm(x, w, 1e-5)))
    qo, so = torch.empty(4, 256, dtype=torch.int8), torch.empty(4)
    r = ops.per_token_quant(a, q=qo, scale=so)
    check("per_token_quant out=(q, scale)", r[0].data_ptr() == qo.data_ptr() and torch.equal(qo, qr) and torch.equal(so, s))
    yo = torch.empty(4, 96, dtype=torch.int32)
    check("int8_gemm packed out=y", ops.int8_gemm(q, packed, y=yo).data_ptr() == yo.data_ptr() and torch.equal(yo.long(), want))
    raises("out= of the wrong shape", lambda: ops.rms_norm(x, w, y=torch.empty(2, 128)), ValueError, "rms_norm: tensor y")
    raises("out= of the wrong dtype", lambda: ops.rms_norm(x, w, y=torch.empty(3, 128, dtype=torch.half)), ValueError,
           "rms_norm: tensor y")

    # attention: grouped-query, with and without a mask.
    T, hq, hkv, S, dh = 3, 8, 2, 16, 32
    qa, k, v = randn(T, hq, dh), randn(hkv, S, dh), randn(hkv, S, dh)
    positions = torch.tensor([5, 6, 7], dtype=torch.int32)
    mask = torch.zeros(T, S)
    mask[:, 1:3] = -math.inf
    close("attention", ops.attention(qa, k, v, positions), attention_ref(qa, k, v, positions, None), 1e-5)
    close("attention mask", ops.attention(qa, k, v, positions, mask), attention_ref(qa, k, v, positions, mask), 1e-5)

    # qkv_attention_: y returned, the caches written at pos ... pos+T-1 in place.
    D, T, pos = 64, 2, 5
    xq = randn(T, D)
    w_qkv, w_o = randn((hq + 2 * hkv) * dh, D) / 8, randn(D, hq * dh) / 16
    kc, vc = randn(hkv, S, dh), randn(hkv, S, dh)
    k0, v0, kp, vp = kc.clone(), vc.clone(), kc.data_ptr(), vc.data_ptr()
    y = ops.qkv_attention_(xq, w_qkv, w_o, kc, vc, pos=pos, heads=hq, kv_heads=hkv)
    qkv = xq.double() @ w_qkv.double().T
    pq = torch.arange(pos, pos + T, dtype=torch.int32)
    qr = rope_ref(qkv[:, :hq * dh].reshape(T, hq, dh), pq, 10000.0, "half", dh)
    kr = rope_ref(qkv[:, hq * dh:(hq + hkv) * dh].reshape(T, hkv, dh), pq, 10000.0, "half", dh)
    vr = qkv[:, (hq + hkv) * dh:].reshape(T, hkv, dh)
    kw, vw = k0.double(), v0.double()
    kw[:, pos:pos + T], vw[:, pos:pos + T] = kr.transpose(0, 1), vr.transpose(0, 1)
    o = attention_ref(qr, kw, vw, pq, None).reshape(T, hq * dh)
    close("qkv_attention_ y", y, o @ w_o.double().T, 1e-4)
    close("qkv_attention_ k_cache updated in place", kc, kw, 1e-4)
    close("qkv_attention_ v_cache updated in place", vc, vw, 1e-4)
    check("qkv_attention_ caches kept their storage", kc.data_ptr() == kp and vc.data_ptr() == vp)
    check("qkv_attention_ schema marks the caches mutated",
          "Tensor(a!) k_cache" in str(ops.qkv_attention_.default._schema))

    # Meta tensors: shapes and dtypes, nothing run (no data to read).
    meta = lambda *s, dtype=torch.float32: torch.empty(*s, dtype=dtype, device="meta")  # noqa: E731
    y = ops.rms_norm(meta(7, 4096), meta(4096))
    check("meta rms_norm", y.is_meta and tuple(y.shape) == (7, 4096) and y.dtype == torch.float32)
    yq, ys = ops.per_token_quant(meta(3, 256, dtype=torch.float16))
    check("meta per_token_quant", yq.is_meta and tuple(yq.shape) == (3, 256) and yq.dtype == torch.int8
          and tuple(ys.shape) == (3,) and ys.dtype == torch.float32)
    y = ops.int8_gemm(meta(5, 256, dtype=torch.int8), packed, out="float16")
    check("meta int8_gemm packed, out=float16", y.is_meta and tuple(y.shape) == (5, 96) and y.dtype == torch.float16)
    y = ops.attention(meta(T, hq, dh), meta(hkv, S, dh), meta(hkv, S, dh), meta(T, dtype=torch.int32))
    check("meta attention", y.is_meta and tuple(y.shape) == (T, hq, dh))
    raises("meta rank error", lambda: ops.rms_norm(meta(4096), meta(4096)), ValueError,
           "rms_norm: tensor x: shape [4096] has rank 1; expected rank 2 (rows, hidden)")

    # Every op of the registry, from its description alone: a torch op whose arguments are
    # the description's, and Meta outputs sized by the named dimensions (a new op is covered
    # here without a line of its own).
    for name in npukit.ops():
        d = npukit.describe(name)
        in_place = any(t.role == npukit.INOUT for t in d.tensors)
        op = getattr(ops, name + "_" if in_place else name, None)
        if op is None:
            check(f"{name}: torch.ops.npukit has it", False)
            continue
        schema = op.default._schema
        want_args = [t.name for t in d.call_order()] + [p.name for p in d.params]
        check(f"{name}: schema arguments are the description's", [a.name for a in schema.arguments] == want_args,
              str(schema))
        size = {dim: 2 + i for i, dim in enumerate(sorted({x for t in d.tensors for x in t.dims}))}
        args = [torch.empty([size[x] for x in t.dims], dtype=getattr(torch, t.dtypes[0]), device="meta")
                for t in d.call_order() if not t.optional]
        outs = op(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        want = [[size[x] for x in t.dims] for t in d.tensors if t.role == npukit.OUTPUT]
        check(f"{name}: Meta outputs sized by the named dimensions",
              all(o.is_meta for o in outs) and [list(o.shape) for o in outs] == want)

    # torch.jit.script of a decoder fragment: norm, quantize, int8 GEMM over packed weights.
    @torch.jit.script
    def fragment(x: torch.Tensor, w: torch.Tensor, packed: torch.classes.npukit.Int8Weights):
        h = torch.ops.npukit.rms_norm(x, w, 1e-5)
        qh, sh = torch.ops.npukit.per_token_quant(h)
        return torch.ops.npukit.int8_gemm(qh, packed).float() * sh[:, None]
    xs, ws = randn(2, 256), torch.ones(256)
    hn = ops.rms_norm(xs, ws)
    qh, sh = ops.per_token_quant(hn)
    close("torch.jit.script fragment", fragment(xs, ws, packed), (qh.long() @ w8.long().T).double() * sh.double()[:, None], 1e-6)
    check("torch.jit.script graph calls npukit ops", "npukit::int8_gemm" in str(fragment.graph))

    # torch.jit.trace records the ops; the trace reruns them on new inputs.
    def norm_rope(x, positions):
        return ops.rope(ops.rms_norm(x, torch.ones(x.shape[1]), 1e-5).view(x.shape[0], -1, 64), positions)
    tp = torch.tensor([0, 9], dtype=torch.int32)
    traced = torch.jit.trace(norm_rope, (randn(2, 192), tp))
    x2, p2 = randn(4, 192), torch.tensor([3, 4, 5, 6], dtype=torch.int32)
    check("torch.jit.trace graph calls npukit ops", "npukit::rope" in str(traced.graph))
    want = rope_ref(ops.rms_norm(x2, torch.ones(192)).view(4, 3, 64), p2, 10000.0, "half", 64)
    close("torch.jit.trace reruns on new shapes", traced(x2, p2), want, 1e-5)

    # Bad input: a Python exception carrying npukit's one-line message (the C ABI's, exactly).
    x, w = randn(2, 64), randn(64)
    raises("bad parameter", lambda: ops.rms_norm(x, w, float("nan")), ValueError, "rms_norm: parameter eps=nan")
    msg = raises("bad shape", lambda: ops.rms_norm(x, randn(65)), ValueError, "weight")
    try:
        npukit.run("rms_norm", {"x": x.numpy(), "weight": randn(65).numpy()})
    except ValueError as e:
        check("bad shape: the same message as the C ABI", msg == str(e), str(e))
    raises("non-contiguous", lambda: ops.rms_norm(randn(64, 2).T, w), ValueError, "rms_norm: tensor x")
    raises("unknown dtype", lambda: ops.rms_norm(x.to(torch.bfloat16), w), ValueError,
           "rms_norm: tensor x is BFloat16: it takes Float, Half")
    raises("rope position range", lambda: ops.rope(randn(1, 1, 8), torch.tensor([-1], dtype=torch.int32)),
           ValueError, "positions[0] = -1")
    raises("packed weights of the wrong dtype", lambda: ops.int8_gemm(q, torch.classes.npukit.Int8Weights(w8.float())),
           ValueError, "int8_gemm: tensor w")
    k1 = kc.clone()
    raises("qkv_attention_ pos past the cache", lambda: ops.qkv_attention_(xq, w_qkv, w_o, kc, vc, pos=S - 1),
           ValueError, "S_max = 16")
    check("qkv_attention_ refused: caches untouched", torch.equal(kc, k1))

    return report_checks(checks)


if __name__ == "__main__":
    np.seterr(all="raise")
    sys.exit(main())
