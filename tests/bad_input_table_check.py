"""docs/reliability.md's bad-input table is what the kit answers: each row's class has a
probe here, run against `npukit`, whose exit status and message must be the row's (the
row's `exit N` and its quoted fragment); a row answered by a C ABI test names it, and the
test must exist (ctest runs it). A row without a probe, or a probe without a row, fails:
the table cannot drift from the code.

usage: bad_input_table_check.py NPUKIT REPO_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from named_checks import report as report_checks

DOC = "docs/reliability.md"
BEGIN, END = "<!-- bad-input table", "<!-- end bad-input table -->"


def table_rows(root):
    text = open(os.path.join(root, DOC), encoding="utf-8").read()
    body = text[text.index(BEGIN):text.index(END)]
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("class", "") or set(cells[0]) <= {"-"}:
            continue
        rows.append(cells)
    return rows


def probes(d, root):
    """class -> argv after `npukit`, in a directory `d` holding the inputs."""
    preset = open(os.path.join(root, "simulator", "arch", "presets", "edge-6tops.yaml")).read()

    def arch(name, old, new):
        assert old in preset, old
        path = os.path.join(d, name + ".yaml")
        open(path, "w").write(preset.replace(old, new, 1))
        return path

    np.save(os.path.join(d, "x.npy"), np.ones((2, 64), np.float32))
    np.save(os.path.join(d, "w.npy"), np.ones((64,), np.float32))
    np.save(os.path.join(d, "w32.npy"), np.ones((32,), np.float32))
    np.save(os.path.join(d, "deep.npy"), np.ones((1,) * 9, np.float32))
    open(os.path.join(d, "header.npy"), "wb").write(
        b"\x93NUMPY\x01\x00\x20\x00{'descr': '<f4', 'fortran_order' False, }      \n")
    open(os.path.join(d, "binary.yaml"), "wb").write(bytes(range(256)) * 4)
    open(os.path.join(d, "huge.yaml"), "w").write("# " + "x" * (2 << 20) + "\n")
    rms = ["run", "--op", "rms_norm", "--in", "x=x.npy", "--in", "weight=w.npy"]
    gemm = ["sim", "--op", "rms_norm", "--shape", "rows=4,hidden=64", "--arch"]
    return {
        "matrix dim past its limit": gemm + [arch("k0", "int8: {m0: 8, k0: 32", "int8: {m0: 8, k0: 2147483648")],
        "matrix dims whose product wraps": gemm + [arch("m0k0", "int8: {m0: 8, k0: 32", "int8: {m0: 4294967296, k0: 4294967296")],
        "alignment near 2^62": gemm + [arch("align", "alignment: 32, banks: 8", "alignment: 4611686018427387904, banks: 8")],
        "real past its range": gemm + [arch("bw", "bandwidth_gbps: 34.1", "bandwidth_gbps: 1e308")],
        "integer with a leading zero": gemm + [arch("octal", "bytes: 393216,", "bytes: 0100,")],
        "duplicate key in a nested map": gemm + [arch("dup", "fp16: {m0: 8, k0: 16, n0: 2}",
                                                      "fp16: {m0: 8, k0: 16, n0: 2}\n    fp16: {m0: 8, k0: 16, n0: 2}")],
        "spec over 1 MiB": gemm + ["huge.yaml"],
        "binary file as a spec": gemm + ["binary.yaml"],
        "directory as a spec": gemm + [d],
        "unknown preset": gemm + ["nope"],
        "report to a full disk": ["sim", "--op", "rms_norm", "--trace", "/dev/full"],
        "gate report to a full disk": ["gate", "--op", "rms_norm", "--class", "normal", "--junit", "/dev/full"],
        "small output to a full disk": rms + ["--out", "y=/dev/full"],
        "output into a missing directory": rms + ["--out", "y=" + os.path.join(d, "no", "y.npy")],
        "output given twice": rms + ["--out", "y=a.npy", "--out", "y=b.npy"],
        "real parameter that underflows": rms + ["--out", "y=a.npy", "--param", "eps=1e-400"],
        "unknown parameter": rms + ["--out", "y=a.npy", "--param", "foo=1"],
        "device file as a tensor": ["run", "--op", "rms_norm", "--in", "x=/dev/zero", "--in", "weight=w.npy"],
        "malformed .npy header": ["run", "--op", "rms_norm", "--in", "x=header.npy", "--in", "weight=w.npy"],
        "missing file": ["run", "--op", "rms_norm", "--in", "x=nothere.npy", "--in", "weight=w.npy"],
        "missing input": ["run", "--op", "rms_norm", "--in", "x=x.npy"],
        "tensor of 9 dimensions": ["run", "--op", "rms_norm", "--in", "x=deep.npy", "--in", "weight=w.npy"],
        "tensor the op does not take": rms + ["--in", "y=x.npy"],
        "dims that disagree": ["run", "--op", "rms_norm", "--in", "x=x.npy", "--in", "weight=w32.npy"],
        "unknown op": ["run", "--op", "nope"],
        "unknown CPU tier": rms + ["--target", "cpu:avx9", "--out", "y=a.npy"],
        "gpu-cuda without a GPU": rms + ["--target", "gpu-cuda", "--out", "y=a.npy"],
        "shape past int32": ["sim", "--op", "int8_gemm", "--shape", "M=1,K=99999999999999,N=4"],
        "shape that is no integer": ["sim", "--op", "int8_gemm", "--shape", "M=1,K=x"],
        "unknown input class": ["gate", "--op", "rms_norm", "--class", "weird"],
        "gate that runs nothing": ["gate", "--op", "rms_norm", "--target", "npu-sim:edge-6tops", "--class", "normal",
                                   "--dtype", "float32", "--case", "999"],
        "unknown subcommand": ["frobnicate"],
    }


def main():
    npukit, root = sys.argv[1], sys.argv[2]
    tests = "".join(open(os.path.join(root, "tests", f), encoding="utf-8").read()
                    for f in os.listdir(os.path.join(root, "tests")) if f.endswith(".cpp"))
    checks = []
    with tempfile.TemporaryDirectory() as d:
        cli = probes(d, root)
        rows = table_rows(root)
        classes = [r[0] for r in rows]
        named = set(re.findall(r"`(\w+)\.(\w+)`", " ".join(r[2] for r in rows)))
        checks.append(("every CLI probe has its row", sorted(set(cli) - set(classes)) == []))
        checks.append(("no class is listed twice", len(classes) == len(set(classes))))
        for cls, given, answer in rows:
            if cls in cli:
                m = re.match(r"exit (\d+): `([^`]+)`", answer)
                p = subprocess.run([npukit, *cli[cls]], capture_output=True, cwd=d)
                err = p.stderr.decode("utf-8", "replace")
                checks.append((f"{cls}: {answer}", m is not None and p.returncode == int(m.group(1)) and
                               m.group(2) in err and err.count("\n") == 1))
                if not checks[-1][1]:
                    print(f"  {cls}: exit {p.returncode}: {err.strip()[:300]}")
            else:
                tests_named = re.findall(r"`(\w+)\.(\w+)`", answer)
                checks.append((f"{cls}: answered by an existing test {tests_named}",
                               tests_named != [] and all(re.search(rf"TEST(_F)?\({s}, {t}\)", tests)
                                                         for s, t in tests_named)))
        checks.append(("the C ABI rows name tests", bool(named)))
    return report_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
