"""Running a Google Benchmark binary from the torch comparison scripts: their command
line, the medians of the binary's runs (seconds and counters), and human-readable times."""
import json
import os
import subprocess
import sys


def command_line(usage):
    """(bench binary, quick, threads) from `SCRIPT BENCH [--quick]` and HL_NUM_THREADS
    (default 2, the thread count both sides run on); exits with `usage` without a binary."""
    if len(sys.argv) < 2:
        sys.exit(usage)
    return sys.argv[1], "--quick" in sys.argv[2:], int(os.environ.get("HL_NUM_THREADS", "2"))


_printed_context = False


def print_context(context):
    """The machine and the CPU tier of each op, as the bench binary printed them
    (bench/machine_context.cpp; in its JSON's context): once per script, so that numbers
    from different machines are not mixed up."""
    global _printed_context
    if not _printed_context:
        for key in ("cpu", "cpu_features", "dispatched_tiers"):
            print(f"{key}: {context.get(key, 'not reported')}", flush=True)
        _printed_context = True


def median_runs(bench, benchmark_filter, repetitions, threads, quick):
    """[(run_name, median seconds, the benchmark's JSON)] for runs matching the filter;
    prints the binary's machine context the first time."""
    cmd = [bench, "--benchmark_format=json", f"--benchmark_filter={benchmark_filter}",
           f"--benchmark_repetitions={2 if quick else repetitions}", "--benchmark_report_aggregates_only=true"]
    if quick:
        cmd.append("--benchmark_min_time=0.001")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=dict(os.environ, HL_NUM_THREADS=str(threads))).stdout
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    report = json.loads(out)
    print_context(report.get("context", {}))
    runs = []
    for b in report["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        runs.append((b["run_name"], b["real_time"] * scale[b["time_unit"]], b))
    return runs


def fmt(seconds):
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= f:
            return f"{seconds / f:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
