"""`npukit gate --junit` as CI uses it: exit 0, valid JUnit XML with one suite per op,
every case present, and a JSON report that agrees with it.

Usage: /usr/bin/python3 gate_junit_check.py PATH/TO/npukit
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from named_checks import report as report_checks


def main():
    npukit = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        xml_path, json_path = os.path.join(d, "out.xml"), os.path.join(d, "out.json")
        p = subprocess.run([npukit, "gate", "--op", "rms_norm", "--target", "cpu", "--junit", xml_path,
                            "--json", json_path], capture_output=True, text=True)
        print(p.stdout[-2000:], p.stderr[-2000:])
        checks = []
        checks.append(("exit code 0", p.returncode == 0))
        root = ET.parse(xml_path).getroot()
        suites = root.findall("testsuite")
        checks.append(("root is <testsuites>", root.tag == "testsuites"))
        checks.append(("one suite, rms_norm", [s.get("name") for s in suites] == ["rms_norm"]))
        cases = suites[0].findall("testcase") if suites else []
        report = json.load(open(json_path))
        checks.append(("as many testcases as JSON results", len(cases) == len(report["results"]) > 0))
        checks.append(("no failures in XML", suites and suites[0].get("failures") == "0" and suites[0].get("errors") == "0"))
        classes = {r["class"] for r in report["results"]}
        checks.append(("all five input classes", classes == {"normal", "boundary", "overflow", "nan_inf", "shape"}))
        dtypes = {r["dtype"] for r in report["results"]}
        checks.append(("both dtypes", dtypes == {"float32", "float16"}))
        checks.append(("every case PASS", all(r["status"] == "PASS" for r in report["results"])))
        # A report that cannot be written is an error (a small one fails only when flushed).
        for flag in ("--json", "--junit"):
            p = subprocess.run([npukit, "gate", "--op", "rms_norm", "--target", "cpu", flag, "/dev/full"],
                               capture_output=True, text=True)
            checks.append((f"{flag} /dev/full: exit 2 naming the path",
                           p.returncode == 2 and "/dev/full" in p.stderr and p.stderr.count("\n") == 1))
        return report_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
