#!/usr/bin/env python3
"""Writes corpus/arch_spec/limit-<key>.yaml: the edge-6tops preset with one numeric key at
the extreme its rule allows (docs/simulator/arch-spec.md), so that the fuzzer starts at
every key's limit and mutates from there. Run again when a key or a limit changes."""
import pathlib
import re

here = pathlib.Path(__file__).resolve().parent
preset = (here / "../../simulator/arch/presets/edge-6tops.yaml").read_text()
INTEGER_MAX = str(2**40)   # "integer": at most 2^40 in magnitude
NUMBER_MAX = "1e9"         # "number": at most 1e9 in magnitude
EXTENT_MAX = "65536"       # matrix extents
# key -> the largest value its rule allows; numbers also get their smallest positive one.
limits = {
    "clock_ghz": [NUMBER_MAX, "1e-300"], "cores": [INTEGER_MAX],
    "m0": [EXTENT_MAX], "k0": [EXTENT_MAX], "n0": [EXTENT_MAX],
    "bytes_per_cycle": [NUMBER_MAX, "1e-300"], "add": [NUMBER_MAX], "exp": [NUMBER_MAX, "1e-300"],
    "bytes": [INTEGER_MAX], "alignment": [str(2**40)], "banks": [INTEGER_MAX],
    "setup_cycles": [INTEGER_MAX], "burst_bytes": [INTEGER_MAX, "1"],
    "bandwidth_gbps": [NUMBER_MAX, "1e-300"], "latency_ns": [NUMBER_MAX],
}
out = here / "corpus/arch_spec"
for key, values in limits.items():
    for i, value in enumerate(values):
        # Every occurrence of the key (all shapes, buffers or engines at once).
        text = re.sub(r"(\b%s:\s*)[0-9.e+-]+" % key, lambda m: m.group(1) + value, preset)
        assert text != preset, key
        (out / f"limit-{key}-{i}.yaml").write_text(text)
