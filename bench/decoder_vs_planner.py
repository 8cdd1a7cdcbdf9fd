#!/usr/bin/python3
"""The decode planner's CPU prediction against the decoder layer it predicts, same run.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/decoder_vs_planner.py --npukit build/tools/npukit
       [--layers N] [--steps S] [--quick]

Like for like: npukit.decoder (python/npukit/decoder.py) with every projection int8 (per
channel, per-token int8 activations), TinyLlama-1.1B's shapes, N layers (default 4: 178 MB
of weights, past any L3 these machines have) timed over S decode steps at positions 1 … S
(default 64), medians; against `npukit decode --weights int8 --context C` (C = S, its KV
read at every step) on the same shapes, given as a config.json, per layer (the planner's
rows that run once per layer, summed; the final norm and LM head left out on both sides).
The planner runs on the shipped `cpu` preset (simulator/arch/presets/host/cpu.yaml) twice:
as shipped, and with its DRAM bandwidth replaced by this machine's copy bandwidth measured
in this run (a torch copy of 256 MiB, bytes read + written, median of 9 before and 9 after
the layer's steps), the figure the
preset's own comment says it holds. The activations and KV cache are fp32 in the layer and
fp16 in the planner: at context 64 under 0.1% of the bytes either way.

Prints one table row per planner run: the measured and predicted ms per layer, the error,
and the GB/s of the layer's weights each implies. --quick: tiny shapes, 1 layer, 3 steps
(the ctest smoke run). A bench, not a test: it prints and exits 0.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HL_NUM_THREADS", "2")
import torch  # noqa: E402

from npukit import decoder  # noqa: E402

TINYLLAMA = decoder.Config(hidden=2048, heads=32, kv_heads=4, head_dim=64, ffn=5632)
TINY = decoder.Config(hidden=256, heads=4, kv_heads=2, head_dim=64, ffn=688)
CPU_PRESET = Path(__file__).resolve().parent.parent / "simulator/arch/presets/host/cpu.yaml"


def cpu_name():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def copy_seconds(nbytes, reps):
    """Seconds of `reps` copies of `nbytes` (torch, into memory already touched)."""
    src = torch.empty(nbytes // 4, dtype=torch.float32).fill_(1.0)
    dst = torch.zeros_like(src)
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        dst.copy_(src)
        t.append(time.perf_counter() - t0)
    return t


def measured_layer_ms(cfg, layers, steps):
    weights = [decoder.random_weights(cfg, seed=i, attn_weights=torch.int8) for i in range(layers)]
    final_norm = torch.ones(cfg.hidden)
    dec = decoder.Decoder(cfg, weights, final_norm, steps + 1)
    gen = torch.Generator().manual_seed(5)
    t = []
    with torch.no_grad():
        for pos in range(steps + 1):
            x = torch.randn(1, cfg.hidden, generator=gen)
            t0 = time.perf_counter()
            dec.step(x, pos)
            if pos:  # position 0 makes the prepared ops and packs the weights
                t.append(time.perf_counter() - t0)
    weight_bytes = sum(getattr(weights[0], name).numel() for name in ("w_qkv", "w_o", "w_gate_up", "w_down"))  # int8: 1 B each
    return statistics.median(t) * 1e3 / layers, weight_bytes


def planner_layer_ms(npukit, cfg, context, arch):
    config = {"hidden_size": cfg.hidden, "intermediate_size": cfg.ffn, "num_attention_heads": cfg.heads,
              "num_key_value_heads": cfg.kv_heads, "head_dim": cfg.head_dim, "num_hidden_layers": 1,
              "max_position_embeddings": max(context, 2048), "vocab_size": 32000, "tie_word_embeddings": False}
    with tempfile.NamedTemporaryFile("w", suffix=".config.json", delete=False) as f:
        json.dump(config, f)
    try:
        out = subprocess.run([npukit, "decode", "--model", f.name, "--arch", arch, "--weights", "int8",
                              "--context", str(context), "--prompt", "0", "--format", "json"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    plan = json.loads(out)
    skip = {"embedding lookup", "final norm", "lm head"}
    return sum(op["time_us"] for op in plan["ops"] if op["label"] not in skip) / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npukit", required=True, help="the npukit CLI (build/tools/npukit)")
    ap.add_argument("--layers", type=int, default=4, help="layers in the measured stack")
    ap.add_argument("--steps", type=int, default=64, help="decode steps timed; also the planner's --context")
    ap.add_argument("--quick", action="store_true", help="tiny shapes, 1 layer, 3 steps (ctest smoke)")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ["HL_NUM_THREADS"]))
    cfg, layers, steps = (TINY, 1, 3) if args.quick else (TINYLLAMA, args.layers, args.steps)
    # The copy before and after the layer: this machine's bandwidth drifts by a third within
    # a minute (a shared VM), and the median of both blocks is the layer's contemporary.
    nbytes, reps = (16 if args.quick else 256) << 20, 3 if args.quick else 9
    t = copy_seconds(nbytes, reps)
    ms, wbytes = measured_layer_ms(cfg, layers, steps)
    t += copy_seconds(nbytes, reps)
    bw = 2 * nbytes / statistics.median(t) / 1e9
    preset = CPU_PRESET.read_text()
    shipped = float(re.search(r"bandwidth_gbps:\s*([0-9.]+)", preset).group(1))
    print(f"CPU: {cpu_name()}; HL_NUM_THREADS {os.environ['HL_NUM_THREADS']}; copy bandwidth now {bw:.1f} GB/s "
          f"(read + written); layer: hidden {cfg.hidden}, heads {cfg.heads}/{cfg.kv_heads} kv, head_dim {cfg.head_dim}, "
          f"ffn {cfg.ffn}, int8 weights {wbytes / 1e6:.1f} MB; {layers} layers, {steps} steps, medians")
    print()
    print("| planner arch | DRAM GB/s | measured ms/layer | planner ms/layer | planner error | measured weights GB/s |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        here = Path(d) / "cpu-here.yaml"
        here.write_text(re.sub(r"bandwidth_gbps:\s*[0-9.]+", f"bandwidth_gbps: {bw:.2f}", preset, count=1)
                        .replace("name: cpu", "name: cpu-here", 1))
        for label, arch, gbps in (("cpu (as shipped)", "cpu", shipped), ("cpu, this run's copy bandwidth", str(here), bw)):
            p = planner_layer_ms(args.npukit, cfg, steps, arch)
            print(f"| {label} | {gbps:.1f} | {ms:.3f} | {p:.3f} | {(p - ms) / ms:+.1%} | {wbytes / ms / 1e6:.1f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
