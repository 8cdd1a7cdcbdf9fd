"""npukit.decoder (python/npukit/decoder.py) against its pure-torch reference
(bench/decoder_reference.py), at every one of 64 decode steps of one layer, 32 of a
two-layer stack (the residual adds fused into the next layer's norm), and 8 of a layer with
int8 attention projections (one prepared op per pos, all on the first one's packed copies).

Usage: PYTHONPATH=build/python /usr/bin/python3 decoder_check.py

Two references, two tolerances, per step, on the final norm y and on the residual stream
(the layer stack's output), as relative errors ‖got − ref‖₂ / ‖ref‖₂ (rms) and
max|got − ref| / max|ref| (max):
- `emulated`: the reference quantizes each MLP activation per token as npukit does and
  sums q · w exactly, so the two differ only by fp32 rounding (RMSNorm, attention, SiLU's
  fast_exp at 2⁻¹⁸): measured at most 7e-7 (rms and max). Where that rounding moves an
  activation across a rounding tie of a/s, one element's q differs by one level and the
  GEMM's outputs move by s · w_scale[n] · w[n, c] (seen once at 1.6e-3 of the max, rms
  below 1e-4, in a two-layer run at ffn 512 during development). Tolerance rms 1e-4, max 5e-3 (about
  three such flips in one row).
- `fp32`: the plain fp32 model torch eager runs (no activation quantization). The
  difference is the int8 quantization error of the MLP's two activations: per element
  uniform in ±s/2 with s = max|a| / 127, so each projection is off by about
  (max|a| / rms(a)) / (127 · √12) of its rms: 0.8 % for the normed input (max/rms ≈ 3.5),
  up to about 2.5 % for SwiGLU's heavy-tailed product (max/rms up to ≈ 10), carried into
  the residual and renormalized by the final norm. Measured at most 2.8 % rms, 4.7 % max
  (two layers); tolerance rms 5e-2, max 1e-1.
The KV caches of the first layer depend on no quantized value (its input is the
embedding's norm; fp16 weights read as fp32): within 1e-5 of the reference's.
Each tolerance is shown to fail on a wrong reference: one up channel's scale 2 % off
(emulated), gate and up swapped (fp32).
"""
import sys
from pathlib import Path

import torch

import npukit
from npukit import decoder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from decoder_reference import Reference  # noqa: E402
from named_checks import report as report_checks  # noqa: E402

TOL = {"emulated": (1e-4, 5e-3), "fp32": (5e-2, 1e-1)}
CFG = decoder.Config(hidden=256, heads=4, kv_heads=2, head_dim=64, ffn=688)
MAX_SEQ = 64

checks = []


def check(name, ok, detail=""):
    checks.append((name + (": " + detail if detail else ""), bool(ok)))


def rel(got, want):
    d = (got.double() - want.double())
    return (d.norm() / want.double().norm()).item(), (d.abs().max() / want.double().abs().max()).item()


def run(layers, steps, seed, attn_weights=torch.float16):
    """The decoder and both references over `steps` tokens; per reference the worst (rms, max)
    of y and the residual over all steps, and the step where each bound was first exceeded."""
    weights = [decoder.random_weights(CFG, seed=seed + i, attn_weights=attn_weights) for i in range(layers)]
    final_norm = 1 + 0.1 * (torch.rand(CFG.hidden, generator=torch.Generator().manual_seed(seed + 99)) * 2 - 1)
    dec = decoder.Decoder(CFG, weights, final_norm, MAX_SEQ)
    refs = {"emulated": Reference(CFG, weights, final_norm, MAX_SEQ, mlp="emulated"),
            "fp32": Reference(CFG, weights, final_norm, MAX_SEQ)}
    worst = {k: [0.0, 0.0, None] for k in refs}
    gen = torch.Generator().manual_seed(seed + 1000)
    outs = []
    for pos in range(steps):
        x = torch.randn(1, CFG.hidden, generator=gen)
        residual = x.clone()
        y = dec.step(residual, pos)
        outs.append((x, y, residual))
        for name, ref in refs.items():
            y_ref, r_ref = ref.step(x, pos)
            for got, want in ((y, y_ref), (residual, r_ref)):
                e_rms, e_max = rel(got, want)
                w = worst[name]
                if (e_rms > TOL[name][0] or e_max > TOL[name][1]) and w[2] is None:
                    w[2] = pos
                w[0], w[1] = max(w[0], e_rms), max(w[1], e_max)
    return dec, refs, worst, outs, weights, final_norm


def report_run(label, dec, refs, worst, steps):
    for name, (e_rms, e_max, first_bad) in worst.items():
        tol = TOL[name]
        check(f"{label}: all {steps} steps within the {name} reference's tolerance (rms {tol[0]:g}, max {tol[1]:g})",
              first_bad is None,
              f"worst rms {e_rms:.2e}, max {e_max:.2e}" + ("" if first_bad is None else f"; first over at step {first_bad}"))
    L = steps
    for cache in ("k_cache", "v_cache"):
        got, want = getattr(dec.layers[0], cache)[:, :L], getattr(refs["fp32"].layers[0], cache)[:, :L]
        err = (got - want).abs().max().item() / want.abs().max().item()
        check(f"{label}: layer 0's {cache} (no quantized input) within 1e-5", err <= 1e-5, f"{err:.2e}")
    packed = [(i, name, getattr(layer, name).prepared_ops()) for i, layer in enumerate(dec.layers) for name in ("gate_up", "down")]
    check(f"{label}: each MLP Int8Weights packed once over {steps} steps (one prepared op each)",
          all(n == 1 for _, _, n in packed), str(packed))


def main():
    ops = npukit.load_torch()
    try:
        decoder.required_ops()
    except NotImplementedError as e:
        check("the decoder's ops are in torch.ops.npukit", False, str(e))
        return report_checks(checks)

    dec, refs, worst, outs, weights, final_norm = run(layers=1, steps=64, seed=1)
    report_run("1 layer", dec, refs, worst, 64)

    # The tolerances can fail: replay the same tokens through references that are slightly wrong.
    def replay(ref, n):
        worst_ = [0.0, 0.0]
        for pos, (x, y, residual) in enumerate(outs[:n]):
            y_ref, r_ref = ref.step(x, pos)
            for got, want in ((y, y_ref), (residual, r_ref)):
                e = rel(got, want)
                worst_ = [max(worst_[0], e[0]), max(worst_[1], e[1])]
        return worst_

    bad = [decoder.LayerWeights(**vars(w)) for w in weights]
    bad[0].gate_up_scale = bad[0].gate_up_scale.clone()
    bad[0].gate_up_scale[CFG.ffn + 3] *= 1.02
    e = replay(Reference(CFG, bad, final_norm, MAX_SEQ, mlp="emulated"), 16)
    check("a reference with one up channel's scale 2 % off fails the emulated tolerance",
          e[0] > TOL["emulated"][0] or e[1] > TOL["emulated"][1], f"rms {e[0]:.2e}, max {e[1]:.2e}")
    F_ = CFG.ffn
    swapped = [decoder.LayerWeights(**vars(w)) for w in weights]
    swapped[0].w_gate_up = torch.cat((weights[0].w_gate_up[F_:], weights[0].w_gate_up[:F_]))
    swapped[0].gate_up_scale = torch.cat((weights[0].gate_up_scale[F_:], weights[0].gate_up_scale[:F_]))
    e = replay(Reference(CFG, swapped, final_norm, MAX_SEQ), 16)
    check("a reference with gate and up swapped (up first, as some checkpoints stack them) fails the fp32 tolerance",
          e[0] > TOL["fp32"][0] or e[1] > TOL["fp32"][1], f"rms {e[0]:.2e}, max {e[1]:.2e}")

    dec, refs, worst, *_ = run(layers=2, steps=32, seed=11)
    report_run("2 layers", dec, refs, worst, 32)

    # int8 attention projections (Int8Weights; each new pos's prepared op shares the packed
    # copies, npukit_op_create_like): the emulated
    # reference quantizes x and o per token as qkv_attention's int8 path does.
    dec, refs, worst, *_ = run(layers=1, steps=8, seed=21, attn_weights=torch.int8)
    for name, (e_rms, e_max, first_bad) in worst.items():
        check(f"int8 attention projections: 8 steps within the {name} tolerance", first_bad is None,
              f"worst rms {e_rms:.2e}, max {e_max:.2e}")
    check("int8 attention projections: one prepared op per pos", dec.layers[0]._w_qkv.prepared_ops() == 8,
          f"{dec.layers[0]._w_qkv.prepared_ops()} prepared ops")

    # An extension without one of the ops: an error naming it, never a torch substitute.
    real = decoder.load_torch
    decoder.load_torch = lambda: type("Partial", (), {n: getattr(ops, n) for n in ("rms_norm", "qkv_attention_",
                                                                                  "per_token_quant", "int8_gemm")})
    try:
        decoder.Decoder(CFG, [decoder.random_weights(CFG)], torch.ones(CFG.hidden), MAX_SEQ)
        check("a torch.ops.npukit without silu_mul and add_rms_norm_ is refused", False, "no exception")
    except NotImplementedError as e:
        check("a torch.ops.npukit without silu_mul and add_rms_norm_ is refused",
              "add_rms_norm_, silu_mul" in str(e), str(e))
    finally:
        decoder.load_torch = real

    try:
        dec.step(torch.zeros(2, CFG.hidden), 0)
        check("a step of two tokens is refused", False, "no exception")
    except ValueError as e:
        check("a step of two tokens is refused", "[1, hidden]" in str(e), str(e))
    del ops
    return report_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
