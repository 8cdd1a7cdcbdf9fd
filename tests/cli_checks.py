"""What the `npukit <subcommand>` end-to-end checks share: failed checks collected as they
happen, a run of the CLI, and the refusal contract (exit 2, one line of error, naming what
was refused)."""
import subprocess

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run_npukit(binary, args, timeout=120, cwd=None):
    """(exit code, stdout, stderr) of `binary args...`."""
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def subcommand(name, timeout=120):
    """run(binary, args[, cwd]) and refused(binary, args, needle, what) for `npukit <name> args...`;
    a tuple needle: every part must be in the message (one that names a file, a key and a rule)."""
    def run(binary, args, cwd=None):
        return run_npukit(binary, [name] + args, timeout, cwd)

    def refused(binary, args, needle, what):
        rc, _, err = run(binary, args)
        if isinstance(needle, tuple):
            for part in needle[1:]:
                check(part in err, f"{what}: '{part}' not in {err.strip()!r}")
            needle = needle[0]
        lines = err.strip().splitlines()
        check(rc == 2, f"{what}: exit {rc}, expected 2 ({err.strip()})")
        check(len(lines) == 1, f"{what}: {len(lines)} lines of error, expected 1: {err!r}")
        check(needle in err, f"{what}: '{needle}' not in {err.strip()!r}")

    return run, refused


def finish(passed_message):
    """The exit code: 1 with the count of failed checks, else 0 with `passed_message`."""
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print(passed_message)
    return 0
