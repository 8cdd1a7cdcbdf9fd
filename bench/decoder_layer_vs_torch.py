#!/usr/bin/python3
"""Decode tokens/s of npukit.decoder (python/npukit/decoder.py) against torch eager, same run.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/decoder_layer_vs_torch.py [--layers N] [--steps S] [--quick]

Shapes: TinyLlama-1.1B's (hidden 2048, 32 query heads, 4 kv heads, head_dim 64, ffn 5632,
RoPE theta 10000 half style), random weights; one layer, then a stack of N layers (default
22, TinyLlama's depth) and its final norm. Each timed step decodes one token at positions
1 … S (default S = 64; position 0 warms up, untimed) from a random embedding.

- npukit: attention projections fp16 (qkv_attention_ makes a prepared op per pos: see the
  last table), MLP int8 per channel through Int8Weights, activations per token int8;
  activations, residual and KV cache fp32.
- torch eager, fp32: bench/decoder_reference.py, Hugging Face's Llama composition; the
  int8 MLP weights dequantized to fp32 at load and every matmul an fp32 F.linear (torch
  1.13 has no fp16 matmul on the CPU, and no int8 GEMM in eager mode short of a
  quantization backend).
- torch eager, int8 MLP: the same with the MLP's linears through torch's dynamic
  quantization (quantize_dynamic, per-channel int8 weights, per-tensor activations, the
  onednn/fbgemm quantized engine); attention fp32.
Each runs its steps in a block of its own, on the same tokens (run_steps says why not in
turns); medians over the steps. Threads: HL_NUM_THREADS (default 2) for npukit and
torch.set_num_threads for torch, the same number.

Outside kernels: a torch.profiler run of the same steps sums the time inside each
torch.ops.npukit call (the extension's kernel as the dispatcher records it: its prepared-op
lookup or create, output allocation and the npukit kernels) and inside torch's own ops
(none in the layer's step since int8_gemm takes per-row scales); the rest of the step is Python and torch.ops' argument
matching. The share is that rest over the profiled step time.

Last: qkv_attention_ per call at a new pos (a prepared op made; for int8 weights one that shares
the packed copies of an earlier one) against the same pos again (the cached prepared op), fp16 and int8 projections.

--quick: tiny shapes, 1 and 2 layers, 4 steps (the ctest smoke run). Prints tables and
exits 0: a bench, not a test.
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HL_NUM_THREADS", "2")
import torch  # noqa: E402

import npukit  # noqa: E402
from npukit import decoder  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decoder_reference import Reference  # noqa: E402

TINYLLAMA = decoder.Config(hidden=2048, heads=32, kv_heads=4, head_dim=64, ffn=5632)
TINY = decoder.Config(hidden=256, heads=4, kv_heads=2, head_dim=64, ffn=688)


def build(cfg, layers, max_seq):
    weights = [decoder.random_weights(cfg, seed=i) for i in range(layers)]
    final_norm = 1 + 0.1 * (torch.rand(cfg.hidden, generator=torch.Generator().manual_seed(99)) * 2 - 1)
    dec = decoder.Decoder(cfg, weights, final_norm, max_seq)
    ref = Reference(cfg, weights, final_norm, max_seq)
    ref8 = Reference(cfg, weights, final_norm, max_seq, mlp="torch_int8")
    return dec, ref, ref8


def run_steps(cfg, impls, steps):
    """Per step seconds of each of `impls` (name -> step(x, pos) -> y) at positions 1 … steps, each
    in a block of its own after an untimed step at position 0 (prepared ops, packing, first
    calls), on the same tokens; and each y's relative rms error against the first impl's
    (the last step's). Blocks, not one step of each in turn: torch's OpenMP workers and
    Halide's keep spinning a while after their work, and on a machine of 2 cores taking turns
    at each step measures mostly that contention."""
    gen = torch.Generator().manual_seed(5)
    xs = [torch.randn(1, cfg.hidden, generator=gen) for _ in range(steps + 1)]
    times, last = {}, {}
    with torch.no_grad():
        for name, step in impls.items():
            times[name] = []
            for pos, x in enumerate(xs):
                t0 = time.perf_counter()
                y = step(x.clone(), pos)
                t1 = time.perf_counter()
                if pos:
                    times[name].append(t1 - t0)
            last[name] = y
    ref = last["torch fp32"]
    err = {k: ((v - ref).norm() / ref.norm()).item() for k, v in last.items()}
    return times, err


def profile_share(cfg, dec, steps, first_pos):
    """(npukit ops, torch ops, outside) seconds per step from a profiled run of `steps` steps."""
    from torch.profiler import ProfilerActivity, profile
    gen = torch.Generator().manual_seed(6)
    xs = [torch.randn(1, cfg.hidden, generator=gen) for _ in range(steps)]
    dec.step(xs[0].clone(), first_pos - 1)  # the profiler's own first-call costs fall outside
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        for i, x in enumerate(xs):
            dec.step(x, first_pos + i)
        wall = time.perf_counter() - t0
    npu = other = 0.0
    for ev in prof.events():
        if ev.cpu_parent is not None:
            continue  # only top-level ops: their children are inside their time
        t = ev.cpu_time_total * 1e-6
        if ev.name.startswith("npukit::"):
            npu += t
        else:
            other += t
    return npu / steps, other / steps, (wall - npu - other) / steps, wall / steps


def attention_pos_cost(cfg, reps):
    """Per call µs of qkv_attention_ at a new pos and at the same pos again (fp16 and int8 weights)."""
    ops = decoder.required_ops()
    rows = []
    for dtype in (torch.float16, torch.int8):
        w = decoder.random_weights(cfg, seed=3, attn_weights=dtype)
        layer = decoder.DecoderLayer(cfg, w, reps + 1, ops)
        x = torch.randn(1, cfg.hidden)
        new, again = [], []
        for pos in range(reps):
            t0 = time.perf_counter()
            layer.attention(x, pos)
            t1 = time.perf_counter()
            layer.attention(x, pos)
            t2 = time.perf_counter()
            new.append(t1 - t0)
            again.append(t2 - t1)
        rows.append((str(dtype).replace("torch.", ""), statistics.median(new) * 1e6, statistics.median(again) * 1e6))
    return rows


def torch_anchor(cfg, reps):
    """GB/s of torch's fp32 GEMV on one [ffn, hidden] matrix (weight bytes over time) and of a copy
    of it (bytes read + written), matrices rotated over 8 copies so each call reads DRAM."""
    ws = [torch.randn(cfg.ffn, cfg.hidden) for _ in range(8)]
    x = torch.randn(1, cfg.hidden)
    lin, cp = [], []
    for i in range(reps):
        w = ws[i % len(ws)]
        t0 = time.perf_counter()
        torch.nn.functional.linear(x, w)
        t1 = time.perf_counter()
        w.clone()
        t2 = time.perf_counter()
        lin.append(t1 - t0)
        cp.append(t2 - t1)
    nbytes = ws[0].numel() * 4
    return nbytes / statistics.median(lin) / 1e9, 2 * nbytes / statistics.median(cp) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=22, help="depth of the stack (TinyLlama-1.1B: 22)")
    ap.add_argument("--steps", type=int, default=64, help="decode steps timed, positions 0 … steps-1")
    ap.add_argument("--quick", action="store_true", help="tiny shapes, 1 and 2 layers, 4 steps (ctest smoke)")
    args = ap.parse_args()
    threads = int(os.environ["HL_NUM_THREADS"])
    torch.set_num_threads(threads)
    cfg, stack, steps = (TINY, 2, 4) if args.quick else (TINYLLAMA, args.layers, args.steps)
    prof_steps = 4 if args.quick else 16
    print(npukit.machine_context())
    print(f"threads {threads} (HL_NUM_THREADS, torch.set_num_threads); torch {torch.__version__}, "
          f"quantized engine {torch.backends.quantized.engine}")
    print(f"shapes: hidden {cfg.hidden}, heads {cfg.heads}/{cfg.kv_heads} kv, head_dim {cfg.head_dim}, ffn {cfg.ffn}; "
          f"{steps} decode steps from pos 0, medians")
    print()
    print("| layers | npukit tok/s | torch fp32 tok/s | torch int8-MLP tok/s | npukit / torch fp32 | npukit / torch int8 "
          "| npukit ms/token: npukit ops, torch ops, outside | outside share | rel. rms error of y vs torch fp32: npukit, torch int8 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for layers in sorted({1, stack}):
        dec, ref, ref8 = build(cfg, layers, steps + 2 + prof_steps)
        impls = {"npukit": dec.step, "torch fp32": lambda x, p: ref.step(x, p)[0],
                 "torch int8": lambda x, p: ref8.step(x, p)[0]}
        times, err = run_steps(cfg, impls, steps)
        npu, other, outside, wall = profile_share(cfg, dec, prof_steps, steps + 2)
        med = {k: statistics.median(v) for k, v in times.items()}
        tps = {k: 1.0 / v for k, v in med.items()}
        print(f"| {layers} | {tps['npukit']:.4g} | {tps['torch fp32']:.3g} | {tps['torch int8']:.3g} "
              f"| {tps['npukit'] / tps['torch fp32']:.2f} | {tps['npukit'] / tps['torch int8']:.2f} "
              f"| {npu * 1e3:.2f}, {other * 1e3:.3f}, {outside * 1e3:.3f} (profiled {wall * 1e3:.2f}) "
              f"| {outside / wall:.1%} | {err['npukit']:.2e}, {err['torch int8']:.2e} |", flush=True)
        del dec, ref, ref8
    print()
    gbs = torch_anchor(cfg, 5 if args.quick else 33)
    print(f"torch's own speed on this machine now (medians): F.linear of one token over the fp32 gate matrix "
          f"[{cfg.ffn}, {cfg.hidden}] {gbs[0]:.1f} GB/s of weights, the same matrix copied (clone) {gbs[1]:.1f} GB/s read+write")
    print()
    print("qkv_attention_ per call, µs (medians): a new pos makes a prepared op (int8: from one at an earlier pos, sharing its packed w_qkv and w_o)")
    print("| projections | new pos | same pos again | cost of the new pos |")
    print("|---|---|---|---|")
    for dtype, new, again in attention_pos_cost(cfg, 8 if args.quick else 32):
        print(f"| {dtype} | {new:.0f} | {again:.0f} | {new - again:+.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
