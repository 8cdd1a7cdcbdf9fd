"""`npukit gate --report gate.html` and the default matrix report, with a doctored failure:
a --baseline in which one case of rms_norm float32 on cpu had no error at all makes that
case a regression (FAIL), while the rest of rms_norm and silu_mul pass. The page must be one
self-contained HTML document whose matrix shows the failing cell red with its status, and
whose failures table holds each failing case's repro line.

Usage: /usr/bin/python3 gate_html_check.py PATH/TO/npukit
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

from named_checks import report as report_checks


class Page(HTMLParser):
    """Collects the cells (tds with data-op) and the failure rows with their repro text."""

    def __init__(self):
        super().__init__()
        self.cells, self.failures, self.assets, self.tags = [], [], [], []
        self._row, self._in_repro = None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag in ("script", "link", "img", "iframe") or "src" in a or "href" in a:
            self.assets.append((tag, a))
        if tag == "td" and "data-op" in a:
            self.cells.append(a)
        if tag == "tr" and a.get("class") == "failure":
            self._row = {"status": a.get("data-status"), "repro": ""}
            self.failures.append(self._row)
        if tag == "code" and a.get("class") == "repro":
            self._in_repro = True

    def handle_endtag(self, tag):
        if tag == "code":
            self._in_repro = False

    def handle_data(self, data):
        if self._in_repro and self._row is not None:
            self._row["repro"] += data


def gate(npukit, *args):
    return subprocess.run([npukit, "gate", "--target", "cpu", "--class", "normal", *args], capture_output=True, text=True)


def main():
    npukit = sys.argv[1]
    checks = []
    with tempfile.TemporaryDirectory() as d:
        base, page = os.path.join(d, "base.json"), os.path.join(d, "gate.html")
        p = gate(npukit, "--op", "rms_norm", "--dtype", "float32", "--json", base)
        checks.append(("baseline run passes", p.returncode == 0))
        doctored = json.load(open(base))
        for r in (r for r in doctored["results"] if r["case"] == 2):
            for o in r["outputs"]:
                for k in ("max_abs", "max_rel", "nmse"):
                    o["metrics"][k] = 0.0
        json.dump(doctored, open(base, "w"))
        p = gate(npukit, "--op", "rms_norm", "--op", "silu_mul", "--dtype", "float32", "--baseline", base,
                 "--report", page)
        print(p.stdout[-3000:], p.stderr[-2000:])
        checks.append(("doctored run: exit 1", p.returncode == 1))
        text = open(page, encoding="utf-8").read()
        parser = Page()
        parser.feed(text)
        checks.append(("one <html> document", text.startswith("<!DOCTYPE html>") and parser.tags.count("html") == 1))
        checks.append(("no external assets (scripts, links, images, url())",
                       not parser.assets and "url(" not in text and "@import" not in text))
        matrix = {(c["data-op"], c["data-dtype"], c["data-target"]): c for c in parser.cells if "data-class" not in c}
        bad, good = matrix.get(("rms_norm", "float32", "cpu")), matrix.get(("silu_mul", "float32", "cpu"))
        checks.append(("matrix: rms_norm float32 cpu is FAIL and red",
                       bad is not None and bad["data-status"] == "FAIL" and "#f3a0a0" in bad["style"]))
        checks.append(("matrix: silu_mul float32 cpu is PASS, within its limit",
                       good is not None and good["data-status"] == "PASS" and 0 <= float(good["data-fraction"]) <= 1))
        per_class = [c for c in parser.cells if c.get("data-class") == "normal" and c["data-op"] == "rms_norm"]
        checks.append(("per-class detail: rms_norm normal FAIL", len(per_class) == 1 and per_class[0]["data-status"] == "FAIL"))
        repros = [f["repro"] for f in parser.failures]
        checks.append(("failures: the failing case with its repro line",
                       repros == ["npukit gate --op rms_norm --target cpu --dtype float32 --class normal --case 2 --baseline " + base]))
        # The default text report: the matrix, each failure with its repro line, the totals.
        out = p.stdout.splitlines()
        checks.append(("text: a matrix line per op x dtype",
                       any(re.match(r"rms_norm\s+float32\s+PASS 5 FAIL 1\s+max_", l) for l in out)
                       and any(re.match(r"silu_mul\s+float32\s+PASS \d+\s+max_", l) for l in out)))
        checks.append(("text: repro lines of the failures", sum(l.strip() in repros for l in out) == len(repros)))
        checks.append(("text: the totals last", re.match(r"\d+ cases: ", out[-1] if out else "") is not None))
        v = gate(npukit, "--op", "silu_mul", "--dtype", "float32", "--verbose")
        checks.append(("--verbose: one row per case", v.returncode == 0 and
                       sum(bool(re.match(r"silu_mul\s+cpu\s+float32\s+normal\s+\d+ .*PASS", l)) for l in v.stdout.splitlines())
                       == int(re.search(r"(\d+) cases:", v.stdout).group(1))))
        p = gate(npukit, "--op", "silu_mul", "--dtype", "float32", "--report", "/dev/full")
        checks.append(("--report /dev/full: exit 2 naming the path",
                       p.returncode == 2 and "/dev/full" in p.stderr and p.stderr.count("\n") == 1))
        p = gate(npukit, "--op", "silu_mul", "--dtype", "float32", "--report", os.path.join(d, "no/such/dir.html"))
        checks.append(("--report in a missing directory: exit 2 naming the path",
                       p.returncode == 2 and "no/such/dir.html" in p.stderr and p.stderr.count("\n") == 1))
    return report_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
