#!/usr/bin/python3
"""Prints docs/simulator/tuning.md's table: for every op with an NPU schedule, at its decode
and prefill shapes on the given presets, `npukit tune`'s best setting against the schedule's
own choice. Usage: scripts/tuning_table.py build/tools/npukit [--budget-s S] [--strict] [--op OP] [PRESET ...]"""
import json
import re
import subprocess
import sys


def npu_ops(npukit):
    """(op, decode shape, prefill shape) of every op `npukit list` shows an NPU schedule for."""
    out = subprocess.run([npukit, "list"], capture_output=True, text=True, check=True).stdout
    ops, current = [], None
    for line in out.splitlines():
        m = re.match(r"^(\w+): ", line)
        if m:
            current = m.group(1)
        m = re.match(r"^  npu schedule: .*; decode (\S+), prefill (\S+)$", line)
        if m and current:
            ops.append((current, m.group(1), m.group(2)))
    return ops


def main():
    args = sys.argv[1:]
    npukit, budget = args.pop(0), "10"
    strict, only = [], []
    while args[:1] in (["--budget-s"], ["--strict"], ["--op"]):
        if args[0] == "--strict":
            strict, args = ["--strict"], args[1:]
        elif args[0] == "--op":
            only, args = only + [args[1]], args[2:]
        else:
            budget, args = args[1], args[2:]
    presets = args or ["edge-6tops", "ascend-910b-like", "gemmini-default", "vta-default"]
    print("| op | phase | shape | preset | default cycles | tuned cycles | default / tuned | tuned knobs | evaluated |")
    print("|---|---|---|---|---:|---:|---:|---|---:|")
    for op, decode, prefill in npu_ops(npukit):
        if only and op not in only:
            continue
        for phase, shape in (("decode", decode), ("prefill", prefill)):
            for preset in presets:
                r = subprocess.run([npukit, "tune", "--op", op, "--arch", preset, "--shape", shape, "--budget-s", budget,
                                    "--format", "json", "--top", "1", *strict], capture_output=True, text=True)
                if r.returncode not in (0, 1):
                    print(f"| {op} | {phase} | {shape} | {preset} | error: {r.stderr.strip()} | | | | |")
                    continue
                t = json.loads(r.stdout)
                d = t["default"]
                if not t["candidates"]:
                    print(f"| {op} | {phase} | {shape} | {preset} | {d['total_cycles']:,} (breaks a rule) | none valid | | | {t['evaluated']} |")
                    continue
                b = t["candidates"][0]
                knobs = ",".join(f"{k}={v}" for k, v in sorted(b["knobs"].items()))
                ratio = d["total_cycles"] / max(1, b["total_cycles"])
                mark = "" if d["valid"] else " (breaks a rule)"
                print(f"| {op} | {phase} | {shape} | {preset} | {d['total_cycles']:,}{mark} | {b['total_cycles']:,} | "
                      f"{ratio:.3f} | {knobs} | {t['evaluated']} |")


if __name__ == "__main__":
    main()
