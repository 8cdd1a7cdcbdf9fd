"""The Python cross-checks' report: one line per named check, a total, and the exit code."""


def report(checks):
    """Prints `ok`/`FAIL` per (name, passed) pair and the totals; 1 if any failed, else 0."""
    for name, ok in checks:
        print(("ok   " if ok else "FAIL ") + name)
    failed = sum(not ok for _, ok in checks)
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0
