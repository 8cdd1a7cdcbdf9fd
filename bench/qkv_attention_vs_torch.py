#!/usr/bin/python3
"""qkv_attention decode: torch eager composed of the same steps, against npukit.

Usage: /usr/bin/python3 bench/qkv_attention_vs_torch.py build/bench/qkv_attention_bench [--quick]

Shape: T = 1, D = 4096, Hq = 32, Hkv = 8, Dh = 128, half-style RoPE, theta 10000, the new
token at position S - 1 of a cache of S positions (every position live). The steps, in
torch as Hugging Face's Llama attention composes them: linear (x w_qkv^T), split, RoPE on q
and k, cache write (index assignment), GQA by expand + reshape of k and v (repeat_kv),
q k^T / sqrt(Dh) + causal mask, softmax in fp32, p v, linear (o w_o^T).

Debian's torch 1.13 has no fp16 matmul on CPU ("addmm_impl_cpu_" not implemented for
'Half'), so two torch compositions are timed:
  f32: every tensor fp32, against npukit with fp32 weights and cache (same dtypes);
  f16: fp16 weights, cache and x as storage, each matmul operand upcast with .float()
       (the only way torch 1.13 eager runs an fp16 model on CPU), against npukit fp16.
Weights and caches rotate over more than 256 MiB (bench/cold_buffers.h), like the bench.
Threads: HL_NUM_THREADS (default 2) for both. Prints one line per (dtype, S) with both
medians and torch/npukit, and exits 0: a bench, not a test. --quick: S = 512 only, two
runs, no rotation (the ctest smoke run).
"""
import math
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from gbench_runs import command_line, fmt, median_runs

COLD_BYTES = 256 << 20
D, HQ, HKV, DH, THETA = 4096, 32, 8, 128, 10000.0
SIZES = [512, 2048, 8192, 32768]
DTYPES = {"f16": torch.float16, "f32": torch.float32}


def rope_half(x, positions):
    # Hugging Face: inv_freq and angles in fp32; x [H, T, Dh], pairs (i, i + Dh/2).
    d = x.shape[-1]
    inv_freq = 1.0 / (THETA ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    freqs = positions[:, None].float() * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    rotated = torch.cat((-x[..., d // 2:], x[..., : d // 2]), dim=-1)
    return x * cos + rotated * sin


def layer(x, w_qkv, w_o, k_cache, v_cache, pos):
    """One decode step; fp16 storage is upcast to fp32 for every matmul (torch 1.13 CPU)."""
    up = (lambda t: t.float()) if x.dtype == torch.float16 else (lambda t: t)
    T = x.shape[0]
    qkv = F.linear(up(x), up(w_qkv))
    q, k, v = qkv.split([HQ * DH, HKV * DH, HKV * DH], dim=-1)
    q = q.view(T, HQ, DH).transpose(0, 1)
    k = k.view(T, HKV, DH).transpose(0, 1)
    v = v.view(T, HKV, DH).transpose(0, 1)
    positions = torch.arange(pos, pos + T)
    q, k = rope_half(q, positions), rope_half(k, positions)
    k_cache[:, pos:pos + T] = k.to(k_cache.dtype)
    v_cache[:, pos:pos + T] = v.to(v_cache.dtype)
    L, G = pos + T, HQ // HKV
    keys = up(k_cache[:, :L])[:, None].expand(HKV, G, L, DH).reshape(HQ, L, DH)
    values = up(v_cache[:, :L])[:, None].expand(HKV, G, L, DH).reshape(HQ, L, DH)
    scores = q @ keys.transpose(1, 2) / math.sqrt(DH)
    mask = torch.full((T, L), float("-inf")).triu(pos + 1)
    p = torch.softmax(scores + mask, dim=-1)  # fp32 in both compositions, as Hugging Face does
    o = p @ values
    y = F.linear(o.transpose(0, 1).reshape(T, HQ * DH), up(w_o))
    return y.to(x.dtype)


def pool(shape, dtype, count):
    n = math.prod(shape)
    flat = torch.empty(count * n, dtype=torch.float32).uniform_(-0.05, 0.05).to(dtype)
    return [flat[i * n:(i + 1) * n].view(shape) for i in range(count)]


def time_torch(S, dtype, quick):
    size = torch.finfo(dtype).bits // 8
    def count(n):
        return 2 if quick else max(2, -(-COLD_BYTES // (n * size)) + 1)
    rows = (HQ + 2 * HKV) * DH
    wq = pool((rows, D), dtype, count(rows * D))
    wo = pool((D, HQ * DH), dtype, count(D * HQ * DH))
    ks = pool((HKV, S, DH), dtype, count(HKV * S * DH))
    vs = pool((HKV, S, DH), dtype, count(HKV * S * DH))
    x = torch.empty(1, D).uniform_(-1, 1).to(dtype)
    layer(x, wq[0], wo[0], ks[0], vs[0], S - 1)
    rounds, i = [], 1
    for _ in range(1 if quick else 3):
        times, start = [], time.perf_counter()
        while len(times) < 2 or (not quick and (len(times) < 5 or time.perf_counter() - start < 1.0)):
            args = (wq[i % len(wq)], wo[i % len(wo)], ks[i % len(ks)], vs[i % len(vs)])
            i += 1
            t0 = time.perf_counter()
            layer(x, *args, S - 1)
            times.append(time.perf_counter() - t0)
        rounds.append(statistics.median(times))
    return statistics.median(rounds)


def time_npukit(bench, sizes, threads, quick):
    """{(dtype, S): (median seconds, counters)} from qkv_attention_bench's JSON."""
    alt = "|".join(str(s) for s in sizes)
    result = {}
    for name, seconds, b in median_runs(bench, f"^BM_qkv_attention_decode/(f16|f32)/S:({alt})/", 3, threads, quick):
        m = re.match(r"BM_qkv_attention_decode/(f16|f32)/S:(\d+)", name)
        result[(m[1], int(m[2]))] = (seconds, b)
    return result


def self_check():
    # GQA by expand must equal attending per query head over its own kv head.
    torch.manual_seed(0)
    rows = (HQ + 2 * HKV) * DH
    x = torch.randn(1, D, dtype=torch.float64)
    wq = torch.randn(rows, D, dtype=torch.float64) / 64
    wo = torch.randn(D, HQ * DH, dtype=torch.float64) / 64
    k = torch.randn(HKV, 9, DH, dtype=torch.float64)
    v = torch.randn(HKV, 9, DH, dtype=torch.float64)
    k2, v2 = k.clone(), v.clone()
    y = layer(x, wq, wo, k, v, 5)
    qkv = x @ wq.T
    q = rope_half(qkv[:, :HQ * DH].view(1, HQ, DH).transpose(0, 1), torch.tensor([5]))
    k2[:, 5] = rope_half(qkv[:, HQ * DH:(HQ + HKV) * DH].view(1, HKV, DH).transpose(0, 1), torch.tensor([5]))[:, 0]
    v2[:, 5] = qkv[:, (HQ + HKV) * DH:].view(HKV, DH)
    o = torch.stack([torch.softmax(q[h, 0] @ k2[h // 4, :6].T / math.sqrt(DH), -1) @ v2[h // 4, :6] for h in range(HQ)])
    if not torch.allclose(y, o.reshape(1, -1) @ wo.T, rtol=1e-9, atol=1e-9) or not torch.equal(k, k2):
        sys.exit("qkv_attention_vs_torch: the torch composition disagrees with a per-head loop")


def main():
    bench, quick, threads = command_line(__doc__)
    torch.set_num_threads(threads)
    sizes = SIZES[:1] if quick else SIZES
    self_check()
    npukit = time_npukit(bench, sizes, threads, quick)
    inputs = "warm inputs (--quick)" if quick else "cold weights and caches"
    print(f"qkv_attention decode, torch {torch.__version__} eager vs npukit, {threads} thread(s), {inputs}, medians")
    for dname, dtype in DTYPES.items():
        for S in sizes:
            t = time_torch(S, dtype, quick)
            n, counters = npukit[(dname, S)]
            print(f"{dname} S={S:<6} torch {fmt(t):>9}   npukit {fmt(n):>9} ({counters['GB/s']:.1f} GB/s, "
                  f"vs_read_paired {counters['vs_read_paired']:.2f})   torch/npukit {t / n:.1f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
