#!/usr/bin/python3
"""RoPE: torch eager (as Hugging Face composes it) against npukit, on the same shapes.

Usage: /usr/bin/python3 bench/rope_vs_torch.py build/bench/rope_bench [--quick]

Needs Debian's python3-torch (1.13), which only /usr/bin/python3 imports. Threads come
from HL_NUM_THREADS (default 2): torch.set_num_threads for torch, and the same variable
for the rope_bench run that times npukit. Prints one line per case (torch median, npukit
median, torch/npukit, and the share of torch's CPU time spent in the kernel: page faults
on its fresh intermediates) and exits 0: it is a bench, not a test. --quick times only
the decode shape, two runs each, for the ctest smoke run.
"""
import re
import resource
import statistics
import sys
import time

import torch

from gbench_runs import command_line, fmt, median_runs

COLD_BYTES = 256 << 20  # bench/cold_buffers.h: 8x the L3
SHAPES = [(1, 32, 128), (128, 32, 128), (4096, 32, 128)]
DTYPES = {"f32": torch.float32, "f16": torch.float16}
STYLES = ["half", "interleaved"]
THETA = 10000.0


def angles(positions, rotary_dim, dtype):
    # As Hugging Face's LlamaRotaryEmbedding: inv_freq and the angles in float32, then
    # cos and sin cast to the activations' dtype.
    inv_freq = 1.0 / (THETA ** (torch.arange(0, rotary_dim, 2, dtype=torch.float32) / rotary_dim))
    freqs = positions[:, None].float() * inv_freq[None, :]  # [tokens, rotary_dim / 2]
    return freqs.cos().to(dtype), freqs.sin().to(dtype)


def rope_half(x, positions):
    # Hugging Face / GPT-NeoX: pairs (i, i + d/2), x * cos + rotate_half(x) * sin.
    d = x.shape[-1]
    cos, sin = angles(positions, d, x.dtype)
    cos = torch.cat((cos, cos), dim=-1)[:, None, :]
    sin = torch.cat((sin, sin), dim=-1)[:, None, :]
    rotated = torch.cat((-x[..., d // 2:], x[..., : d // 2]), dim=-1)
    return x * cos + rotated * sin


def rope_interleaved(x, positions):
    # GPT-J / Meta Llama: pairs (2i, 2i + 1).
    cos, sin = angles(positions, x.shape[-1], x.dtype)
    cos, sin = cos[:, None, :], sin[:, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


ROPE = {"half": rope_half, "interleaved": rope_interleaved}


def positions_for(tokens):
    # The same positions as rope_bench: a decode step at 4095, a chunk from 1000.
    if tokens == 1:
        return torch.tensor([4095], dtype=torch.int32)
    return torch.arange(1000, 1000 + tokens, dtype=torch.int32)


def self_check():
    # The two styles are one rotation under a permutation of the dims: a composition
    # that got either wrong would disagree here.
    x = torch.randn(5, 3, 16, dtype=torch.float64)
    p = positions_for(5)
    perm = torch.cat((torch.arange(0, 16, 2), torch.arange(1, 16, 2)))
    via_half = torch.empty_like(x)
    via_half[..., perm] = rope_half(x[..., perm], p)
    if not torch.allclose(rope_interleaved(x, p), via_half, rtol=1e-12, atol=1e-12):
        sys.exit("rope_vs_torch: the half and interleaved compositions disagree")


def time_torch(shape, dtype, style, quick):
    """(median seconds of one call, share of CPU time spent in the kernel), inputs rotated
    over more than COLD_BYTES. Medians of runs, then the median of 5 rounds of them, as
    rope_bench's 5 repetitions: one slow stretch of a shared machine moves one round."""
    numel = shape[0] * shape[1] * shape[2]
    nbytes = numel * torch.finfo(dtype).bits // 8
    count = 2 if quick else max(2, -(-COLD_BYTES // nbytes) + 1)
    pool = torch.empty(count * numel, dtype=torch.float32).uniform_(-1, 1).to(dtype)
    xs = [pool[i * numel:(i + 1) * numel].view(shape) for i in range(count)]
    positions = positions_for(shape[0])
    fn = ROPE[style]
    for i in range(min(count, 3)):
        fn(xs[i], positions)
    # Eager torch allocates every intermediate afresh; where glibc hands large blocks back
    # to the kernel, the page faults show up as system time.
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    rounds, i = [], 0
    for _ in range(1 if quick else 5):
        times, start = [], time.perf_counter()
        while len(times) < 2 or (not quick and (len(times) < 11 or time.perf_counter() - start < 0.2)):
            x = xs[i % count]
            i += 1
            t0 = time.perf_counter()
            fn(x, positions)
            times.append(time.perf_counter() - t0)
            if len(times) >= 2000:
                break
        rounds.append(statistics.median(times))
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    system = usage1.ru_stime - usage0.ru_stime
    user = usage1.ru_utime - usage0.ru_utime
    return statistics.median(rounds), system / max(system + user, 1e-9)


def time_npukit(bench, shapes, threads, quick):
    """{(dtype, style, tokens): (median seconds, counters)} from rope_bench's JSON."""
    tokens = "|".join(str(s[0]) for s in shapes)
    result = {}
    for name, seconds, b in median_runs(bench, f"^BM_rope/.*/tokens:({tokens})/heads:32/head_dim:128/rotary_dim:0/",
                                        5, threads, quick):
        m = re.match(r"BM_rope/(f32|f16)_(half|interleaved)/tokens:(\d+)/", name)
        result[(m[1], m[2], int(m[3]))] = (seconds, b)
    return result


def main():
    bench, quick, threads = command_line(__doc__)
    torch.set_num_threads(threads)
    shapes = SHAPES[:1] if quick else SHAPES
    self_check()
    npukit = time_npukit(bench, shapes, threads, quick)
    inputs = "warm inputs (--quick)" if quick else "cold inputs"
    print(f"RoPE, torch {torch.__version__} eager vs npukit, {threads} thread(s), {inputs}, medians")
    for shape in shapes:
        for dname, dtype in DTYPES.items():
            for style in STYLES:
                t, system = time_torch(shape, dtype, style, quick)
                n, counters = npukit[(dname, style, shape[0])]
                print(f"{dname} {style:<11} {list(shape)!s:<16} torch {fmt(t):>9}   npukit {fmt(n):>9}"
                      f" ({counters['GB/s']:.1f} GB/s, vs_copy {counters['vs_copy']:.2f})"
                      f"   torch/npukit {t / n:.1f}x   (torch system time {100 * system:.0f}%)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
