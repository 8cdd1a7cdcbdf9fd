"""`npukit gate --op rms_norm --impl LIB.so:SYMBOL`: kernels npukit did not build, gated as
its own are. The library is tests/external_rms_norm.c: a correct kernel PASSes in every
input class and the reports name it as its target; one off by one fp32 ulp FAILs (exit 1)
against the correct kernel's --json baseline, with a repro line that reproduces it; one
writing past its output is caught by the guards (exit 3); one that crashes is CRASH (exit 3)
while the report goes on; one that leaves its output untouched never PASSes; a library
that crashes while loading is one line and exit 3. tests/external_per_token_quant.c: a
correct int8 quantizer PASSes and one off by one LSB in one element FAILs (exit 1). Bad
--impl arguments are one-line errors, exit 2.

Usage: /usr/bin/python3 gate_external_check.py PATH/TO/npukit PATH/TO/libexternal_rms_norm.so
       PATH/TO/libexternal_per_token_quant.so
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from named_checks import report as report_checks


def main():
    npukit, lib, int8_lib = sys.argv[1], sys.argv[2], sys.argv[3]
    checks = []

    def gate(*args):
        p = subprocess.run([npukit, "gate", "--op", "rms_norm", "--dtype", "float32", *args], capture_output=True, text=True)
        print("$ npukit gate", " ".join(args), "->", p.returncode, "\n", p.stdout[-1500:], p.stderr[-500:])
        return p

    def one_line_error(p, *words):
        return p.returncode == 2 and p.stderr.count("\n") == 1 and all(w in p.stderr for w in words) and not p.stdout

    with tempfile.TemporaryDirectory() as d:
        base, page = os.path.join(d, "base.json"), os.path.join(d, "gate.html")
        p = gate("--impl", f"{lib}:rms_norm_correct", "--target-name", "my_rms_norm", "--json", base, "--report", page)
        rep = json.load(open(base)) if os.path.exists(base) else {"results": []}
        res = rep["results"]
        checks.append(("correct: exit 0, every case PASS", p.returncode == 0 and res and all(r["status"] == "PASS" for r in res)))
        checks.append(("correct: every input class", {r["class"] for r in res} == {"normal", "boundary", "overflow", "nan_inf", "shape"}))
        checks.append(("correct: the reports name it as its target",
                       {r["target"] for r in res} == {"my_rms_norm"} and re.search(r"^op\s+dtype\s+my_rms_norm$", p.stdout, re.M)
                       and 'data-target="my_rms_norm"' in open(page).read()))

        p = subprocess.run([npukit, "gate", "--op", "rms_norm", "--class", "normal", "--impl", f"{lib}:rms_norm_correct"],
                           capture_output=True, text=True)
        checks.append(("correct, float32 only: float16 is UNSUPPORTED as the kernel says, exit 0",
                       p.returncode == 0 and re.search(r"^rms_norm\s+float16\s+UNSUPPORTED \d+$", p.stdout, re.M)
                       and "float32 only" in p.stdout))

        p = gate("--impl", f"{lib}:rms_norm_one_ulp", "--target-name", "my_rms_norm", "--class", "normal", "--baseline", base)
        repros = [l.strip() for l in p.stdout.splitlines() if l.strip().startswith("npukit gate ")]
        checks.append(("one ulp off: exit 1, FAIL against the baseline", p.returncode == 1 and "FAIL" in p.stdout and "max_ulp" in p.stdout))
        checks.append(("one ulp off: repro lines name the library and the baseline",
                       repros and all(f"--impl {lib}:rms_norm_one_ulp --target-name my_rms_norm" in r and "--baseline" in r for r in repros)))
        if repros:
            args = shlex.split(repros[0])[1:]
            q = subprocess.run([npukit, *args], capture_output=True, text=True)
            checks.append(("one ulp off: the repro line reruns one case, which FAILs",
                           q.returncode == 1 and re.search(r"^1 cases: FAIL 1$", q.stdout, re.M) is not None))

        p = gate("--impl", f"{lib}:rms_norm_past_end", "--class", "normal")
        checks.append(("one element past the end: the guards catch it (exit 3)",
                       p.returncode == 3 and "write outside the tensor" in p.stdout and "output y" in p.stdout
                       and "PASS" not in p.stdout.split("not passed:")[0]))

        p = gate("--impl", f"{lib}:rms_norm_crash", "--target", "cpu", "--class", "normal", "--class", "nan_inf")
        checks.append(("crash: exit 3, CRASH per group, and the report goes on to the cpu cases and the totals",
                       p.returncode == 3 and re.search(r"^rms_norm\s+float32\s+PASS \d+ .*\s+CRASH 2$", p.stdout, re.M)
                       and re.search(r"^\d+ cases: CRASH 2 PASS \d+$", p.stdout.splitlines()[-1] if p.stdout else "")))

        p = gate("--impl", f"{lib}:rms_norm_untouched", "--class", "normal", "--json", os.path.join(d, "u.json"))
        u = json.load(open(os.path.join(d, "u.json")))["results"] if p.returncode in (0, 1) else []
        checks.append(("untouched outputs: exit 1, every case FAIL or MISTRUSTED",
                       p.returncode == 1 and u and all(r["status"] in ("FAIL", "MISTRUSTED") for r in u)))
        # A library path with a space: the repro line quotes it, and pasted into a shell it reruns.
        spaced = os.path.join(d, "my kernels", "k.so")
        os.makedirs(os.path.dirname(spaced))
        shutil.copy(lib, spaced)
        p = gate("--impl", f"{spaced}:rms_norm_untouched", "--class", "normal", "--case", "1")
        repro = [l.strip() for l in p.stdout.splitlines() if l.strip().startswith("npukit gate ")]
        q = subprocess.run([npukit, *shlex.split(repro[0])[1:]], capture_output=True, text=True) if repro else None
        checks.append(("a path with a space: the repro line is quoted and reruns the case",
                       p.returncode == 1 and q is not None and q.returncode == 1 and "1 cases: FAIL 1" in q.stdout))

        # An int8 output, bit-exact by contract: one LSB anywhere is a FAIL.
        def gate_quant(symbol):
            p = subprocess.run([npukit, "gate", "--op", "per_token_quant", "--dtype", "float32", "--impl",
                                f"{int8_lib}:{symbol}"], capture_output=True, text=True)
            print("$ npukit gate --op per_token_quant --impl", symbol, "->", p.returncode, "\n", p.stdout[-1500:], p.stderr[-500:])
            return p
        p = gate_quant("per_token_quant_correct")
        checks.append(("int8 correct: exit 0, every case PASS",
                       p.returncode == 0 and re.search(r"^\d+ cases: PASS \d+$", p.stdout.splitlines()[-1] if p.stdout else "")))
        p = gate_quant("per_token_quant_one_lsb")
        checks.append(("int8 one LSB off: exit 1, FAIL on q with its lsb metric and a repro line",
                       p.returncode == 1 and re.search(r"FAIL .*per_token_quant", p.stdout) is not None
                       and "lsb 1" in p.stdout and "--impl " + int8_lib in p.stdout))

        crashing = subprocess.run([npukit, "gate", "--op", "rms_norm", "--impl", f"{lib}:rms_norm_correct"],
                                  capture_output=True, text=True, env={**os.environ, "NPUKIT_TEST_CRASH_ON_LOAD": "1"})
        checks.append(("a library that crashes while loading: exit 3, one line naming it and the signal, nothing gated",
                       crashing.returncode == 3 and len(crashing.stderr.splitlines()) == 1
                       and "ended its process by signal 11" in crashing.stderr and lib in crashing.stderr
                       and "cases:" not in crashing.stdout))

        checks.append(("--impl without ':SYMBOL': one line, exit 2", one_line_error(gate("--impl", lib), "--impl", "PATH.so:SYMBOL")))
        checks.append(("--impl of a missing file: one line, exit 2",
                       one_line_error(gate("--impl", "/nonexistent/k.so:f"), "/nonexistent/k.so", "cannot load")))
        checks.append(("--impl of a missing symbol: one line, exit 2",
                       one_line_error(gate("--impl", f"{lib}:no_such_kernel"), "no_such_kernel", "no symbol")))
        checks.append(("--impl needs one --op: one line, exit 2",
                       one_line_error(subprocess.run([npukit, "gate", "--impl", f"{lib}:rms_norm_correct"], capture_output=True, text=True),
                                      "--impl", "exactly one --op")))
        checks.append(("--target-name of a built-in target: one line, exit 2",
                       one_line_error(gate("--impl", f"{lib}:rms_norm_correct", "--target-name", "cpu"), "--target-name cpu", "built-in")))
        checks.append(("--target-name with a ':': one line, exit 2",
                       one_line_error(gate("--impl", f"{lib}:rms_norm_correct", "--target-name", "a:b"), "--target-name a:b")))
        checks.append(("--target-name without --impl: one line, exit 2",
                       one_line_error(gate("--target-name", "mine"), "--target-name mine", "--impl")))
    return report_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
