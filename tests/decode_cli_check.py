"""`npukit decode` as a user drives it: the JSON keys issue 17 asks for, the SVG, and
refused input (exit 2, one line naming the argument, the value and the rule; never a
crash). One small plan (a 2-layer config.json) keeps it to about two seconds: every
refusal comes before any simulation. The table is checked in decode_plan_test, in process.

Usage: /usr/bin/python3 decode_cli_check.py PATH/TO/npukit
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from named_checks import report as report_checks

TINY = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 1024, "max_position_embeddings": 128}


def run(npukit, *args):
    p = subprocess.run([npukit, "decode", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def refused(rc, err, *words):
    one_line = err.count("\n") == 1 and err.startswith("npukit: ")
    return rc == 2 and one_line and all(w in err for w in words)


def main():
    npukit = sys.argv[1]
    checks = []
    with tempfile.TemporaryDirectory() as d:
        tiny = os.path.join(d, "config.json")
        json.dump(TINY, open(tiny, "w"))
        svg = os.path.join(d, "plan.svg")
        rc, out, err = run(npukit, "--model", tiny, "--context", "32", "--prompt", "4", "--batch", "2", "--format", "json",
                           "--svg", svg)
        j = json.loads(out) if rc == 0 else {}
        checks.append(("json plan: exit 0", rc == 0))
        checks.append(("json has tokens_per_s, token_time_us, prefill_time_us, ops, memory, fallback",
                       {"tokens_per_s", "token_time_us", "prefill_time_us", "ops", "memory", "fallback"} <= j.keys()))
        ops = j.get("ops", [])
        checks.append(("every op has time_us, bound, share", ops and all({"time_us", "bound", "share"} <= o.keys() for o in ops)))
        checks.append(("shares add up to 1", abs(sum(o.get("share", 0) for o in ops) - 1) < 1e-9))
        checks.append(("tokens/s = batch / step time", abs(j.get("tokens_per_s", 0) * j.get("token_time_us", 0) / 1e6 - 2) < 1e-9))
        mem = j.get("memory", {})
        checks.append(("memory: weights, kv_cache, activations, capacity, max_context, max_batch",
                       {"weights", "kv_cache", "activations", "capacity", "max_context", "max_batch"} <= mem.keys()))
        # 2 layers x 2 x 2 kv heads x 64 x 2 B per position; 32 positions in 2 blocks of 16, 2 sequences.
        checks.append(("kv cache: layers x 2 x kv_heads x head_dim x bytes x context x batch",
                       mem.get("kv_cache") == 2 * 2 * 2 * 64 * 2 * 32 * 2 and mem.get("kv_blocks") == 4))
        checks.append(("max_context is capped by max_position_embeddings", mem.get("max_context") == 128))
        checks.append(("fallback: time and byte shares", {"time_share", "byte_share"} <= j.get("fallback", {}).keys()))
        root = ET.parse(svg).getroot() if os.path.exists(svg) else None
        groups = {g.get("id"): g for g in root.iter("{http://www.w3.org/2000/svg}g")} if root is not None else {}
        checks.append(("--svg: an <svg> with the time bar (a rect per op) and the memory bar",
                       root is not None and root.tag.endswith("svg") and "time" in groups and "memory" in groups and
                       len(groups["time"].findall("{http://www.w3.org/2000/svg}rect")) == len([o for o in ops if o["time_us"] > 0])))
        # Each bar's rects are sized by their values: together they fill its width (880).
        widths = {k: [float(r.get("width")) for r in groups[k].findall("{http://www.w3.org/2000/svg}rect")]
                  for k in ("time", "memory") if k in groups}
        checks.append(("--svg: the bars' rects have widths that fill the bar",
                       len(widths) == 2 and all(w and min(w) >= 0 and abs(sum(w) - 880) < 2 for w in widths.values())))
        checks.append(("prefill ran", j.get("prefill_time_us", 0) > 0 and len(j.get("prefill_ops", [])) == len(ops)))

        bad = os.path.join(d, "bad.json")
        open(bad, "w").write(json.dumps({**TINY, "num_key_value_heads": 3}))
        cases = [
            (["--model", tiny, "--weights", "int3"], ["--weights int3", "fp16, int8 or int4"]),
            (["--model", tiny, "--kv", "fp8"], ["--kv fp8", "fp16 or int8"]),
            (["--model", tiny, "--context", "0"], ["--context 0", "[1, 128]"]),
            (["--model", tiny, "--context", "129"], ["--context 129", "max_position_embeddings is 128"]),
            (["--model", tiny, "--context", "16", "--prompt", "17"], ["--prompt 17", "part of the context"]),
            (["--model", tiny, "--batch", "0"], ["--batch 0"]),
            (["--model", tiny, "--kv-block", "0"], ["--kv-block 0"]),
            (["--model", tiny, "--format", "xml"], ["--format xml"]),
            (["--model", tiny, "--context", "16", "--prompt", "0", "--svg", os.path.join(d, "no", "x.svg")],
             ["--svg", "cannot open"]),
            (["--model", "llama-3-8"], ["--model", "did you mean llama-3-8b?"]),
            (["--model", os.path.join(d, "none.json")], ["--model", "none.json: cannot read"]),
            (["--model", bad], ["num_key_value_heads = 3", "must divide num_attention_heads = 4"]),
            (["--model", tiny, "--arch", "edge-6top"], ["--arch", "did you mean edge-6tops?"]),
            (["--model", "llama-2-7b", "--arch", "vta-default", "--context", "64", "--prompt", "0"],
             ["memory plan:", "exceeds vta-default's dram.bytes = 536.9 MB by"]),
        ]
        for args, words in cases:
            rc, out, err = run(npukit, *args)
            checks.append((f"refused: {' '.join(args[2:]) or args[1]} (exit 2, one line)", refused(rc, err, *words)))
        rc, out, err = run(npukit, "--model", tiny, "--context", "99999999999999999999999")
        checks.append(("an integer beyond int64 is refused by its text (exit 2), not saturated",
                       refused(rc, err, "--context 99999999999999999999999: must be an integer below 2^63")))

    return report_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
