"""`npukit sim` and the npu-sim target as a user drives them: reports (JSON keys, a trace
Perfetto can open, a well-formed SVG), exit codes (--strict, bad input), arch files, and
an npu-sim run that agrees with the CPU kernel.

Usage: /usr/bin/python3 sim_cli_check.py PATH/TO/npukit
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

from named_checks import report as report_checks


def run(npukit, *args):
    p = subprocess.run([npukit, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    npukit = sys.argv[1]
    checks = []
    with tempfile.TemporaryDirectory() as d:
        trace, svg = os.path.join(d, "t.json"), os.path.join(d, "r.svg")
        rc, out, err = run(npukit, "sim", "--arch", "edge-6tops", "--op", "int8_gemm", "--shape", "M=1,K=4096,N=4096",
                           "--format", "json", "--trace", trace, "--roofline", svg)
        checks.append(("sim json exit 0 (warnings only)", rc == 0))
        rep = json.loads(out) if rc == 0 else {}
        keys = {"total_cycles", "time_us", "units", "bound", "dram_bytes", "macs", "violations"}
        checks.append(("json has the issue's keys", keys <= rep.keys()))
        units = rep.get("units", {})
        checks.append(("units matrix/vector/dma_in/dma_out/sync with busy_cycles",
                       all("busy_cycles" in units.get(u, {}) for u in ["matrix", "vector", "dma_in", "dma_out", "sync"])))
        checks.append(("GEMV is bandwidth bound", rep.get("bound") == "bandwidth"))
        # Decode's M = 1 on a cube of m0 = 8 pads because of the shape, not the schedule: no warning.
        checks.append(("decode GEMV has no violation (M = 1 < m0 is the shape's padding)", rep.get("violations") == []))
        events = json.load(open(trace))["traceEvents"] if os.path.exists(trace) else []
        names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
        checks.append(("trace: one named track per unit", {"matrix", "vector", "dma_in", "dma_out", "sync"} <= names))
        checks.append(("trace: complete events", any(e.get("ph") == "X" for e in events)))
        root = ET.parse(svg).getroot() if os.path.exists(svg) else None
        checks.append(("roofline is an <svg>", root is not None and root.tag.endswith("svg")))

        # An M tile of 4 over M = 16 on m0 = 8 is the schedule's padding: a warning naming its source line.
        bad_tile = ["sim", "--op", "int8_gemm", "--shape", "M=16,K=4096,N=4096", "--schedule", "tile_m=4"]
        rc, out, err = run(npukit, *bad_tile, "--format", "json")
        rep = json.loads(out) if rc == 0 else {}
        vkeys = {"rule", "op", "func", "loop", "value", "limit", "message", "suggestion", "source"}
        checks.append(("violations carry rule/op/func/loop/value/limit/message/suggestion/source",
                       rep.get("violations") and all(vkeys <= v.keys() for v in rep["violations"])))
        checks.append(("the bad tile's violation points at the schedule's source line",
                       any(v["rule"] == "matrix_tile" and (v.get("source") or {}).get("file") == "schedules/npu/int8_gemm.cpp"
                           and v["source"]["line"] > 0 for v in rep.get("violations", []))))
        rc, out, err = run(npukit, *bad_tile, "--strict")
        checks.append(("--strict turns padding warnings into errors: exit 1",
                       rc == 1 and "error [matrix_tile]" in out and "schedules/npu/int8_gemm.cpp:" in out))
        rc, out, err = run(npukit, "sim", "--op", "int8_gemm", "--shape", "M=1,K=x")
        checks.append(("bad --shape: exit 2 naming it", rc == 2 and "--shape K=x" in err))
        rc, out, err = run(npukit, "sim", "--arch", "nope", "--op", "rms_norm")
        checks.append(("unknown preset: exit 2 listing presets", rc == 2 and "edge-6tops" in err))
        bad = os.path.join(d, "bad.yaml")
        open(bad, "w").write(open(os.path.join(os.path.dirname(__file__), "..", "simulator", "arch", "presets",
                                               "edge-6tops.yaml")).read().replace("alignment: 32, banks: 8", "alignment: 24, banks: 8"))
        rc, out, err = run(npukit, "sim", "--arch", bad, "--op", "rms_norm", "--shape", "rows=4,hidden=64")
        checks.append(("malformed arch file: exit 2 naming key and rule",
                       rc == 2 and "buffers[0].alignment = 24" in err and "power of two" in err))
        # Not a spec at all (issue 15): a directory, a file past the 1 MiB bound, an unknown subcommand.
        rc, out, err = run(npukit, "sim", "--arch", d, "--op", "rms_norm")
        checks.append(("--arch DIRECTORY: exit 2, says it is a directory", rc == 2 and "is a directory" in err))
        huge = os.path.join(d, "huge.yaml")
        open(huge, "w").write("# " + "x" * (2 << 20) + "\n")
        rc, out, err = run(npukit, "sim", "--arch", huge, "--op", "rms_norm")
        checks.append(("--arch over 1 MiB: exit 2 before parsing", rc == 2 and "up to 1 MiB" in err and len(err) < 300))
        # Binary bytes where YAML should be: the echo is one printable UTF-8 line of at most
        # 1024 bytes with its cut marked (runtime/text.h's one_line).
        binary = os.path.join(d, "binary.yaml")
        open(binary, "wb").write(bytes(range(256)) * 4)
        p = subprocess.run([npukit, "sim", "--arch", binary, "--op", "rms_norm"], capture_output=True)
        try:
            text = p.stderr.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        checks.append(("--arch BINARY: exit 2, one line of UTF-8, cut at 1024 bytes and marked",
                       p.returncode == 2 and text is not None and text.count("\n") == 1 and len(p.stderr) < 1100
                       and "bytes cut]" in text and all(c >= " " for c in text.rstrip("\n"))))
        rc, out, err = run(npukit, "frobnicate")
        checks.append(("unknown subcommand: exit 2 naming it and the known ones",
                       rc == 2 and "unknown subcommand 'frobnicate'" in err and "sim" in err))
        rc, out, err = run(npukit, "sim")
        checks.append(("summary table of every simulated op", rc == 0 and "int8_gemm" in out and "rms_norm" in out))

        rng = np.random.default_rng(7)
        np.save(os.path.join(d, "a.npy"), rng.integers(-128, 128, (3, 100), dtype=np.int8))
        np.save(os.path.join(d, "w.npy"), rng.integers(-128, 128, (70, 100), dtype=np.int8))
        outs = {}
        for target in ["cpu", "npu-sim:vta-default", "npu-sim:gemmini-default"]:
            y = os.path.join(d, target.replace(":", "_") + ".npy")
            rc, out, err = run(npukit, "run", "--op", "int8_gemm", "--target", target, "--in",
                               "a=" + os.path.join(d, "a.npy"), "--in", "w=" + os.path.join(d, "w.npy"), "--out", "y=" + y)
            outs[target] = np.load(y) if rc == 0 else None
        want = np.load(os.path.join(d, "a.npy")).astype(np.int64) @ np.load(os.path.join(d, "w.npy")).astype(np.int64).T
        checks.append(("npu-sim runs agree with numpy and cpu",
                       all(o is not None and np.array_equal(o, want) for o in outs.values())))
        # Int8 and float weights over fp16 activations both run on npu-sim and pass: the
        # first normal case of each (the float cases, then the same six with int8 weights);
        # gate_npu_sim_qkv_attention gates them all.
        runs = [run(npukit, "gate", "--op", "qkv_attention", "--target", "npu-sim:edge-6tops", "--class", "normal",
                    "--dtype", "float16", "--verbose", "--case", case) for case in ("0", "6")]
        checks.append(("qkv_attention int8 and float weights with fp16 on npu-sim: PASS",
                       all(rc == 0 and "PASS" in out and "FAIL" not in out and "UNSUPPORTED" not in out
                           for rc, out, err in runs)
                       and "w=int8" not in runs[0][1] and "w=int8" in runs[1][1]))

        # A composite schedule: one row per stage and the total; JSON stages that sum to it,
        # the intermediates' traffic and the fusion saving.
        rc, out, err = run(npukit, "sim", "--op", "qkv_attention", "--dtype", "float32", "--format", "json")
        rep = json.loads(out) if rc in (0, 1) and out.startswith("{") else {}
        stages = rep.get("stages", [])
        checks.append(("qkv_attention json: stages, intermediates, fusion",
                       len(stages) >= 7 and rep.get("intermediates") and "saved_bytes" in rep.get("fusion", {})))
        checks.append(("qkv_attention stages' cycles and DRAM bytes sum to the total",
                       stages and sum(x["total_cycles"] for x in stages) == rep.get("total_cycles")
                       and sum(x["dram_bytes"] for x in stages) == rep.get("dram_bytes")))
        checks.append(("qkv_attention fusion saves no more than the intermediates move",
                       0 <= rep.get("fusion", {}).get("saved_bytes", -1) <= rep.get("fusion", {}).get("intermediate_bytes", -1)))
        rc, out, err = run(npukit, "sim", "--op", "qkv_attention", "--dtype", "float16")
        checks.append(("qkv_attention table: a row per stage and the total",
                       all(label in out for label in ["qkv projection", "rope q", "k -> k_cache", "attention",
                                                      "output projection", "total", "fusion"])))
        rc, out, err = run(npukit, "sim", "--op", "qkv_attention", "--trace", os.path.join(d, "q.json"))
        checks.append(("qkv_attention --trace: exit 2, give a stage's op", rc == 2 and "composite" in err))
        rc, out, err = run(npukit, "sim", "--all")
        checks.append(("sim --all has the qkv_attention total rows", rc in (0, 1) and out.count("qkv_attention") >= 8))
        # Asked for by name and nothing ran: the gate checked nothing, so it must not pass.
        rc, out, err = run(npukit, "gate", "--op", "rms_norm", "--target", "npu-sim:edge-6tops", "--class", "normal",
                           "--dtype", "float32", "--case", "999")
        checks.append(("a named op with no runnable case: exit 2, one line naming op and target",
                       rc == 2 and err.count("\n") == 1 and
                       "--op rms_norm --target npu-sim:edge-6tops: no case ran (none selected)" in err))
    return report_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
